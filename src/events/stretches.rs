//! Putting rows in time order in place when they are out of order only
//! within short stretches: lines shuffled within each minute, a busy
//! server's requests logged as they end rather than as they start.
//!
//! A cut is a place between two rows where every row before it is no later
//! than every row after it. The rows between two consecutive cuts (a
//! stretch) hold exactly the times that belong there, so sorting each
//! stretch on its own, stably, puts the whole table in its stable time order;
//! the rows between stretches are already in place. Each stretch is short,
//! so its rows are reordered within the cache, column after column, with no
//! copy of the table; the stretches are sorted in parallel.
//!
//! A cut after row `i` needs the earliest time after it: the rows are read
//! in blocks, with the earliest time of every block after each one worked
//! out first, so that no array of a time per row is needed.

use std::ops::Range;

use rayon::prelude::*;

use crate::units::Millis;

/// Rows read at once while looking for cuts.
const BLOCK: usize = 1 << 12;
/// Stretches of about this many rows in all make one job.
const JOB_ROWS: usize = 1 << 15;

/// The stretches of a table, with the time order within each.
pub struct Stretches {
    /// The stretches, in row order, each of two rows or more.
    ranges: Vec<Range<usize>>,
    /// Consecutive stretches sorted as one job: which ones, and their rows
    /// (from the first one's start to the last one's end).
    jobs: Vec<(Range<usize>, Range<usize>)>,
    /// Per job, the time order within each of its stretches (offsets from
    /// the stretch's start), one stretch after another.
    orders: Vec<Vec<u32>>,
}

impl Stretches {
    /// The stretches of `ts`, or `None` when one is longer than `max_len`
    /// rows (lines out of order over a long stretch: the time order is then
    /// worked out over the whole table).
    pub fn find(ts: &[Millis], max_len: usize) -> Option<Stretches> {
        let ranges = ranges(ts, max_len)?;
        let jobs = jobs(&ranges);
        let orders = jobs
            .par_iter()
            .map(|(stretches, _)| {
                let mut order = Vec::new();
                for range in &ranges[stretches.clone()] {
                    stable_order(&ts[range.clone()], &mut order);
                }
                order
            })
            .collect();
        Some(Stretches {
            ranges,
            jobs,
            orders,
        })
    }

    /// Puts `values` (one per row) in the time order.
    pub fn permute<T: Copy + Send>(&self, values: &mut [T]) {
        let mut slices = Vec::with_capacity(self.jobs.len());
        let (mut rest, mut consumed) = (values, 0);
        for (_, rows) in &self.jobs {
            let (_, tail) = rest.split_at_mut(rows.start - consumed);
            let (slice, tail) = tail.split_at_mut(rows.len());
            slices.push(slice);
            (rest, consumed) = (tail, rows.end);
        }
        slices
            .into_par_iter()
            .zip(&self.jobs)
            .zip(&self.orders)
            .for_each(|((slice, (stretches, rows)), order)| {
                let mut taken: Vec<T> = Vec::new();
                let mut order = order.as_slice();
                for range in &self.ranges[stretches.clone()] {
                    let stretch = &mut slice[range.start - rows.start..range.end - rows.start];
                    let (this, after) = order.split_at(stretch.len());
                    taken.clear();
                    taken.extend_from_slice(stretch);
                    for (value, &from) in stretch.iter_mut().zip(this) {
                        *value = taken[from as usize];
                    }
                    order = after;
                }
            });
    }
}

/// The stretches of two rows or more between the cuts of `ts`, or `None`
/// past `max_len` rows in one.
fn ranges(ts: &[Millis], max_len: usize) -> Option<Vec<Range<usize>>> {
    let blocks = ts.len().div_ceil(BLOCK);
    // The earliest time of block `b` and every block after it.
    let mut earliest_from = vec![Millis::MAX; blocks + 1];
    for b in (0..blocks).rev() {
        let block = &ts[b * BLOCK..((b + 1) * BLOCK).min(ts.len())];
        earliest_from[b] = block
            .iter()
            .copied()
            .fold(earliest_from[b + 1], Millis::min);
    }
    let mut ranges = Vec::new();
    let (mut start, mut latest) = (0, Millis::MIN);
    // The earliest time from each row of the block on.
    let mut earliest_after = vec![Millis::MAX; BLOCK + 1];
    for b in 0..blocks {
        let first = b * BLOCK;
        let block = &ts[first..(first + BLOCK).min(ts.len())];
        earliest_after[block.len()] = earliest_from[b + 1];
        for (i, &t) in block.iter().enumerate().rev() {
            earliest_after[i] = earliest_after[i + 1].min(t);
        }
        for (i, &t) in block.iter().enumerate() {
            latest = latest.max(t);
            let end = first + i + 1;
            if latest <= earliest_after[i + 1] {
                if end - start > 1 {
                    ranges.push(start..end);
                }
                start = end;
            } else if end - start >= max_len {
                return None;
            }
        }
    }
    Some(ranges)
}

/// The stretches grouped into jobs of about [`JOB_ROWS`] rows.
fn jobs(ranges: &[Range<usize>]) -> Vec<(Range<usize>, Range<usize>)> {
    let mut jobs = Vec::new();
    let mut first = 0;
    let mut rows = 0;
    for (i, range) in ranges.iter().enumerate() {
        rows += range.len();
        if rows >= JOB_ROWS || i + 1 == ranges.len() {
            jobs.push((first..i + 1, ranges[first].start..range.end));
            (first, rows) = (i + 1, 0);
        }
    }
    jobs
}

/// Appends to `order` the stable time order of `ts` (offsets into it): by
/// counting, where the times are few whole seconds or milliseconds apart,
/// else by a stable sort.
fn stable_order(ts: &[Millis], order: &mut Vec<u32>) {
    let start = order.len();
    let (earliest, latest) = ts.iter().fold((Millis::MAX, Millis::MIN), |(lo, hi), &t| {
        (lo.min(t), hi.max(t))
    });
    let unit = if ts.iter().all(|&t| t.abs_diff(earliest) % 1000 == 0) {
        1000
    } else {
        1
    };
    let span = latest.abs_diff(earliest) / unit;
    if span > 4 * ts.len() as u64 + 256 {
        order.extend(0..ts.len() as u32);
        order[start..].sort_by_key(|&i| ts[i as usize]);
        return;
    }
    let key = |t: Millis| (t.abs_diff(earliest) / unit) as usize;
    let mut next = vec![0u32; span as usize + 1];
    for &t in ts {
        next[key(t)] += 1;
    }
    let mut at = 0;
    for slot in next.iter_mut() {
        (*slot, at) = (at, at + *slot);
    }
    order.resize(start + ts.len(), 0);
    for (i, &t) in ts.iter().enumerate() {
        let slot = &mut next[key(t)];
        order[start + *slot as usize] = i as u32;
        *slot += 1;
    }
}

#[cfg(test)]
mod tests;
