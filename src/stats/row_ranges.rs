//! The counting pass of [`super::pass`] for a table with few clients: the
//! rows are split into consecutive ranges, one per thread, and each range is
//! counted for every client and every detailed (client, endpoint) pair at
//! once, its columns read in order. Split by client instead, every thread
//! would read every part of the columns (few clients' requests are mixed
//! all through the table) after indexing its clients' rows.
//!
//! A key's first and last window (and second) in a range may go on in the
//! ranges around it, so they are held back and joined in range order; the
//! windows that close inside a range are tallied there. Every key sees its
//! requests in time order, and tallies are exact multisets: the figures
//! equal those of one sequential pass.

use rayon::prelude::*;

use super::ClientPeak;
use super::counting::{ScopeTally, Tally};
use super::detail::Detail;
use super::pass::Counted;
use crate::events::{EventTable, Id};
use crate::units::Window;

/// The most keys (clients, and (client, detailed endpoint) pairs) a range
/// holds the counts of (about 100 bytes each): beyond, the counts of a
/// range no longer stay in cache, and the pass splits the table by client.
const MOST_KEYS: usize = 1 << 15;

/// Whether `clients` clients with `detailed` endpoints each are few enough
/// to be counted by ranges of rows.
pub(super) fn few_keys(clients: usize, detailed: usize) -> bool {
    clients.saturating_mul(detailed + 1) <= MOST_KEYS
}

/// A window or a second of one key, and the requests in it.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    index: i64,
    count: u64,
}

/// The runs (windows, or seconds) of one key in one range of rows: its first
/// and current ones are held back, those between them tallied.
#[derive(Debug, Clone, Copy, Default)]
struct Runs {
    first: Run,
    current: Run,
    /// Whether the first run closed (the current one is another).
    moved: bool,
    /// The largest run tallied.
    peak: u64,
}

impl Runs {
    fn starting(index: i64) -> Runs {
        let run = Run { index, count: 0 };
        Runs {
            first: run,
            current: run,
            moved: false,
            peak: 0,
        }
    }

    /// Moves to the run `index` (one more request follows in it).
    #[inline(always)]
    fn step(&mut self, index: i64, tally: &mut Tally) {
        if index != self.current.index {
            if self.moved {
                tally.record(self.current.count);
                self.peak = self.peak.max(self.current.count);
            } else {
                self.first = self.current;
                self.moved = true;
            }
            self.current = Run { index, count: 0 };
        }
        self.current.count += 1;
    }
}

/// The counts of one key in one range of rows.
#[derive(Debug, Clone, Copy, Default)]
struct RangeCounts {
    requests: u64,
    window: Runs,
    second: Runs,
}

impl RangeCounts {
    /// Counts a request in window `w` and second `s`.
    #[inline(always)]
    fn add(&mut self, (w, s): (i64, i64), into: &mut ScopeTally) {
        if self.requests == 0 {
            (self.window, self.second) = (Runs::starting(w), Runs::starting(s));
        }
        self.window.step(w, &mut into.per_window);
        self.second.step(s, &mut into.per_second);
        self.requests += 1;
    }
}

/// What one range of rows counted.
struct Range {
    /// Per client id.
    own: Vec<RangeCounts>,
    /// Per (client id, detailed slot): `pairs[client * detailed + slot]`.
    pairs: Vec<RangeCounts>,
    /// Per client id: 429 and 503 answers.
    statuses: Vec<(u64, u64)>,
    overall: ScopeTally,
    per_endpoint: Vec<ScopeTally>,
}

/// Counts every client not `excluded` (indexed by client id), with
/// per-endpoint figures for the endpoints of `detail`, the rows split into
/// `ranges` ranges; no export rows. For tables whose clients and pairs are
/// [`few_keys`].
pub(super) fn count(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    detail: &Detail,
    ranges: usize,
) -> Counted {
    let (clients, detailed) = (table.clients.len(), detail.endpoints().len());
    let state = clients * (detailed + 1) * size_of::<RangeCounts>();
    let counted: Vec<Range> = split_rows(table.len(), ranges, state)
        .into_par_iter()
        .map(|rows| count_range(table, excluded, window, detail, rows))
        .collect();
    join(counted, clients, detailed)
}

/// The most memory all ranges hold for their state, bounding how many
/// ranges a machine with many cores splits the rows into.
const MOST_STATE: usize = 64 << 20;

/// `rows` rows as at most `ranges` consecutive ranges of about the same
/// size (at least one, and no more than there are rows), fewer when each
/// holds `state` bytes and all of them would hold more than [`MOST_STATE`].
pub(crate) fn split_rows(rows: usize, ranges: usize, state: usize) -> Vec<std::ops::Range<usize>> {
    let ranges = ranges.min(MOST_STATE / state.max(1)).clamp(1, rows.max(1));
    (0..ranges)
        .map(|r| rows * r / ranges..rows * (r + 1) / ranges)
        .collect()
}

