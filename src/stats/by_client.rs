//! The rows of a range of clients grouped by client, or by groups of
//! consecutive clients: a counting sort of row indices (4 bytes per row and
//! per group), so that a pass goes through one group's requests after
//! another and holds the running state of one group at a time, not of every
//! (client, endpoint) pair at once.
//!
//! Within a group the rows stay in table order, which is time order: every
//! key still sees its requests in the order one sequential pass sees them.

use std::ops::Range;

use crate::events::EventTable;

/// A client of the range whose rows are left out, in [`ClientRows::group`].
const LEFT_OUT: u32 = u32::MAX;

/// Row indices of the clients of one range, group after group, a group being
/// `per_group` consecutive clients (the last one may have fewer).
pub struct ClientRows {
    /// The clients of the range.
    clients: Range<usize>,
    per_group: usize,
    /// `starts[g]..starts[g + 1]`: where group `g`'s rows are in `rows`.
    starts: Vec<u32>,
    /// Row indices, grouped, in table order within a group.
    rows: Vec<u32>,
}

impl ClientRows {
    /// Groups the rows of `clients` by `per_group` consecutive clients, where
    /// `events[c]` is the number of rows client `c` has in the table, or 0 to
    /// leave its rows out (excluded).
    pub fn group(
        table: &EventTable,
        clients: Range<usize>,
        events: &[u32],
        per_group: usize,
    ) -> Self {
        let first = clients.start;
        let per_group = per_group.max(1);
        let mut starts = Vec::with_capacity(clients.len().div_ceil(per_group) + 1);
        let mut total = 0u32;
        starts.push(0);
        for group in events[clients.clone()].chunks(per_group) {
            total += group.iter().sum::<u32>();
            starts.push(total);
        }
        // Per client of the range, its group, or none when it is left out
        // (and none past the range): one read per row where a division and a
        // second check would be.
        let mut group_of: Vec<u32> = clients
            .clone()
            .map(|c| {
                if events[c] > 0 {
                    ((c - first) / per_group) as u32
                } else {
                    LEFT_OUT
                }
            })
            .collect();
        group_of.push(LEFT_OUT);
        let outside = clients.len();
        let rows = if starts.len() == 2 {
            // One group: a filter without branches. A branch taken for a
            // random part of the rows is mispredicted about as often as it
            // is taken; here every row is written after the kept ones and
            // counted only when kept (the last write may fall one past them).
            let mut rows = vec![0u32; total as usize + 1];
            let mut kept = 0usize;
            for (row, &client) in table.client.iter().enumerate() {
                // Below `first`, the difference wraps to beyond the range.
                let local = (client as usize).wrapping_sub(first).min(outside);
                rows[kept] = row as u32;
                kept += usize::from(group_of[local] != LEFT_OUT);
            }
            rows.truncate(total as usize);
            rows
        } else {
            let mut next = starts[..starts.len() - 1].to_vec();
            let mut rows = vec![0u32; total as usize];
            for (row, &client) in table.client.iter().enumerate() {
                let local = (client as usize).wrapping_sub(first).min(outside);
                let g = group_of[local];
                if g != LEFT_OUT {
                    let at = &mut next[g as usize];
                    rows[*at as usize] = row as u32;
                    *at += 1;
                }
            }
            rows
        };
        ClientRows {
            clients,
            per_group,
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
        let first = self.clients.start + g * self.per_group;
        first..(first + self.per_group).min(self.clients.end)
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

/// `clients` as consecutive ranges of at most `max_rows` rows each (a client
/// with more has a range of its own), `events[c]` being client `c`'s rows.
pub fn by_rows(events: &[u32], clients: Range<usize>, max_rows: usize) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let (mut first, mut rows) = (clients.start, 0usize);
    for c in clients.clone() {
        let n = events[c] as usize;
        if rows > 0 && rows + n > max_rows {
            ranges.push(first..c);
            (first, rows) = (c, 0);
        }
        rows += n;
    }
    ranges.push(first..clients.end);
    ranges
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
        let grouped = ClientRows::group(&t, 1..4, &[1, 2, 3, 0], 1);
        assert_eq!(grouped.rows(0), [1, 4]);
        assert_eq!(grouped.rows(1), [0, 2, 5]);
        assert_eq!(grouped.rows(2), [] as [u32; 0]);
        // Groups of two clients: 1 and 2, then 3.
        let grouped = ClientRows::group(&t, 1..4, &[1, 2, 3, 0], 2);
        assert_eq!(grouped.groups(), 2);
        assert_eq!((grouped.clients(0), grouped.clients(1)), (1..3, 3..4));
        assert_eq!(grouped.rows(0), [0, 1, 2, 4, 5]);
        assert_eq!(grouped.rows(1), [] as [u32; 0]);
    }

    proptest::proptest! {
        #[test]
        fn grouping_equals_filtering_the_table_group_by_group(
            table_clients in proptest::collection::vec(0u32..10, 0..200),
            left_out in proptest::collection::vec(proptest::bool::ANY, 10),
            (start, len) in (0usize..10, 0usize..11),
            per_group in 1usize..5,
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
            let grouped = ClientRows::group(&t, clients.clone(), &events, per_group);
            proptest::prop_assert_eq!(grouped.groups(), clients.len().div_ceil(per_group));
            for g in 0..grouped.groups() {
                let of_group = grouped.clients(g);
                let want: Vec<u32> = (0..table_clients.len() as u32)
                    .filter(|&row| {
                        let c = table_clients[row as usize] as usize;
                        of_group.contains(&c) && events[c] > 0
                    })
                    .collect();
                proptest::prop_assert_eq!(grouped.rows(g), &want[..]);
            }
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
