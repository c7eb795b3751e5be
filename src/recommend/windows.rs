//! The window counts of a few (scope, client) pairs, read from the event table
//! for the baseline rule ([`super::baseline`]): one scan of the client column
//! per round, touching only the rows of the clients asked about. The rows are
//! read in ranges on every core, and each pair's windows joined in range order
//! (a window that goes on from one range into the next is added up).

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::baseline::WindowLoader;
use crate::events::{EventTable, Id};
use crate::stats::row_ranges::split_rows;
use crate::units::Window;

/// Loads window counts from a time-ordered table. Scope `i` is all traffic
/// when `scopes[i]` is `None`, else the endpoint with that id.
pub struct TableWindows<'a> {
    pub table: &'a EventTable,
    pub window: Window,
    pub scopes: Vec<Option<Id>>,
}

impl WindowLoader for TableWindows<'_> {
    fn load(&mut self, asked: &[(usize, Id)]) -> Vec<Vec<(i64, u64)>> {
        let t = self.table;
        // Per client: the asked pair of all its traffic, and whether a pair
        // of one of its endpoints is asked.
        let mut all_of = vec![NOT_ASKED; t.clients.len()];
        let mut of_endpoint = vec![false; t.clients.len()];
        let mut by_endpoint: FxHashMap<(Id, Id), usize> = FxHashMap::default();
        for (i, &(scope, client)) in asked.iter().enumerate() {
            match self.scopes[scope] {
                None => all_of[client as usize] = i,
                Some(endpoint) => {
                    by_endpoint.insert((endpoint, client), i);
                    of_endpoint[client as usize] = true;
                }
            }
        }
        let window = self.window;
        let ranges = split_rows(t.len(), rayon::current_num_threads(), 1);
        let parts: Vec<Vec<Vec<(i64, u64)>>> = ranges
            .into_par_iter()
            .map(|rows| {
                let mut out: Vec<Vec<(i64, u64)>> = vec![Vec::new(); asked.len()];
                let first = rows.start;
                for (k, &c) in t.client[rows].iter().enumerate() {
                    let (all, endpoints) = (all_of[c as usize], of_endpoint[c as usize]);
                    if all == NOT_ASKED && !endpoints {
                        continue;
                    }
                    let row = first + k;
                    let w = window.index(t.ts[row]);
                    if all != NOT_ASKED {
                        add(&mut out[all], w, 1);
                    }
                    if endpoints && let Some(&i) = by_endpoint.get(&(t.endpoint[row], c)) {
                        add(&mut out[i], w, 1);
                    }
                }
                out
            })
            .collect();
        let mut parts = parts.into_iter();
        let mut out = parts
            .next()
            .unwrap_or_else(|| vec![Vec::new(); asked.len()]);
        for part in parts {
            for (windows, more) in out.iter_mut().zip(part) {
                let mut more = more.into_iter();
                if let Some((w, n)) = more.next() {
                    add(windows, w, n);
                }
                windows.extend(more);
            }
        }
        out
    }
}

/// No pair of all traffic asked about the client.
const NOT_ASKED: usize = usize::MAX;

/// Adds `n` requests in window `w` to `windows` (in window order, `w` the
/// last one's or after it).
fn add(windows: &mut Vec<(i64, u64)>, w: i64, n: u64) {
    match windows.last_mut() {
        Some((last, count)) if *last == w => *count += n,
        _ => windows.push((w, n)),
    }
}

/// How many windows the table spans, from its first to its last request.
pub fn span_windows(table: &EventTable, window: Window) -> u64 {
    table.span().map_or(0, |(a, b)| {
        (window.index(b) - window.index(a)).unsigned_abs() + 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;

    proptest::proptest! {
        /// Each asked (scope, client) gets the windows of its rows, counted
        /// one by one, whatever the ranges the rows are read in.
        #[test]
        fn windows_are_those_of_each_clients_rows(
            mut rows in proptest::collection::vec((0i64..300_000, 0u32..5, 0u32..3), 0..60),
            asked in proptest::collection::vec((0usize..3, 0u32..6), 0..8),
            threads in 1usize..6,
        ) {
            rows.sort_by_key(|r| r.0);
            let mut table = EventTable::default();
            for c in 0..6 {
                table.clients.intern(&format!("c{c}"));
            }
            for &(ts, client, endpoint) in &rows {
                table.push(Event { ts, client, endpoint, ..Event::default() });
            }
            let window: Window = "1m".parse().unwrap();
            let scopes = vec![None, Some(0), Some(2)];
            // Each pair asked once, as the callers ask.
            let mut seen = std::collections::HashSet::new();
            let asked: Vec<(usize, Id)> = asked.into_iter().filter(|a| seen.insert(*a)).collect();
            let mut loader = TableWindows { table: &table, window, scopes: scopes.clone() };
            // As many ranges of rows as threads.
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let got = pool.install(|| loader.load(&asked));
            for (&(scope, client), windows) in asked.iter().zip(&got) {
                let mut want: Vec<(i64, u64)> = Vec::new();
                for &(ts, c, e) in &rows {
                    if c == client && scopes[scope].is_none_or(|s| s == e) {
                        match want.last_mut() {
                            Some((w, n)) if *w == window.index(ts) => *n += 1,
                            _ => want.push((window.index(ts), 1)),
                        }
                    }
                }
                proptest::prop_assert_eq!(windows, &want);
            }
        }
    }
}
