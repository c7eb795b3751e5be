//! The threads of one input: a reader that splits the (decompressed) stream into
//! chunks, parse workers that turn chunks into [`ChunkResult`]s, and the calling
//! thread, which receives the results in input order (to merge them while the
//! workers parse the next chunks).
//!
//! Memory stays bounded: the reader fills one of a few recycled buffers, and a
//! buffer comes back only once the caller has consumed its chunk, so at most
//! [`buffers_for`] chunks are in flight whatever the input size. A mapped file
//! is split without copying, with as many chunks in flight, and the pages of
//! consumed chunks are handed back.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use memmap2::UncheckedAdvice;

use super::IngestError;
use super::chunk::{ChunkContext, ChunkResult, parse_chunk};
use super::lines::{CHUNK_BYTES, ChunkData, MapSplitter, Piece, Splitter};
use super::record::{LineParser, SkipReason};
use super::source::Data;

/// How many chunk buffers circulate for `threads` workers.
pub fn buffers_for(threads: usize) -> usize {
    threads * 2 + 2
}

/// The pieces not yet handed to a worker, numbered in input order.
struct Queue {
    /// Pieces read before the workers started (to choose the parser).
    prelude: VecDeque<io::Result<Piece>>,
    pieces: Receiver<io::Result<Piece>>,
    next_seq: usize,
}

impl Queue {
    fn next(&mut self) -> Option<(usize, io::Result<Piece>)> {
        let piece = match self.prelude.pop_front() {
            Some(piece) => piece,
            None => self.pieces.recv().ok()?,
        };
        self.next_seq += 1;
        Some((self.next_seq - 1, piece))
    }
}

/// A parsed chunk with the bytes it was parsed from, or a read error.
type Parsed = (io::Result<ChunkResult>, Option<ChunkData>);

/// Reads `data` and calls `consume` with every chunk's result in input order.
/// Line numbers in a result count from 1 at its first line; the caller shifts
/// them with [`ChunkResult::renumber`]. The bytes of a mapped input are added to
/// `mapped_bytes` as they are consumed (a stream counts its own).
///
/// `choose` picks the parser from the first pieces (up to the first chunk of
/// lines). An error from `choose` or `consume` stops every thread and is returned.
pub fn run(
    data: Data,
    mapped_bytes: &AtomicU64,
    ctx: &ChunkContext<'_>,
    choose: impl FnOnce(&[io::Result<Piece>]) -> Result<Box<dyn LineParser>, IngestError>,
    consume: impl FnMut(io::Result<ChunkResult>) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    run_in_chunks(data, CHUNK_BYTES, mapped_bytes, ctx, choose, consume)
}

/// [`run`] with chunks of about `chunk_bytes`.
pub fn run_in_chunks(
    data: Data,
    chunk_bytes: usize,
    mapped_bytes: &AtomicU64,
    ctx: &ChunkContext<'_>,
    choose: impl FnOnce(&[io::Result<Piece>]) -> Result<Box<dyn LineParser>, IngestError>,
    mut consume: impl FnMut(io::Result<ChunkResult>) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let threads = rayon::current_num_threads().max(1);
    let (piece_tx, piece_rx) = sync_channel::<io::Result<Piece>>(threads);
    let (recycle_tx, recycle_rx) = channel::<Vec<u8>>();
    // Mapped chunks in flight are bounded as read buffers are: one permit each.
    let (permit_tx, permit_rx) = channel::<()>();
    for _ in 0..buffers_for(threads) {
        permit_tx.send(()).expect("the receiver is alive");
    }
    let pieces: Box<dyn Iterator<Item = io::Result<Piece>> + Send> = match data {
        Data::Stream(reader) => {
            let mut created = 0;
            let max_buffers = buffers_for(threads);
            let buffers = move || {
                if let Ok(buffer) = recycle_rx.try_recv() {
                    return Some(buffer);
                }
                if created < max_buffers {
                    created += 1;
                    return Some(Vec::new());
                }
                recycle_rx.recv().ok()
            };
            Box::new(Splitter::with_chunk_size(reader, chunk_bytes).with_buffers(Box::new(buffers)))
        }
        Data::Mapped(map) => Box::new(MapSplitter::new(map, chunk_bytes)),
    };
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for piece in pieces {
                let mapped = matches!(
                    piece,
                    Ok(Piece::Lines {
                        data: ChunkData::Mapped { .. }
                    })
                );
                if (mapped && permit_rx.recv().is_err()) || piece_tx.send(piece).is_err() {
                    break;
                }
            }
        });
        let mut prelude = VecDeque::new();
        while let Ok(piece) = piece_rx.recv() {
            let decisive = !matches!(piece, Ok(Piece::TooLong { .. }));
            prelude.push_back(piece);
            if decisive {
                break;
            }
        }
        let parser: Arc<dyn LineParser> = Arc::from(choose(prelude.make_contiguous())?);
        let queue = Arc::new(Mutex::new(Queue {
            prelude,
            pieces: piece_rx,
            next_seq: 0,
        }));
        let (result_tx, result_rx) = channel::<(usize, Parsed)>();
        for _ in 0..threads {
            let (queue, results, parser) = (queue.clone(), result_tx.clone(), parser.clone());
            scope.spawn(move || work(&queue, &*parser, ctx, &results));
        }
        drop((queue, result_tx)); // the workers hold the only handles now
        let mut done = Done {
            recycle: recycle_tx,
            permits: permit_tx,
            mapped_bytes,
            released: 0,
        };
        in_order(&result_rx, &mut done, &mut consume)
    })
}

