//! The threads of one input: a reader that splits the (decompressed) stream into
//! chunks, parse workers that turn chunks into [`ChunkResult`]s, and the calling
//! thread, which receives the results in input order (to merge them while the
//! workers parse the next chunks).
//!
//! Memory stays bounded: the reader fills one of a few recycled buffers, and a
//! buffer comes back only once the caller has consumed its chunk, so at most
//! [`buffers_for`] chunks are in flight whatever the input size.

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Read};
use std::sync::mpsc::{Receiver, Sender, channel, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use super::IngestError;
use super::chunk::{ChunkContext, ChunkResult, parse_chunk};
use super::lines::{Piece, Splitter};
use super::record::{LineParser, SkipReason};

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

/// A parsed chunk with the buffer it was read into, or a read error.
type Parsed = (io::Result<ChunkResult>, Option<Vec<u8>>);

/// Reads `reader` and calls `consume` with every chunk's result in input order.
///
/// `choose` picks the parser from the first pieces (up to the first chunk of
/// lines). An error from `choose` or `consume` stops every thread and is returned.
pub fn run<R: Read + Send>(
    reader: R,
    ctx: &ChunkContext<'_>,
    choose: impl FnOnce(&[io::Result<Piece>]) -> Result<Box<dyn LineParser>, IngestError>,
    mut consume: impl FnMut(io::Result<ChunkResult>) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let threads = rayon::current_num_threads().max(1);
    let (piece_tx, piece_rx) = sync_channel::<io::Result<Piece>>(threads);
    let (recycle_tx, recycle_rx) = channel::<Vec<u8>>();
    let mut created = 0;
    let max_buffers = buffers_for(threads);
    let splitter = Splitter::new(reader).with_buffers(Box::new(move || {
        if let Ok(buffer) = recycle_rx.try_recv() {
            return Some(buffer);
        }
        if created < max_buffers {
            created += 1;
            return Some(Vec::new());
        }
        recycle_rx.recv().ok()
    }));
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for piece in splitter {
                if piece_tx.send(piece).is_err() {
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
        in_order(&result_rx, &recycle_tx, &mut consume)
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
            Ok(Piece::Lines {
                data, first_line, ..
            }) => {
                let chunk = parse_chunk(&data, first_line, parser.fork().as_mut(), ctx);
                (Ok(chunk), Some(data))
            }
            Ok(Piece::TooLong { line, .. }) => {
                let mut chunk = ChunkResult {
                    lines: 1,
                    ..ChunkResult::default()
                };
                chunk.skip(line, SkipReason::TooLong);
                (Ok(chunk), None)
            }
            Err(e) => (Err(e), None),
        };
        if results.send((seq, parsed)).is_err() {
            return;
        }
    }
}

/// Hands results to `consume` in input order, recycling their buffers.
fn in_order(
    results: &Receiver<(usize, Parsed)>,
    recycle: &Sender<Vec<u8>>,
    consume: &mut impl FnMut(io::Result<ChunkResult>) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let mut waiting: BTreeMap<usize, Parsed> = BTreeMap::new();
    let mut next = 0;
    while let Ok((seq, parsed)) = results.recv() {
        waiting.insert(seq, parsed);
        while let Some((result, buffer)) = waiting.remove(&next) {
            next += 1;
            consume(result)?;
            if let Some(buffer) = buffer {
                let _ = recycle.send(buffer); // the reader may have finished
            }
        }
    }
    debug_assert!(waiting.is_empty(), "every chunk is consumed in order");
    Ok(())
}
