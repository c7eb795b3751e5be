//! The rows of a range of clients grouped by client, or by groups of
//! consecutive clients: a counting sort of row indices (4 bytes per row and
//! per group), so that a pass goes through one group's requests after
//! another and holds the running state of one group at a time, not of every
//! (client, endpoint) pair at once.
//!
//! Within a group the rows stay in table order, which is time order: every
//! key still sees its requests in the order one sequential pass sees them.

use std::ops::Range;

use crate::events::{EventTable, Id};

/// A client of the range whose rows are left out, in [`ClientRows::group`].
const LEFT_OUT: u32 = u32::MAX;

/// Row indices of the clients of one range, group after group, a group being
/// at most `per_group` consecutive clients with at most `group_rows` rows
/// between them (or one client with more).
pub struct ClientRows {
    /// The clients of each group, consecutive.
    groups: Vec<Range<usize>>,
    /// `starts[g]..starts[g + 1]`: where group `g`'s rows are in `rows`.
    starts: Vec<u32>,
    /// Row indices, grouped, in table order within a group.
    rows: Vec<u32>,
}

impl ClientRows {
    /// Groups the rows of `clients` by at most `per_group` consecutive
    /// clients and `group_rows` rows, where `events[c]` is the number of rows
    /// client `c` has in the table, or 0 to leave its rows out (excluded).
    /// The whole client column is read once, whatever the number of groups.
    pub fn group(
        table: &EventTable,
        clients: Range<usize>,
        events: &[u32],
        (per_group, group_rows): (usize, usize),
    ) -> Self {
        let first = clients.start;
        let groups = bounded_groups(events, clients.clone(), per_group.max(1), group_rows);
        let mut starts = Vec::with_capacity(groups.len() + 1);
        let mut total = 0u32;
        starts.push(0);
        // Per client of the range, its group, or none when it is left out
        // (and none past the range): one read per row where a search and a
        // second check would be.
        let mut group_of = vec![LEFT_OUT; clients.len() + 1];
        for (g, group) in groups.iter().enumerate() {
            for c in group.clone() {
                total += events[c];
                if events[c] > 0 {
                    group_of[c - first] = g as u32;
                }
            }
            starts.push(total);
        }
        let outside = clients.len();
        // Rows left out are written past the kept ones, where the next kept
        // row overwrites them: no branch, since a branch taken for a random
        // part of the rows is mispredicted about as often as it is taken.
        let mut rows = vec![0u32; total as usize + 1];
        // Below `first`, the difference wraps to beyond the range.
        let local_of = |client: Id| (client as usize).wrapping_sub(first).min(outside);
        if groups.len() == 1 {
            // One group: a filter (the last write may fall one past the rows).
            let mut kept = 0usize;
            for (row, &client) in table.client.iter().enumerate() {
                rows[kept] = row as u32;
                kept += usize::from(group_of[local_of(client)] != LEFT_OUT);
            }
        } else {
            // Left out, a row goes to one place past the kept ones, which
            // never moves.
            let discard = groups.len() as u32;
            for g in &mut group_of {
                if *g == LEFT_OUT {
                    *g = discard;
                }
            }
            let mut next = starts[..starts.len() - 1].to_vec();
            next.push(total);
            for (row, &client) in table.client.iter().enumerate() {
                let g = group_of[local_of(client)];
                let at = &mut next[g as usize];
                rows[*at as usize] = row as u32;
                *at += u32::from(g != discard);
            }
        }
        rows.truncate(total as usize);
        ClientRows {
            groups,
            starts,
            rows,
        }
    }

    /// How many groups.
    pub fn groups(&self) -> usize {
        self.starts.len() - 1
    }

    /// The clients of group `g`.
    pub fn clients(&self, g: usize) -> Range<usize> {
        self.groups[g].clone()
    }

    /// The rows of group `g`, in table order.
    pub fn rows(&self, g: usize) -> &[u32] {
        &self.rows[self.starts[g] as usize..self.starts[g + 1] as usize]
    }
}