/// A worker: parses pieces until there are none or nobody wants the results.
fn work(
    queue: &Mutex<Queue>,
    parser: &dyn LineParser,
    ctx: &ChunkContext<'_>,
    results: &Sender<(usize, Parsed)>,
) {
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
        let Some((seq, piece)) = next else { return };
        let parsed = match piece {
            Ok(Piece::Lines { data }) => {
                let chunk = parse_chunk(&data, 1, parser.fork().as_mut(), ctx);
                (Ok(chunk), Some(data))
            }
            Ok(Piece::TooLong { .. }) => {
                let mut chunk = ChunkResult {
                    lines: 1,
                    ..ChunkResult::default()
                };
                chunk.skip(1, SkipReason::TooLong);
                (Ok(chunk), None)
            }
            Err(e) => (Err(e), None),
        };
        if results.send((seq, parsed)).is_err() {
            return;
        }
    }
}

/// What happens to a chunk's bytes once its result is consumed.
struct Done<'a> {
    /// Read buffers go back to the reader.
    recycle: Sender<Vec<u8>>,
    /// So do the permits of mapped chunks.
    permits: Sender<()>,
    mapped_bytes: &'a AtomicU64,
    /// Mapped bytes before this offset were handed back to the page cache.
    released: usize,
}

/// Pages of a mapped file are handed back in steps of this many bytes (a multiple
/// of the page size).
const RELEASE_STEP: usize = 1 << 16;

impl Done<'_> {
    fn finish(&mut self, data: ChunkData) {
        match data {
            ChunkData::Owned(buffer) => {
                let _ = self.recycle.send(buffer); // the reader may have finished
            }
            ChunkData::Mapped { map, range } => {
                let _ = self.permits.send(()); // the reader may have finished
                self.mapped_bytes
                    .fetch_add(range.len() as u64, Ordering::Relaxed);
                // Whole pages before the end of this chunk are no longer read:
                // dropping them from this process keeps its resident memory to
                // the chunks in flight (the page cache keeps them).
                let end = range.end / RELEASE_STEP * RELEASE_STEP;
                if end > self.released {
                    // SAFETY: a read-only file mapping; every chunk that
                    // borrowed these bytes has been consumed, and were any still
                    // read, the kernel would read the file's bytes back in.
                    let _ = unsafe {
                        map.unchecked_advise_range(
                            UncheckedAdvice::DontNeed,
                            self.released,
                            end - self.released,
                        )
                    };
                    self.released = end;
                }
            }
        }
    }
}

