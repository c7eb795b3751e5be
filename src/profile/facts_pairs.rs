//! The (client, endpoint) pairs of one group of clients, with their requests
//! and whether any of them was a client error, handed out in (client,
//! endpoint) order. Two ways to count them, with the same answers:
//!
//! - a dense table of every (client of the group, endpoint) entry, reset
//!   through the pairs touched: one increment per request, but at most
//!   [`GROUP_PAIRS`](crate::stats::by_client::GROUP_PAIRS) entries, so with many endpoints a group holds few
//!   clients and its rows lie far apart in the table;
//! - one key per request (its endpoint and whether it was a client error),
//!   written into its client's stretch of a buffer (the clients' requests
//!   are known beforehand), each stretch then sorted ([`sort_keys`]) and
//!   read as runs: memory follows the group's requests, not its clients
//!   times the endpoints, so a group stays many clients wide, its rows read
//!   nearly in sequence, however many endpoints there are.

use crate::events::Id;
use crate::stats::by_client::{GROUP_CLIENTS, GROUP_ROWS, clients_per_group};
use crate::stats::radix::sort_keys;

/// Counting with the dense table as long as a group of it holds at least
/// this many clients; by sorting beyond.
const DENSE_GROUP_CLIENTS: usize = 128;

/// How the pairs of a group are counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PairCounting {
    Dense,
    Sorted,
}

impl PairCounting {
    /// The way for a table of `endpoints` endpoints: sorting when a dense
    /// group would hold few clients and a sorted key (an endpoint id and one
    /// bit) fits 32 bits.
    pub(super) fn for_endpoints(endpoints: usize) -> PairCounting {
        if clients_per_group(endpoints) >= DENSE_GROUP_CLIENTS || key_bits(endpoints) > u32::BITS {
            PairCounting::Dense
        } else {
            PairCounting::Sorted
        }
    }

    /// Clients per group, counting this way with `endpoints` endpoints.
    pub(super) fn clients_per_group(self, endpoints: usize) -> usize {
        match self {
            PairCounting::Dense => clients_per_group(endpoints),
            PairCounting::Sorted => GROUP_CLIENTS,
        }
    }

    /// Most rows in a group, counting this way: sorting holds a key per row
    /// of the group, the dense table none.
    pub(super) fn group_rows(self) -> usize {
        match self {
            PairCounting::Dense => usize::MAX,
            PairCounting::Sorted => GROUP_ROWS,
        }
    }
}

/// Whether a status is a client error: 400–499 other than 429 (a limiter's
/// answer is not the client's mistake).
fn is_client_error(status: u16) -> bool {
    (400..500).contains(&status) && status != 429
}

/// Bits of a sorted key: an endpoint id above the error bit.
fn key_bits(endpoints: usize) -> u32 {
    usize::BITS - endpoints.saturating_sub(1).leading_zeros() + 1
}

/// The pairs of the group being counted, with buffers kept from one group to
/// the next.
pub(super) enum PairCounts {
    Dense {
        endpoints: usize,
        /// `count[local * endpoints + e]`: requests of the group's client
        /// `local` to endpoint `e`; `error[..]` the same place: whether it
        /// had a client error there.
        count: Vec<u32>,
        error: Vec<bool>,
        /// The pairs with a count, to read and reset.
        touched: Vec<(u32, Id)>,
    },
    Sorted {
        /// Every key below 2^`bits` (at most 32): a request's endpoint above
        /// one bit, whether it was a client error in that bit.
        bits: u32,
        /// The keys, client `local`'s in `keys[starts[local]..starts[local + 1]]`.
        keys: Vec<u32>,
        starts: Vec<u32>,
        /// Where client `local`'s next key goes.
        next: Vec<u32>,
        scratch: Vec<u32>,
    },
}

impl PairCounts {
    /// For groups of at most `per_group` clients, of `endpoints` endpoints.
    pub(super) fn new(counting: PairCounting, per_group: usize, endpoints: usize) -> Self {
        match counting {
            PairCounting::Dense => PairCounts::Dense {
                endpoints,
                count: vec![0; per_group * endpoints],
                error: vec![false; per_group * endpoints],
                touched: Vec::new(),
            },
            PairCounting::Sorted => {
                let bits = key_bits(endpoints);
                assert!(bits <= u32::BITS, "an endpoint id too wide for 32-bit keys");
                PairCounts::Sorted {
                    bits,
                    keys: Vec::new(),
                    starts: Vec::new(),
                    next: Vec::new(),
                    scratch: Vec::new(),
                }
            }
        }
    }

    /// Starts a group whose client `local` has `requests[local]` requests
    /// (all of them added before the next [`Self::drain`]).
    pub(super) fn begin(&mut self, requests: &[u32]) {
        if let PairCounts::Sorted {
            keys, starts, next, ..
        } = self
        {
            starts.clear();
            starts.push(0);
            let mut total = 0u32;
            for &n in requests {
                total += n;
                starts.push(total);
            }
            next.clear();
            next.extend_from_slice(&starts[..requests.len()]);
            // Every key is written before it is read: no need to clear them.
            if keys.len() < total as usize {
                keys.resize(total as usize, 0);
            }
        }
    }