/// `parts` contiguous client ranges with about the same number of the
/// `total` events each (`events[c]`: client `c`'s).
pub fn client_ranges(events: &[u32], total: usize, parts: usize) -> Vec<Range<usize>> {
    let total = total as u64;
    let mut ranges = Vec::with_capacity(parts);
    let (mut first, mut seen) = (0, 0u64);
    for (c, &n) in events.iter().enumerate() {
        seen += u64::from(n);
        if seen * parts as u64 >= total * (ranges.len() as u64 + 1) && ranges.len() + 1 < parts {
            ranges.push(first..c + 1);
            first = c + 1;
        }
    }
    ranges.push(first..events.len());
    ranges
}

/// Most entries (clients × columns, e.g. endpoints) of the dense table a
/// pass over a group of clients keeps.
pub const GROUP_PAIRS: usize = 1 << 18;
/// Most clients in a group.
pub const GROUP_CLIENTS: usize = 1 << 16;
/// Rows whose columns are read at once.
pub const GATHERED_ROWS: usize = 1 << 13;

/// Clients per group when each client has `columns` entries in the group's
/// table: as many as fit [`GROUP_PAIRS`] (at least one), so that few clients
/// are counted as one group, streaming the table.
pub fn clients_per_group(columns: usize) -> usize {
    (GROUP_PAIRS / columns.max(1)).clamp(1, GROUP_CLIENTS)
}

/// The most rows to index at once (4 bytes each, 32 MB), beyond one
/// client's. Each index reads the whole client column, so the bound is large:
/// a thread's share of 5 million rows is indexed in one go (a million at a
/// time had read the column three times per pass, about 7% of `analyze`).
pub const INDEXED_ROWS: usize = 1 << 23;

/// The most rows in one group, beyond one client's, for a pass that holds
/// something per row of the group it counts (a sorted list of pairs, say),
/// so that it stays bounded.
pub const GROUP_ROWS: usize = 1 << 20;

/// How many rows a pass indexes at once, and puts in one group (tests vary
/// both); by default groups are bounded by their clients alone.
#[derive(Debug, Clone, Copy)]
pub struct RowBounds {
    /// Rows indexed at once ([`by_rows`]).
    pub indexed: usize,
    /// Rows in one group ([`ClientRows::group`]).
    pub group: usize,
}

impl Default for RowBounds {
    fn default() -> Self {
        RowBounds {
            indexed: INDEXED_ROWS,
            group: usize::MAX,
        }
    }
}

/// `clients` as consecutive ranges of at most `max_rows` rows each (a client
/// with more has a range of its own), `events[c]` being client `c`'s rows.
/// An empty `clients` is one empty range.
pub fn by_rows(events: &[u32], clients: Range<usize>, max_rows: usize) -> Vec<Range<usize>> {
    let ranges = bounded_groups(events, clients.clone(), usize::MAX, max_rows);
    if ranges.is_empty() {
        return vec![clients];
    }
    ranges
}

/// `clients` as groups of at most `per_group` consecutive clients and
/// `max_rows` rows (a client with more is a group of its own).
fn bounded_groups(
    events: &[u32],
    clients: Range<usize>,
    per_group: usize,
    max_rows: usize,
) -> Vec<Range<usize>> {
    let mut groups = Vec::new();
    let (mut first, mut rows) = (clients.start, 0usize);
    for c in clients.clone() {
        let n = events[c] as usize;
        if c - first == per_group || (rows > 0 && rows + n > max_rows) {
            groups.push(first..c);
            (first, rows) = (c, 0);
        }
        rows += n;
    }
    if first < clients.end {
        groups.push(first..clients.end);
    }
    groups
}

