//! The counting pass behind [`super::analyze`]: a few threads that each own a
//! range of clients go through it one group of consecutive clients after
//! another, a group's requests in time order ([`ClientRows`]), so the running
//! counts of a client and of its (client, endpoint) pairs live only while its
//! group is counted (few clients make one group: the table is streamed); the
//! peaks go straight into per-endpoint lists already in client order, and the
//! parts are merged in client order. Per-endpoint figures are kept for the
//! endpoints of a [`Detail`] only, so their state grows with the endpoints
//! reported, not with the distinct ones.
//!
//! The figures equal those of one sequential pass: every key sees its own
//! requests in time order, tallies are exact multisets, and the export rows are
//! put back in the order that pass would write them.
//!
//! A table with few clients is counted by ranges of rows instead
//! ([`super::row_ranges`]), unless the export rows are asked for.

use std::ops::Range;

use rayon::prelude::*;

use super::by_client::{
    ClientRows, GATHERED_ROWS, RowBounds, by_rows, client_ranges, clients_per_group, gather,
};
use super::counting::{KeyCounts, ScopeTally};
use super::detail::Detail;
use super::row_ranges;
use super::{ClientPeak, CountRows};
use crate::events::{EventTable, Id};
use crate::units::{Millis, Window};

/// What the pass counted.
pub struct Counted {
    pub overall: ScopeTally,
    /// Per detailed endpoint (in [`Detail::endpoints`] order).
    pub per_endpoint: Vec<ScopeTally>,
    /// Every client with requests, in client-id order.
    pub peaks: Vec<ClientPeak>,
    /// Per detailed endpoint, its clients in client-id order.
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
    /// Per detailed endpoint, its clients of the range in client-id order.
    endpoint_peaks: Vec<Vec<ClientPeak>>,
    status: Vec<(Id, u64, u64)>,
    counts: Vec<CountRow>,
}

/// Counts every client not `excluded` (indexed by client id), with
/// per-endpoint figures for the endpoints of `detail`, and with the export
/// rows of every endpoint when `keep_counts`.
pub fn count(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
) -> Counted {
    let threads = rayon::current_num_threads().max(1);
    if !keep_counts && row_ranges::few_keys(table.clients.len(), detail.endpoints().len()) {
        return row_ranges::count(table, excluded, window, detail, threads);
    }
    let split = Split {
        parts: threads,
        per_group: None,
        rows: RowBounds::default(),
    };
    count_with(table, excluded, window, keep_counts, detail, &split)
}

/// How the clients are split: tests vary it apart from the number of threads.
pub(super) struct Split {
    /// Client ranges, counted in parallel.
    pub parts: usize,
    /// Clients counted at once (else [`clients_per_group`]).
    pub per_group: Option<usize>,
    /// Rows indexed at once, and in one group.
    pub rows: RowBounds,
}

/// [`count`] with the clients split as `split` says.
pub(super) fn count_with(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
    split: &Split,
) -> Counted {
    // The export rows cover every endpoint, so the pass then follows every
    // endpoint; the figures are still those of `detail`'s alone.
    if keep_counts && detail.endpoints().len() < table.endpoints.len() {
        let all = Detail::all(table.endpoints.len());
        let counted = count_with(table, excluded, window, keep_counts, &all, split);
        return counted.only(detail);
    }
    let detailed = detail.endpoints().len();
    let per_group = split
        .per_group
        .unwrap_or_else(|| clients_per_group(detailed))
        .max(1);
    let events = client_events(table, excluded);
    let ranges = client_ranges(&events, table.len(), split.parts.max(1));
    let parts: Vec<Part> = ranges
        .into_par_iter()
        .map(|clients| {
            let per_group = per_group.min(clients.len().max(1));
            let sizes = (per_group, split.rows);
            count_clients(table, clients, &events, window, keep_counts, detail, sizes)
        })
        .collect();
    drop(events);
    merge(parts, detailed, keep_counts, window)
}

impl Counted {
    /// These figures (of every endpoint, by id) narrowed to `detail`'s
    /// endpoints, in its order.
    fn only(mut self, detail: &Detail) -> Counted {
        let mut per_endpoint = Vec::with_capacity(detail.endpoints().len());
        let mut endpoint_peaks = Vec::with_capacity(detail.endpoints().len());
        for &e in detail.endpoints() {
            per_endpoint.push(std::mem::take(&mut self.per_endpoint[e as usize]));
            endpoint_peaks.push(std::mem::take(&mut self.endpoint_peaks[e as usize]));
        }
        Counted {
            per_endpoint,
            endpoint_peaks,
            ..self
        }
    }
}

/// The parts (in client order) as one result.
fn merge(mut parts: Vec<Part>, detailed: usize, keep_counts: bool, window: Window) -> Counted {
    let mut counted = Counted {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detailed],
        peaks: Vec::new(),
        endpoint_peaks: Vec::with_capacity(detailed),
        status: Vec::new(),
        counts: None,
    };
    // Slot by slot, each list sized once and the parts' lists freed as they
    // are copied, so the peaks are never held twice.
    for slot in 0..detailed {
        let mut lists = parts
            .iter_mut()
            .map(|p| std::mem::take(&mut p.endpoint_peaks[slot]))
            .filter(|l| !l.is_empty());
        let merged = match (lists.next(), lists.next()) {
            (None, _) => Vec::new(),
            (Some(only), None) => only,
            (Some(a), Some(b)) => {
                let rest: Vec<Vec<ClientPeak>> = lists.collect();
                let len = a.len() + b.len() + rest.iter().map(Vec::len).sum::<usize>();
                let mut merged = Vec::with_capacity(len);
                for list in [a, b].into_iter().chain(rest) {
                    merged.extend_from_slice(&list);
                }
                merged
            }
        };
        counted.endpoint_peaks.push(merged);
    }
    // Sized once the parts' endpoint lists are freed.
    counted
        .peaks
        .reserve_exact(parts.iter().map(|p| p.peaks.len()).sum());
    let mut rows = Vec::new();
    for part in parts {
        counted.overall.absorb(&part.overall);
        for (mine, theirs) in counted.per_endpoint.iter_mut().zip(&part.per_endpoint) {
            mine.absorb(theirs);
        }
        counted.peaks.extend(part.peaks);
        counted.status.extend(part.status);
        rows.extend(part.counts);
    }
    if keep_counts {
        counted.counts = Some(count_rows(rows, window));
    }
    counted
}

