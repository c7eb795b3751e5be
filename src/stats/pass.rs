//! The counting pass behind [`super::analyze`]: the time-ordered table read
//! once, in order, by each of a few threads that each own a range of clients
//! (so the columns are streamed, never gathered), with every (client, endpoint)
//! pair's counts found through a dense table (a hash map when clients ×
//! endpoints is too large for one), and the parts merged in client order.
//! Per-endpoint figures are kept for the endpoints of a [`Detail`] only, so
//! their state grows with the endpoints reported, not with the distinct ones.
//!
//! The figures equal those of one sequential pass: every key sees its own
//! requests in time order, tallies are exact multisets, and the export rows are
//! put back in the order that pass would write them.

use std::ops::Range;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::counting::{KeyCounts, ScopeTally};
use super::{ClientPeak, CountRows};
use crate::events::{EventTable, Id};
use crate::units::{Millis, Window};

/// Which endpoints get per-endpoint figures.
#[derive(Debug, Clone)]
pub struct Detail {
    /// `slots[e]`: endpoint `e`'s place in `endpoints`, or [`NOT_DETAILED`].
    slots: Vec<u32>,
    /// The detailed endpoints.
    endpoints: Vec<Id>,
}

/// The slot of an endpoint without per-endpoint figures.
const NOT_DETAILED: u32 = u32::MAX;

impl Detail {
    /// Every one of `endpoints` endpoints.
    pub fn all(endpoints: usize) -> Detail {
        Detail {
            slots: (0..endpoints as u32).collect(),
            endpoints: (0..endpoints as Id).collect(),
        }
    }

    /// These of `endpoints` endpoints.
    pub fn only(detailed: Vec<Id>, endpoints: usize) -> Detail {
        let mut slots = vec![NOT_DETAILED; endpoints];
        for (slot, &e) in detailed.iter().enumerate() {
            slots[e as usize] = slot as u32;
        }
        Detail {
            slots,
            endpoints: detailed,
        }
    }

    /// The detailed endpoints, in slot order.
    pub fn endpoints(&self) -> &[Id] {
        &self.endpoints
    }

    fn slot(&self, endpoint: Id) -> Option<u32> {
        let slot = self.slots[endpoint as usize];
        (slot != NOT_DETAILED).then_some(slot)
    }
}

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
    endpoint_peaks: Vec<(Id, ClientPeak)>,
    status: Vec<(Id, u64, u64)>,
    counts: Vec<CountRow>,
}

/// Counts every client not `excluded` (indexed by client id), with
/// per-endpoint figures for the endpoints of `detail` (all of them when
/// `keep_counts`: the export rows cover every endpoint).
pub fn count(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
) -> Counted {
    count_with(
        table,
        excluded,
        window,
        keep_counts,
        detail,
        DENSE_PAIRS,
        CHAINED_ENDPOINTS,
    )
}

/// [`count`] with dense pair tables of at most `dense_pairs` entries and
/// per-client chains up to `chained_endpoints` detailed endpoints (tests use
/// 0 to exercise the other indexes).
pub(super) fn count_with(
    table: &EventTable,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
    dense_pairs: usize,
    chained_endpoints: usize,
) -> Counted {
    let all;
    let detail = if keep_counts && detail.endpoints.len() < table.endpoints.len() {
        all = Detail::all(table.endpoints.len());
        &all
    } else {
        detail
    };
    let detailed = detail.endpoints.len();
    let ranges = client_ranges(table, rayon::current_num_threads().max(1));
    let parts: Vec<Part> = ranges
        .into_par_iter()
        .map(|clients| {
            let index = PairIndex::new(&clients, detailed, dense_pairs, chained_endpoints);
            count_clients(table, clients, index, excluded, window, keep_counts, detail)
        })
        .collect();
    let mut counted = Counted {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detailed],
        peaks: Vec::new(),
        endpoint_peaks: vec![Vec::new(); detailed],
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
        for (slot, peak) in part.endpoint_peaks {
            counted.endpoint_peaks[slot as usize].push(peak);
        }
        counted.status.extend(part.status);
        rows.extend(part.counts);
    }
    for peaks in &mut counted.endpoint_peaks {
        peaks.sort_by_key(|p| p.client);
    }
    if keep_counts {
        counted.counts = Some(count_rows(rows, window));
    }
    counted
}

/// Contiguous client ranges with about the same number of events each.
fn client_ranges(table: &EventTable, parts: usize) -> Vec<Range<usize>> {
    let clients = table.clients.len();
    let mut events = vec![0u64; clients];
    for &c in &table.client {
        events[c as usize] += 1;
    }
    let total = table.len() as u64;
    let mut ranges = Vec::with_capacity(parts);
    let (mut first, mut seen) = (0, 0);
    for (c, &n) in events.iter().enumerate() {
        seen += n;
        if seen * parts as u64 >= total * (ranges.len() as u64 + 1) && ranges.len() + 1 < parts {
            ranges.push(first..c + 1);
            first = c + 1;
        }
    }
    ranges.push(first..clients);
    ranges
}

/// The running counts of one (client, detailed endpoint) pair.
struct PairState {
    client: Id,
    endpoint: Id,
    slot: u32,
    first_row: u32,
    counts: KeyCounts,
}