/// Hands results to `consume` in input order, then lets go of their bytes.
fn in_order(
    results: &Receiver<(usize, Parsed)>,
    done: &mut Done<'_>,
    consume: &mut impl FnMut(io::Result<ChunkResult>) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let mut waiting: BTreeMap<usize, Parsed> = BTreeMap::new();
    let mut next = 0;
    while let Ok((seq, parsed)) = results.recv() {
        waiting.insert(seq, parsed);
        while let Some((result, data)) = waiting.remove(&next) {
            next += 1;
            consume(result)?;
            if let Some(data) = data {
                done.finish(data);
            }
        }
    }
    debug_assert!(waiting.is_empty(), "every chunk is consumed in order");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::KeptPaths;
    use crate::ingest::combined::CombinedParser;
    use crate::ingest::key::{KeySet, KeySpec};
    use crate::ingest::record::SkipReason;

    /// Every chunk size and thread count gives each event the same endpoint
    /// and path, on targets that share request-cache entries within a chunk
    /// (ids after a common prefix, queries, nested ids) and on distinct ones.
    #[test]
    fn endpoints_and_paths_do_not_depend_on_chunks_or_threads() {
        let targets = [
            "/api/users/{n}",
            "/api/users/{n}?page=2",
            "/api/orders/{n}/items/{n}",
            "/blog/post-{n}",
            "/static/app.{n}.js",
            "/api/users",
            "/v/{n}abcdefghijklmnopqrstuv",
        ];
        let mut text = String::new();
        for i in 0..400 {
            let target = targets[i % targets.len()].replace("{n}", &(i * 7 % 23).to_string());
            let method = ["GET", "POST"][i % 3 % 2];
            text.push_str(&format!(
                "10.0.0.{} - - [10/Oct/2000:13:55:36 +0000] \"{method} {target} HTTP/1.1\" 200 1\n",
                i % 5
            ));
        }
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let ctx = ChunkContext {
            keys: &keys,
            routes: &[],
            paths: KeptPaths::All,
        };
        let mut seen = Vec::new();
        for chunk_bytes in [256, 1000, 1 << 20] {
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let mut named = Vec::new();
                pool.install(|| {
                    run_in_chunks(
                        Data::Stream(Box::new(io::Cursor::new(text.clone().into_bytes()))),
                        chunk_bytes,
                        &AtomicU64::new(0),
                        &ctx,
                        |_| Ok(Box::new(CombinedParser::new(&[]).unwrap())),
                        |chunk| {
                            let chunk = chunk.unwrap();
                            named.extend(chunk.events.iter().map(|e| {
                                (
                                    chunk.endpoints.name(e.endpoint).to_string(),
                                    chunk.paths.name(e.path).to_string(),
                                )
                            }));
                            Ok(())
                        },
                    )
                })
                .unwrap();
                seen.push(named);
            }
        }
        assert_eq!(seen[0].len(), 400);
        assert_eq!(
            seen[0][2],
            (
                "GET /api/orders/:id/items/:id".to_string(),
                "/api/orders/14/items/14".to_string()
            )
        );
        assert!(seen.iter().all(|named| *named == seen[0]));
    }

    /// Every chunk size, thread count and source (stream or mapped file) gives
    /// the same counts and the same line numbers.
    #[test]
    fn line_numbers_run_across_chunks_and_threads() {
        let good = "1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1";
        let mut text = String::new();
        for i in 1..=300 {
            match i % 37 {
                0 => text.push_str("bad line"),
                5 => text.push_str(&"x".repeat(700)), // longer than the smallest chunks
                _ => text.push_str(good),
            }
            text.push('\n');
        }
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let ctx = ChunkContext {
            keys: &keys,
            routes: &[],
            paths: KeptPaths::All,
        };
        let mut seen = Vec::new();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
        // SAFETY: a private temporary file nothing else writes.
        let map = Arc::new(unsafe { memmap2::Mmap::map(file.as_file()) }.unwrap());
        for chunk_bytes in [256, 1000, 1 << 20] {
            for source in 0..4 {
                let (threads, mapped) = (1 + 2 * (source % 2), source >= 2);
                let data = if mapped {
                    Data::Mapped(map.clone())
                } else {
                    Data::Stream(Box::new(io::Cursor::new(text.clone().into_bytes())))
                };
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                let (mut lines, mut parsed, mut skipped) = (0, 0, Vec::new());
                pool.install(|| {
                    run_in_chunks(
                        data,
                        chunk_bytes,
                        &AtomicU64::new(0),
                        &ctx,
                        |_| Ok(Box::new(CombinedParser::new(&[]).unwrap())),
                        |chunk| {
                            let mut chunk = chunk.unwrap();
                            chunk.renumber(lines);
                            lines += chunk.lines;
                            parsed += chunk.parsed;
                            skipped.extend(chunk.examples);
                            Ok(())
                        },
                    )
                })
                .unwrap();
                seen.push((lines, parsed, skipped));
            }
        }
        let bad: Vec<u64> = (1..=300).filter(|i| matches!(i % 37, 0 | 5)).collect();
        for (i, (lines, parsed, skipped)) in seen.iter().enumerate() {
            assert_eq!((*lines, *parsed), (300, 300 - bad.len() as u64));
            let numbers: Vec<u64> = skipped.iter().map(|s| s.0).collect();
            // At most 5 examples per chunk are kept: one chunk keeps the first 5.
            let expected = if i < 8 { &bad[..] } else { &bad[..5] };
            assert_eq!(numbers, expected, "chunk size #{}", i / 4);
            let too_long = skipped
                .iter()
                .filter(|s| s.1 == SkipReason::TooLong)
                .count();
            assert_eq!(too_long, if i < 4 { bad.len() / 2 } else { 0 });
        }
    }
}