/// `column[row]` for each of `rows`, into `out` (emptied first): one tight
/// loop of independent reads, which the processor overlaps, where reading
/// row by row between other work would wait for each.
pub fn gather<T: Copy>(column: &[T], rows: &[u32], out: &mut Vec<T>) {
    out.clear();
    out.extend(rows.iter().map(|&row| column[row as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;

    #[test]
    fn rows_are_grouped_by_client_in_table_order() {
        let mut t = EventTable::default();
        for c in 0..4 {
            t.clients.intern(&format!("c{c}"));
        }
        for (ts, client) in [(0, 2), (1, 1), (2, 2), (3, 3), (4, 1), (5, 2), (6, 0)] {
            t.push(Event {
                ts,
                client,
                ..Event::default()
            });
        }
        // Client 3 is excluded (0 events), client 0 outside the range; one
        // group per client, group g being client 1 + g.
        let grouped = ClientRows::group(&t, 1..4, &[1, 2, 3, 0], (1, usize::MAX));
        assert_eq!(grouped.rows(0), [1, 4]);
        assert_eq!(grouped.rows(1), [0, 2, 5]);
        assert_eq!(grouped.rows(2), [] as [u32; 0]);
        // Groups of two clients: 1 and 2, then 3.
        let grouped = ClientRows::group(&t, 1..4, &[1, 2, 3, 0], (2, usize::MAX));
        assert_eq!(grouped.groups(), 2);
        assert_eq!((grouped.clients(0), grouped.clients(1)), (1..3, 3..4));
        assert_eq!(grouped.rows(0), [0, 1, 2, 4, 5]);
        assert_eq!(grouped.rows(1), [] as [u32; 0]);
        // At most three rows a group: client 2 (three rows) starts a group,
        // which client 3 (none) joins.
        let grouped = ClientRows::group(&t, 0..4, &[1, 2, 3, 0], (4, 3));
        assert_eq!(
            (0..grouped.groups())
                .map(|g| grouped.clients(g))
                .collect::<Vec<_>>(),
            [0..2, 2..4]
        );
        assert_eq!(grouped.rows(0), [1, 4, 6]);
        assert_eq!(grouped.rows(1), [0, 2, 5]);
    }

    proptest::proptest! {
        #[test]
        fn grouping_equals_filtering_the_table_group_by_group(
            table_clients in proptest::collection::vec(0u32..10, 0..200),
            left_out in proptest::collection::vec(proptest::bool::ANY, 10),
            (start, len) in (0usize..10, 0usize..11),
            per_group in 1usize..5,
            group_rows in proptest::sample::select(vec![1usize, 3, 20, usize::MAX]),
        ) {
            let mut t = EventTable::default();
            for c in 0..10 {
                t.clients.intern(&format!("c{c}"));
            }
            let mut events = vec![0u32; 10];
            for &client in &table_clients {
                t.push(Event { client, ..Event::default() });
                events[client as usize] += 1;
            }
            for (n, &out) in events.iter_mut().zip(&left_out) {
                if out {
                    *n = 0;
                }
            }
            let clients = start..(start + len).min(10);
            let grouped = ClientRows::group(&t, clients.clone(), &events, (per_group, group_rows));
            if group_rows == usize::MAX {
                proptest::prop_assert_eq!(grouped.groups(), clients.len().div_ceil(per_group));
            }
            // The groups cover the clients in order, each within its bounds.
            let mut next = clients.start;
            for g in 0..grouped.groups() {
                let of_group = grouped.clients(g);
                proptest::prop_assert_eq!(of_group.start, next);
                proptest::prop_assert!(!of_group.is_empty() && of_group.len() <= per_group);
                next = of_group.end;
                let rows: u32 = events[of_group.clone()].iter().sum();
                let alone = events[of_group.start..of_group.end - 1].iter().all(|&n| n == 0);
                proptest::prop_assert!(alone || rows as usize <= group_rows);
                let want: Vec<u32> = (0..table_clients.len() as u32)
                    .filter(|&row| {
                        let c = table_clients[row as usize] as usize;
                        of_group.contains(&c) && events[c] > 0
                    })
                    .collect();
                proptest::prop_assert_eq!(grouped.rows(g), &want[..]);
            }
            proptest::prop_assert_eq!(next, clients.end);
        }
    }

    #[test]
    fn ranges_hold_at_most_the_rows_asked_unless_one_client_has_more() {
        let events = [2, 0, 3, 1, 5, 1, 1];
        assert_eq!(by_rows(&events, 0..7, 4), [0..2, 2..4, 4..5, 5..7]);
        assert_eq!(by_rows(&events, 1..7, 100), vec![1..7]);
        assert_eq!(by_rows(&events, 3..3, 4), vec![3..3]);
    }
}