/// Where each (client, detailed endpoint) pair of a client range keeps its
/// state; endpoints are given by their [`Detail`] slot.
enum PairIndex {
    /// `slots[(client - first) * endpoints + endpoint]`, `u32::MAX` for none yet.
    Dense {
        first: usize,
        endpoints: usize,
        slots: Vec<u32>,
    },
    /// Per client its pairs as a chain (`heads[client - first]`, then
    /// `next[pair]`), `u32::MAX` ending it: 4 bytes per client and per pair,
    /// for many clients over few detailed endpoints (a chain is at most that long).
    Chained {
        first: usize,
        heads: Vec<u32>,
        next: Vec<u32>,
    },
    Hashed(FxHashMap<(Id, Id), u32>),
}

/// The largest dense pair table (entries of 4 bytes).
const DENSE_PAIRS: usize = 1 << 22;
/// The most detailed endpoints for per-client chains (beyond, a hash map).
const CHAINED_ENDPOINTS: usize = 64;
/// No pair (yet), in the dense table and in chains.
const NO_PAIR: u32 = u32::MAX;

impl PairIndex {
    fn new(
        clients: &Range<usize>,
        endpoints: usize,
        dense_pairs: usize,
        chained_endpoints: usize,
    ) -> Self {
        match clients.len().checked_mul(endpoints) {
            Some(n) if n <= dense_pairs => PairIndex::Dense {
                first: clients.start,
                endpoints,
                slots: vec![NO_PAIR; n],
            },
            _ if endpoints <= chained_endpoints => PairIndex::Chained {
                first: clients.start,
                heads: vec![NO_PAIR; clients.len()],
                next: Vec::new(),
            },
            _ => PairIndex::Hashed(FxHashMap::default()),
        }
    }

    /// The index in `pairs` of (client, endpoint slot), pushed as `new_pair`
    /// when it has none.
    fn slot(
        &mut self,
        client: Id,
        endpoint: u32,
        pairs: &mut Vec<PairState>,
        new_pair: impl FnOnce() -> PairState,
    ) -> u32 {
        let push = |pairs: &mut Vec<PairState>, pair: PairState| {
            pairs.push(pair);
            (pairs.len() - 1) as u32
        };
        match self {
            PairIndex::Dense {
                first,
                endpoints,
                slots,
            } => {
                let slot = &mut slots[(client as usize - *first) * *endpoints + endpoint as usize];
                if *slot == NO_PAIR {
                    *slot = push(pairs, new_pair());
                }
                *slot
            }
            PairIndex::Chained { first, heads, next } => {
                let head = &mut heads[client as usize - *first];
                let mut at = *head;
                while at != NO_PAIR {
                    if pairs[at as usize].slot == endpoint {
                        return at;
                    }
                    at = next[at as usize];
                }
                let pair = push(pairs, new_pair());
                next.push(*head);
                *head = pair;
                pair
            }
            PairIndex::Hashed(map) => *map
                .entry((client, endpoint))
                .or_insert_with(|| push(pairs, new_pair())),
        }
    }
}

fn count_clients(
    table: &EventTable,
    clients: Range<usize>,
    mut index: PairIndex,
    excluded: &[bool],
    window: Window,
    keep_counts: bool,
    detail: &Detail,
) -> Part {
    let mut part = Part {
        overall: ScopeTally::default(),
        per_endpoint: vec![ScopeTally::default(); detail.endpoints.len()],
        peaks: Vec::new(),
        endpoint_peaks: Vec::new(),
        status: Vec::new(),
        counts: Vec::new(),
    };
    let first = clients.start;
    let mut own = vec![KeyCounts::default(); clients.len()];
    let mut statuses = vec![(0u64, 0u64); clients.len()];
    let mut pairs: Vec<PairState> = Vec::new();
    let mut ignore = |_| {};
    let rows = table.client.iter().zip(&table.ts).zip(&table.endpoint);
    for (row, ((&client, &t), &e)) in rows.enumerate() {
        let c = client as usize;
        if !clients.contains(&c) || excluded[c] {
            continue;
        }
        own[c - first].add(t, window, &mut part.overall, &mut ignore);
        match table.status[row] {
            429 => statuses[c - first].0 += 1,
            503 => statuses[c - first].1 += 1,
            _ => {}
        }
        let Some(slot) = detail.slot(e) else {
            continue;
        };
        let pair = index.slot(client, slot, &mut pairs, || PairState {
            client,
            endpoint: e,
            slot,
            first_row: row as u32,
            counts: KeyCounts::default(),
        });
        let counts = &mut part.counts;
        pairs[pair as usize].counts.add(
            t,
            window,
            &mut part.per_endpoint[slot as usize],
            &mut |(w, n)| {
                if keep_counts {
                    counts.push(row_of(row as u64, client, e, w, n));
                }
            },
        );
    }
    for (k, counts) in own.iter_mut().enumerate() {
        if counts.requests > 0 {
            counts.finish(&mut part.overall, &mut ignore);
            part.peaks.push(peak_of((first + k) as Id, counts));
        }
    }
    drop(index);
    let end_order = table.len() as u64;
    part.endpoint_peaks.reserve_exact(pairs.len());
    for mut pair in pairs {
        let (c, e, first_row) = (pair.client, pair.endpoint, u64::from(pair.first_row));
        let counts = &mut part.counts;
        pair.counts
            .finish(&mut part.per_endpoint[pair.slot as usize], &mut |(w, n)| {
                if keep_counts {
                    counts.push(row_of(end_order + first_row, c, e, w, n));
                }
            });
        part.endpoint_peaks
            .push((pair.slot, peak_of(c, &pair.counts)));
    }
    for (k, &(s429, s503)) in statuses.iter().enumerate() {
        if s429 + s503 > 0 {
            part.status.push(((first + k) as Id, s429, s503));
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
