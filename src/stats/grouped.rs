//! The counting pass behind [`super::analyze`]: rows grouped by client (a
//! counting sort that keeps time order), clients counted in parallel, each
//! client's endpoints in a small dense table instead of a hash map per event,
//! and the parts merged in client order.
//!
//! The figures equal those of one sequential pass over the time-ordered table:
//! every key sees its own requests in time order, tallies are exact multisets,
//! and the export rows are put back in the order that pass would write them.

use rayon::prelude::*;

use super::counting::{KeyCounts, ScopeTally};
use super::{ClientPeak, CountRows};
use crate::events::{ClientGroups, EventTable, Id, group_rows};
use crate::units::{Millis, Window};

/// What the pass counted.
pub struct Counted {
    pub overall: ScopeTally,
    pub per_endpoint: Vec<ScopeTally>,
    /// Every client with requests, in client-id order.
    pub peaks: Vec<ClientPeak>,
    /// Per endpoint, its clients in client-id order.
    pub endpoint_peaks: Vec<Vec<ClientPeak>>,
    /// Clients with 429 or 503 answers: (client, 429s, 503s).
    pub status: Vec<(Id, u64, u64)>,
    pub counts: Option<CountRows>,
}

/// One closed (client, endpoint, window) count, with its place in the
/// sequential order: the row that closed it, or after all rows for the ones
/// closed at the end (in order of the pair's first row).
struct CountRow {
    order: u64,
    client: Id,
    endpoint: Id,
    window: i64,
    count: u64,
}

/// The results of one range of clients.
struct Part {
    overall: ScopeTally,
    per_endpoint: Vec<ScopeTally>,
    peaks: Vec<ClientPeak>,
    endpoint_peaks: Vec<(Id, ClientPeak)>,
    status: Vec<(Id, u64, u64)>,
    counts: Vec<CountRow>,
}

/// Counts every client not `excluded` (indexed by client id).
pub fn count(table: &EventTable, excluded: &[bool], window: Window, keep_counts: bool) -> Counted {
    let groups = group_rows(&table.client, table.clients.len());
    let ranges = client_ranges(&groups, rayon::current_num_threads().max(1));
    let parts: Vec<Part> = ranges
        .into_par_iter()
        .map(|(first, end)| {
            count_clients(table, &groups, first..end, excluded, window, keep_counts)
        })
        .collect();
    let mut counted = Counted {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); table.endpoints.len()],
        peaks: Vec::new(),
        endpoint_peaks: vec![Vec::new(); table.endpoints.len()],
        status: Vec::new(),
        counts: None,
    };
    let mut rows = Vec::new();
    for part in parts {
        counted.overall.absorb(&part.overall);
        for (mine, theirs) in counted.per_endpoint.iter_mut().zip(&part.per_endpoint) {
            mine.absorb(theirs);
        }
        counted.peaks.extend(part.peaks);
        for (e, peak) in part.endpoint_peaks {
            counted.endpoint_peaks[e as usize].push(peak);
        }
        counted.status.extend(part.status);
        rows.extend(part.counts);
    }
    if keep_counts {
        counted.counts = Some(count_rows(rows, window));
    }
    counted
}

/// Contiguous client ranges with about the same number of rows each.
fn client_ranges(groups: &ClientGroups, parts: usize) -> Vec<(usize, usize)> {
    let total = groups.rows.len();
    let mut ranges = Vec::with_capacity(parts);
    let mut first = 0;
    for c in 0..groups.len() {
        let done = groups.offsets[c + 1];
        if done * parts >= total * (ranges.len() + 1) && ranges.len() + 1 < parts {
            ranges.push((first, c + 1));
            first = c + 1;
        }
    }
    ranges.push((first, groups.len()));
    ranges
}

/// The running counts of one client's endpoint.
struct PairState {
    endpoint: Id,
    first_row: u32,
    counts: KeyCounts,
}

fn count_clients(
    table: &EventTable,
    groups: &ClientGroups,
    clients: std::ops::Range<usize>,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
) -> Part {
    let mut part = Part {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); table.endpoints.len()],
        peaks: Vec::new(),
        endpoint_peaks: Vec::new(),
        status: Vec::new(),
        counts: Vec::new(),
    };
    let end_order = table.len() as u64;
    // Per endpoint, its slot in `pairs` for the current client (u32::MAX: none yet).
    let mut slot_of = vec![u32::MAX; table.endpoints.len()];
    let mut pairs: Vec<PairState> = Vec::new();
    let mut ignore = |_| {};
    for c in clients {
        if excluded[c] || groups.rows(c).is_empty() {
            continue;
        }
        let client = c as Id;
        let mut own = KeyCounts::default();
        let (mut s429, mut s503) = (0, 0);
        for &row in groups.rows(c) {
            let r = row as usize;
            let (t, e) = (table.ts[r], table.endpoint[r]);
            own.add(t, window, &mut part.overall, &mut ignore);
            let slot = &mut slot_of[e as usize];
            if *slot == u32::MAX {
                *slot = pairs.len() as u32;
                pairs.push(PairState {
                    endpoint: e,
                    first_row: row,
                    counts: KeyCounts::default(),
                });
            }
            let pair = &mut pairs[*slot as usize];
            let counts = &mut part.counts;
            pair.counts.add(
                t,
                window,
                &mut part.per_endpoint[e as usize],
                &mut |(w, n)| {
                    if keep_counts {
                        counts.push(row_of(u64::from(row), client, e, w, n));
                    }
                },
            );
            match table.status[r] {
                429 => s429 += 1,
                503 => s503 += 1,
                _ => {}
            }
        }
        own.finish(&mut part.overall, &mut ignore);
        part.peaks.push(peak_of(client, &own));
        for mut pair in pairs.drain(..) {
            let (e, first) = (pair.endpoint, u64::from(pair.first_row));
            let counts = &mut part.counts;
            pair.counts
                .finish(&mut part.per_endpoint[e as usize], &mut |(w, n)| {
                    if keep_counts {
                        counts.push(row_of(end_order + first, client, e, w, n));
                    }
                });
            part.endpoint_peaks.push((e, peak_of(client, &pair.counts)));
            slot_of[e as usize] = u32::MAX;
        }
        if s429 + s503 > 0 {
            part.status.push((client, s429, s503));
        }
    }
    part
}

fn row_of(order: u64, client: Id, endpoint: Id, window: i64, count: u64) -> CountRow {
    CountRow {
        order,
        client,
        endpoint,
        window,
        count,
    }
}

fn peak_of(client: Id, k: &KeyCounts) -> ClientPeak {
    ClientPeak {
        client,
        requests: k.requests,
        peak_window: k.peak_window,
        peak_second: k.peak_second,
    }
}

/// The export rows in the order of the sequential pass.
fn count_rows(mut rows: Vec<CountRow>, window: Window) -> CountRows {
    rows.sort_unstable_by_key(|r| r.order);
    let window_ms: Millis = window.millis();
    CountRows {
        client: rows.iter().map(|r| r.client).collect(),
        endpoint: rows.iter().map(|r| r.endpoint).collect(),
        window_start: rows.iter().map(|r| r.window * window_ms).collect(),
        count: rows.iter().map(|r| r.count).collect(),
    }
}
