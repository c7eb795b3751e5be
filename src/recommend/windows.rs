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