fn count_range(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    detail: &Detail,
    rows: std::ops::Range<usize>,
) -> Range {
    let (clients, detailed) = (table.clients.len(), detail.endpoints().len());
    let mut range = Range {
        own: vec![RangeCounts::default(); clients],
        pairs: vec![RangeCounts::default(); clients * detailed],
        statuses: vec![(0, 0); clients],
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detailed],
    };
    let columns = table.ts[rows.clone()]
        .iter()
        .zip(&table.client[rows.clone()])
        .zip(&table.endpoint[rows.clone()])
        .zip(&table.status[rows]);
    for (((&t, &client), &e), &status) in columns {
        let c = client as usize;
        if excluded[c] {
            continue;
        }
        let at = (window.index(t), t.div_euclid(1000));
        range.own[c].add(at, &mut range.overall);
        match status {
            429 => range.statuses[c].0 += 1,
            503 => range.statuses[c].1 += 1,
            _ => {}
        }
        if let Some(slot) = detail.slot(e) {
            let slot = slot as usize;
            range.pairs[c * detailed + slot].add(at, &mut range.per_endpoint[slot]);
        }
    }
    range
}

/// The runs (windows, or seconds) of one key joined over the ranges so far:
/// the one still open, and the largest closed.
#[derive(Default)]
struct JoinedRuns {
    open: Option<Run>,
    peak: u64,
}

impl JoinedRuns {
    fn close(&mut self, run: Run, tally: &mut Tally) {
        tally.record(run.count);
        self.peak = self.peak.max(run.count);
    }

    /// Joins the runs of the next range: its first run goes on with the open
    /// one when both are the same window (or second), and its current run is
    /// left open.
    fn then(&mut self, next: &Runs, tally: &mut Tally) {
        let first = if next.moved { next.first } else { next.current };
        let first = match self.open.take() {
            Some(run) if run.index == first.index => Run {
                index: run.index,
                count: run.count + first.count,
            },
            Some(run) => {
                self.close(run, tally);
                first
            }
            None => first,
        };
        if next.moved {
            self.close(first, tally);
            self.open = Some(next.current);
        } else {
            self.open = Some(first);
        }
        self.peak = self.peak.max(next.peak);
    }

    /// Closes the open run at the end of the table; the largest run.
    fn finish(mut self, tally: &mut Tally) -> u64 {
        if let Some(run) = self.open.take() {
            self.close(run, tally);
        }
        self.peak
    }
}

/// A key's counts over the ranges joined so far.
#[derive(Default)]
struct Joined {
    requests: u64,
    window: JoinedRuns,
    second: JoinedRuns,
}

impl Joined {
    /// Joins the next range's counts of the key (none when it had no request).
    fn then(&mut self, next: &RangeCounts, into: &mut ScopeTally) {
        if next.requests == 0 {
            return;
        }
        self.requests += next.requests;
        self.window.then(&next.window, &mut into.per_window);
        self.second.then(&next.second, &mut into.per_second);
    }

    /// Closes the open runs at the end of the table; the key's peak.
    fn finish(self, client: Id, into: &mut ScopeTally) -> ClientPeak {
        ClientPeak {
            client,
            requests: self.requests,
            peak_window: self.window.finish(&mut into.per_window),
            peak_second: self.second.finish(&mut into.per_second),
        }
    }
}

/// The ranges' counts (in row order) as one result, clients in id order.
fn join(ranges: Vec<Range>, clients: usize, detailed: usize) -> Counted {
    let mut counted = Counted {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detailed],
        peaks: Vec::new(),
        endpoint_peaks: vec![Vec::new(); detailed],
        status: Vec::new(),
        counts: None,
    };
    for range in &ranges {
        counted.overall.absorb(&range.overall);
        for (mine, theirs) in counted.per_endpoint.iter_mut().zip(&range.per_endpoint) {
            mine.absorb(theirs);
        }
    }
    for c in 0..clients {
        let mut own = Joined::default();
        let (mut s429, mut s503) = (0, 0);
        for range in &ranges {
            own.then(&range.own[c], &mut counted.overall);
            s429 += range.statuses[c].0;
            s503 += range.statuses[c].1;
        }
        if own.requests == 0 {
            continue;
        }
        counted
            .peaks
            .push(own.finish(c as Id, &mut counted.overall));
        if s429 + s503 > 0 {
            counted.status.push((c as Id, s429, s503));
        }
        for slot in 0..detailed {
            let mut pair = Joined::default();
            for range in &ranges {
                pair.then(
                    &range.pairs[c * detailed + slot],
                    &mut counted.per_endpoint[slot],
                );
            }
            if pair.requests > 0 {
                let peak = pair.finish(c as Id, &mut counted.per_endpoint[slot]);
                counted.endpoint_peaks[slot].push(peak);
            }
        }
    }
    counted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_into_ranges_that_cover_them_within_the_state_bound() {
        assert_eq!(split_rows(10, 3, 1), [0..3, 3..6, 6..10]);
        // No more ranges than rows, and one at least (an empty table too).
        assert_eq!(split_rows(2, 8, 1), [0..1, 1..2]);
        let bounds = |rows, ranges, state| -> Vec<(usize, usize)> {
            split_rows(rows, ranges, state)
                .iter()
                .map(|r| (r.start, r.end))
                .collect()
        };
        assert_eq!(bounds(0, 4, 1), [(0, 0)]);
        assert_eq!(bounds(5, 0, 1), [(0, 5)]);
        // 64 cores, ranges of 16 MB each: four ranges hold the 64 MB.
        assert_eq!(split_rows(100, 64, 16 << 20).len(), 4);
        assert_eq!(bounds(100, 64, usize::MAX), [(0, 100)]);
    }
}
