//! Rows that come in a few time-sorted runs (servers' logs one after
//! another, copies of a log), merged into the stable time order.
//!
//! The output is cut into parts at instants, the same in every run (the
//! `p`-th part holds the rows from the `p`-th instant up to the next), so
//! that the parts are merged on every core, each into its own piece of the
//! order. Within a part, the run whose next row is earliest (ties: the
//! earlier run, whose rows come first) gives rows for as long as it stays
//! the earliest, found by a galloping search: rows of equal times, as whole
//! seconds bring them, cost a comparison per run of them, not per row.

use rayon::prelude::*;

use crate::units::Millis;

/// Parts per core: enough that one slow part does not hold the others up.
const PARTS_PER_THREAD: usize = 4;

/// The stable time order of `ts`, which is sorted within each run that
/// starts at one of `starts` (`starts[0] == 0`, ascending).
pub(super) fn merged(ts: &[Millis], starts: &[usize]) -> Vec<u32> {
    let runs: Vec<&[Millis]> = starts
        .iter()
        .zip(starts.iter().skip(1).chain([&ts.len()]))
        .map(|(&start, &end)| &ts[start..end])
        .collect();
    let parts = (rayon::current_num_threads() * PARTS_PER_THREAD).clamp(1, ts.len().max(1));
    // Per cut, how many rows of each run come before it.
    let cuts: Vec<Vec<usize>> = (0..=parts)
        .map(|p| match p {
            0 => vec![0; runs.len()],
            p if p == parts => runs.iter().map(|r| r.len()).collect(),
            p => {
                let instant = instant_of_rank(&runs, p * ts.len() / parts);
                runs.iter()
                    .map(|r| r.partition_point(|&t| t < instant))
                    .collect()
            }
        })
        .collect();
    let mut order = vec![0u32; ts.len()];
    let mut pieces: Vec<&mut [u32]> = Vec::with_capacity(parts);
    let mut rest = order.as_mut_slice();
    for p in 0..parts {
        let len = cuts[p + 1].iter().sum::<usize>() - cuts[p].iter().sum::<usize>();
        let (piece, after) = rest.split_at_mut(len);
        pieces.push(piece);
        rest = after;
    }
    pieces.into_par_iter().enumerate().for_each(|(p, piece)| {
        merge_part(&runs, starts, &cuts[p], &cuts[p + 1], piece);
    });
    order
}

/// The earliest instant with at least `rank` rows of `runs` before it.
fn instant_of_rank(runs: &[&[Millis]], rank: usize) -> Millis {
    let before = |instant: i128| -> usize {
        runs.iter()
            .map(|r| r.partition_point(|&t| i128::from(t) < instant))
            .sum()
    };
    let first = runs.iter().filter_map(|r| r.first()).min();
    let last = runs.iter().filter_map(|r| r.last()).max();
    let (Some(&first), Some(&last)) = (first, last) else {
        return Millis::MIN;
    };
    let (mut lo, mut hi) = (i128::from(first), i128::from(last) + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if before(mid) >= rank {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    // At most the latest time plus one, so within range unless that is
    // `Millis::MAX + 1`, when every row is before the latest time anyway.
    Millis::try_from(lo).unwrap_or(Millis::MAX)
}

/// A run's next row, as (time, run).
type Head = (Millis, usize);

/// Writes into `out` the rows of `runs` from `from[k]` to `to[k]` in run
/// `k` (which starts at row `starts[k]`), in time order.
fn merge_part(runs: &[&[Millis]], starts: &[usize], from: &[usize], to: &[usize], out: &mut [u32]) {
    let mut next = from.to_vec();
    let mut written = 0;
    loop {
        // The earliest head and the one after it.
        let (mut best, mut second): (Option<Head>, Option<Head>) = (None, None);
        for (k, run) in runs.iter().enumerate() {
            if next[k] == to[k] {
                continue;
            }
            let head = (run[next[k]], k);
            if best.is_none_or(|b| head < b) {
                second = best;
                best = Some(head);
            } else if second.is_none_or(|s| head < s) {
                second = Some(head);
            }
        }
        let Some((_, k)) = best else { break };
        let run = runs[k];
        // Rows of run k before the second head: a later run's equal time
        // comes after, an earlier run's before.
        let end = match second {
            None => to[k],
            Some((time, other)) if k < other => gallop(run, next[k], to[k], |t| t <= time),
            Some((time, _)) => gallop(run, next[k], to[k], |t| t < time),
        };
        for row in next[k]..end {
            out[written] = (starts[k] + row) as u32;
            written += 1;
        }
        next[k] = end;
    }
    debug_assert_eq!(written, out.len());
}

/// The first position in `run[from..to]` whose time `keep` refuses (`keep`
/// holds for a prefix, and for `run[from]`), searched from `from` in steps
/// that double, so that a short stretch costs a few comparisons.
fn gallop(run: &[Millis], from: usize, to: usize, keep: impl Fn(Millis) -> bool) -> usize {
    let (mut at, mut step) = (from, 1);
    while at + step < to && keep(run[at + step]) {
        at += step;
        step *= 2;
    }
    let end = (at + step).min(to);
    at + 1 + run[at + 1..end].partition_point(|&t| keep(t))
}
