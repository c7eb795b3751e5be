//! The window counts of a few (scope, client) pairs, read from the event table
//! for the baseline rule ([`super::baseline`]): one scan of the client column
//! per round, touching only the rows of the clients asked about.

use rustc_hash::FxHashMap;

use super::baseline::WindowLoader;
use crate::events::{EventTable, Id};
use crate::units::Window;

/// Loads window counts from a time-ordered table. Scope `i` is all traffic
/// when `scopes[i]` is `None`, else the endpoint with that id.
pub struct TableWindows<'a> {
    pub table: &'a EventTable,
    pub window: Window,
    pub scopes: Vec<Option<Id>>,
}

/// Scope key of all traffic in the lookup (endpoint ids are below it).
const ALL: u32 = u32::MAX;

impl WindowLoader for TableWindows<'_> {
    fn load(&mut self, asked: &[(usize, Id)]) -> Vec<Vec<(i64, u64)>> {
        let mut wanted: FxHashMap<(u32, Id), usize> = FxHashMap::default();
        let mut clients = vec![false; self.table.clients.len()];
        for (i, &(scope, client)) in asked.iter().enumerate() {
            wanted.insert((self.scopes[scope].unwrap_or(ALL), client), i);
            clients[client as usize] = true;
        }
        let mut out: Vec<Vec<(i64, u64)>> = vec![Vec::new(); asked.len()];
        let mut add = |i: usize, w: i64| match out[i].last_mut() {
            Some((last, n)) if *last == w => *n += 1,
            _ => out[i].push((w, 1)),
        };
        let t = self.table;
        for (row, &c) in t.client.iter().enumerate() {
            if !clients[c as usize] {
                continue;
            }
            let w = self.window.index(t.ts[row]);
            if let Some(&i) = wanted.get(&(ALL, c)) {
                add(i, w);
            }
            if let Some(&i) = wanted.get(&(t.endpoint[row], c)) {
                add(i, w);
            }
        }
        out
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
        /// one by one.
        #[test]
        fn windows_are_those_of_each_clients_rows(
            mut rows in proptest::collection::vec((0i64..300_000, 0u32..5, 0u32..3), 0..60),
            asked in proptest::collection::vec((0usize..3, 0u32..6), 0..8),
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
            let got = loader.load(&asked);
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
