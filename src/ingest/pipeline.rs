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
        // Lines that depend on the lines before them: one worker, in order.
        let workers = if parser.in_order() { 1 } else { threads };
        for _ in 0..workers {
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

/// A worker: parses pieces until there are none or nobody wants the results,
/// each with a fresh fork of `parser`, or all with one when it parses
/// [`LineParser::in_order`] (the only worker then).
fn work(
    queue: &Mutex<Queue>,
    parser: &dyn LineParser,
    ctx: &ChunkContext<'_>,
    results: &Sender<(usize, Parsed)>,
) {
    let mut in_order = parser.in_order().then(|| parser.fork());
    loop {
        let next = queue.lock().unwrap_or_else(PoisonError::into_inner).next();
        let Some((seq, piece)) = next else { return };
        let parsed = match piece {
            Ok(Piece::Lines { data }) => {
                let chunk = match &mut in_order {
                    Some(parser) => parse_chunk(&data, 1, parser.as_mut(), ctx),
                    None => parse_chunk(&data, 1, parser.fork().as_mut(), ctx),
                };
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

/// [`run_in_chunks`] over `data` on a pool of `threads`, with chunks of
/// about `chunk_bytes`, the client keyed by `ip`, every path kept and
/// `parser` chosen: `consume` gets each chunk's result in input order.
#[cfg(test)]
pub(crate) fn chunks_on_threads(
    data: Data,
    chunk_bytes: usize,
    threads: usize,
    parser: Box<dyn LineParser>,
    mut consume: impl FnMut(ChunkResult) + Send,
) {
    use crate::ingest::KeptPaths;
    use crate::ingest::key::{KeySet, KeySpec};
    let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
    let ctx = ChunkContext {
        keys: &keys,
        routes: &[],
        paths: KeptPaths::All,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    pool.install(|| {
        let each = |chunk: io::Result<ChunkResult>| {
            consume(chunk.unwrap());
            Ok(())
        };
        run_in_chunks(
            data,
            chunk_bytes,
            &AtomicU64::new(0),
            &ctx,
            |_| Ok(parser),
            each,
        )
    })
    .unwrap();
}

#[cfg(test)]
mod tests;