    /// Adds request `k` of each column: client `clients[k]` (the group's
    /// first being `first`), endpoint `endpoints[k]`, status `statuses[k]`;
    /// and calls `each(k, local client, whether it is a client error)` in
    /// the same loop.
    #[inline]
    pub(super) fn add(
        &mut self,
        first: usize,
        (clients, endpoints, statuses): (&[Id], &[Id], &[u16]),
        mut each: impl FnMut(usize, usize, bool),
    ) {
        let requests = clients.iter().zip(endpoints).zip(statuses).enumerate();
        match self {
            PairCounts::Dense {
                endpoints: columns,
                count,
                error,
                touched,
            } => {
                for (k, ((&c, &e), &status)) in requests {
                    let local = c as usize - first;
                    let place = local * *columns + e as usize;
                    if count[place] == 0 {
                        touched.push((local as u32, e));
                    }
                    count[place] += 1;
                    let client_error = is_client_error(status);
                    if client_error {
                        error[place] = true;
                    }
                    each(k, local, client_error);
                }
            }
            PairCounts::Sorted { keys, next, .. } => {
                for (k, ((&c, &e), &status)) in requests {
                    let local = c as usize - first;
                    let at = &mut next[local];
                    let client_error = is_client_error(status);
                    keys[*at as usize] = e << 1 | u32::from(client_error);
                    *at += 1;
                    each(k, local, client_error);
                }
            }
        }
    }

    /// `visit(local client, endpoint, requests, any client error)` of every
    /// pair added since the group began, in (client, endpoint) order; then
    /// forgets them.
    pub(super) fn drain(&mut self, mut visit: impl FnMut(usize, Id, u64, bool)) {
        match self {
            PairCounts::Dense {
                endpoints,
                count,
                error,
                touched,
            } => {
                touched.sort_unstable();
                for &(local, e) in touched.iter() {
                    let place = local as usize * *endpoints + e as usize;
                    visit(local as usize, e, u64::from(count[place]), error[place]);
                    (count[place], error[place]) = (0, false);
                }
                touched.clear();
            }
            PairCounts::Sorted {
                bits,
                keys,
                starts,
                next,
                scratch,
            } => {
                debug_assert_eq!(next[..], starts[1..], "requests as announced");
                for (local, span) in starts.windows(2).enumerate() {
                    let own = &mut keys[span[0] as usize..span[1] as usize];
                    sort_keys(own, scratch, *bits);
                    visit_runs(own, |e, n, error| visit(local, e, n, error));
                }
            }
        }
    }
}

/// `visit(endpoint, requests, any client error)` of each run of equal
/// endpoints of sorted keys.
fn visit_runs(keys: &[u32], mut visit: impl FnMut(Id, u64, bool)) {
    let mut at = 0;
    while at < keys.len() {
        let endpoint = keys[at] >> 1;
        let mut end = at + 1;
        while end < keys.len() && keys[end] >> 1 == endpoint {
            end += 1;
        }
        // Sorted, a pair's error keys (bit 1) come last.
        visit(endpoint, (end - at) as u64, keys[end - 1] & 1 == 1);
        at = end;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    proptest::proptest! {
        /// Two groups one after the other, counted both ways and by a map.
        #[test]
        fn sorted_and_dense_pairs_equal_a_map_of_pairs(
            endpoints in 1usize..3000,
            groups in proptest::collection::vec(
                proptest::collection::vec((0u32..6, 0u32..3000, proptest::bool::ANY), 0..3000),
                1..3,
            ),
        ) {
            let per_group = 6;
            let mut dense = PairCounts::new(PairCounting::Dense, per_group, endpoints);
            let mut sorted = PairCounts::new(PairCounting::Sorted, per_group, endpoints);
            for (g, requests) in groups.iter().enumerate() {
                let first = 10 * g;
                let clients: Vec<Id> = requests.iter().map(|r| first as Id + r.0).collect();
                let ends: Vec<Id> = requests.iter().map(|r| r.1 % endpoints as Id).collect();
                let statuses: Vec<u16> = requests.iter().map(|r| if r.2 { 404 } else { 200 }).collect();
                let mut want: BTreeMap<(usize, Id), (u64, bool)> = BTreeMap::new();
                let mut per_client = vec![0u32; per_group];
                for k in 0..requests.len() {
                    let pair = want.entry((clients[k] as usize - first, ends[k])).or_default();
                    pair.0 += 1;
                    pair.1 |= is_client_error(statuses[k]);
                    per_client[clients[k] as usize - first] += 1;
                }
                let want: Vec<(usize, Id, u64, bool)> =
                    want.into_iter().map(|((l, e), (n, err))| (l, e, n, err)).collect();
                for pairs in [&mut dense, &mut sorted] {
                    pairs.begin(&per_client);
                    // Added in two parts, as chunks of rows are.
                    let half = requests.len() / 2;
                    let mut each = vec![];
                    pairs.add(first, (&clients[..half], &ends[..half], &statuses[..half]), |k, l, err| each.push((k, l, err)));
                    pairs.add(first, (&clients[half..], &ends[half..], &statuses[half..]), |k, l, err| each.push((half + k, l, err)));
                    let want_each: Vec<(usize, usize, bool)> = (0..requests.len())
                        .map(|k| (k, clients[k] as usize - first, is_client_error(statuses[k])))
                        .collect();
                    proptest::prop_assert_eq!(each, want_each);
                    let mut got = Vec::new();
                    pairs.drain(|l, e, n, err| got.push((l, e, n, err)));
                    proptest::prop_assert_eq!(&got, &want);
                }
            }
        }
    }

    #[test]
    fn many_endpoints_are_sorted_and_few_dense() {
        assert_eq!(PairCounting::for_endpoints(30), PairCounting::Dense);
        assert_eq!(PairCounting::for_endpoints(1 << 20), PairCounting::Sorted);
        assert_eq!(PairCounting::for_endpoints(usize::MAX), PairCounting::Dense);
    }
}