/// Per client id, its rows in the table; 0 for `excluded` clients.
fn client_events(table: &EventTable, excluded: &[bool]) -> Vec<u32> {
    let mut events = vec![0u32; table.clients.len()];
    for &c in &table.client {
        events[c as usize] += 1;
    }
    for (n, &out) in events.iter_mut().zip(excluded) {
        if out {
            *n = 0;
        }
    }
    events
}

/// The running counts of one (client, detailed endpoint) pair of the group
/// being counted.
struct PairState {
    client: Id,
    endpoint: Id,
    slot: u32,
    first_row: u32,
    counts: KeyCounts,
}

/// No pair yet, in the group's pair table.
const NO_PAIR: u32 = u32::MAX;
/// Counts the clients of one range, one group of at most `per_group` clients
/// after another, their rows indexed and grouped as `bounds` says.
fn count_clients(
    table: &EventTable,
    clients: Range<usize>,
    events: &[u32],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
    (per_group, bounds): (usize, RowBounds),
) -> Part {
    let detailed = detail.endpoints().len();
    let mut part = Part {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detailed],
        peaks: Vec::new(),
        endpoint_peaks: vec![Vec::new(); detailed],
        status: Vec::new(),
        counts: Vec::new(),
    };
    let end_order = table.len() as u64;
    // Per client of the group: its counts, 429s and 503s, and where each of
    // its pairs is (`pair_at[k * detailed + slot]`); all reset after the group.
    let mut own = vec![KeyCounts::default(); per_group];
    let mut statuses = vec![(0u64, 0u64); per_group];
    let mut pair_at = vec![NO_PAIR; per_group * detailed];
    let mut pairs: Vec<PairState> = Vec::new();
    let (mut times, mut codes, mut endpoints, mut ids) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut ignore = |_| {};
    // Indexed a bounded number of rows at a time.
    for some in by_rows(events, clients, bounds.indexed) {
        let grouped = ClientRows::group(table, some, events, (per_group, bounds.group));
        for g in 0..grouped.groups() {
            let first = grouped.clients(g).start;
            for rows in grouped.rows(g).chunks(GATHERED_ROWS) {
                // The columns of these rows first, in tight loops whose reads overlap.
                gather(&table.ts, rows, &mut times);
                gather(&table.status, rows, &mut codes);
                gather(&table.endpoint, rows, &mut endpoints);
                gather(&table.client, rows, &mut ids);
                for (k, &row) in rows.iter().enumerate() {
                    let (t, client, e) = (times[k], ids[k], endpoints[k]);
                    let local = client as usize - first;
                    own[local].add(t, window, &mut part.overall, &mut ignore);
                    match codes[k] {
                        429 => statuses[local].0 += 1,
                        503 => statuses[local].1 += 1,
                        _ => {}
                    }
                    let Some(slot) = detail.slot(e) else {
                        continue;
                    };
                    let at = &mut pair_at[local * detailed + slot as usize];
                    if *at == NO_PAIR {
                        *at = pairs.len() as u32;
                        pairs.push(PairState {
                            client,
                            endpoint: e,
                            slot,
                            first_row: row,
                            counts: KeyCounts::default(),
                        });
                    }
                    let counts = &mut part.counts;
                    pairs[*at as usize].counts.add(
                        t,
                        window,
                        &mut part.per_endpoint[slot as usize],
                        &mut |(w, n)| {
                            if keep_counts {
                                counts.push(row_of(u64::from(row), client, e, w, n));
                            }
                        },
                    );
                }
            }
            for (local, c) in grouped.clients(g).enumerate() {
                let counts = std::mem::take(&mut own[local]);
                let (s429, s503) = std::mem::take(&mut statuses[local]);
                finish_client(&mut part, c as Id, counts, s429, s503);
            }
            // Client by client, so each endpoint's peaks stay in client order.
            pairs.sort_unstable_by_key(|p| p.client);
            for mut pair in pairs.drain(..) {
                let (c, e, slot) = (pair.client, pair.endpoint, pair.slot as usize);
                pair_at[(c as usize - first) * detailed + slot] = NO_PAIR;
                let order = end_order + u64::from(pair.first_row);
                let counts = &mut part.counts;
                pair.counts
                    .finish(&mut part.per_endpoint[slot], &mut |(w, n)| {
                        if keep_counts {
                            counts.push(row_of(order, c, e, w, n));
                        }
                    });
                part.endpoint_peaks[slot].push(peak_of(c, &pair.counts));
            }
        }
    }
    part
}

/// Closes a client's counts at the end of input, with its peaks and statuses.
fn finish_client(part: &mut Part, client: Id, mut counts: KeyCounts, s429: u64, s503: u64) {
    if counts.requests == 0 {
        return;
    }
    counts.finish(&mut part.overall, &mut |_| {});
    part.peaks.push(peak_of(client, &counts));
    if s429 + s503 > 0 {
        part.status.push((client, s429, s503));
    }
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
