//! The event table: every parsed request as one row of a few integer columns,
//! ordered by time (ties keep input order).
//!
//! Clients and endpoints are interned to dense `u32` ids so that statistics and
//! simulation index plain vectors instead of hashing strings. This module owns the
//! layout and the ordering guarantee; it knows nothing about log formats.

mod interner;
mod protocol;
mod stretches;
mod time_order;

pub use interner::{Interner, hash32, spread_hash};
pub use protocol::{Protocol, ProtocolSet};
use stretches::Stretches;
use time_order::TimeOrder;

use crate::units::Millis;

/// Rows out of time order only within stretches of at most this many are
/// put in order in place, stretch by stretch ([`Stretches`]); rows out of
/// order over longer spans, by an order worked out over the whole table
/// (tests take that way past 64 rows, so that their tables take both).
const MAX_STRETCH: usize = if cfg!(test) { 64 } else { 1 << 18 };

/// Dense id of an interned string (a client key or an endpoint).
pub type Id = u32;

/// A limiter decision recorded in the log itself (status 429/503 or nginx `$limit_req_status`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Logged {
    /// Nothing in the line says whether a limiter acted.
    #[default]
    Unknown,
    /// `$limit_req_status` PASSED, or a status other than 429/503.
    Passed,
    /// `$limit_req_status` DELAYED (admitted after a wait).
    Delayed,
    /// `$limit_req_status` REJECTED, or status 429/503 when no limiter field is logged.
    Rejected,
    /// `$limit_req_status` DELAYED_DRY_RUN.
    DelayedDryRun,
    /// `$limit_req_status` REJECTED_DRY_RUN.
    RejectedDryRun,
}

impl Logged {
    /// Parses nginx's `$limit_req_status` values; `-` and empty mean unknown.
    pub fn from_limit_req_status(value: &[u8]) -> Logged {
        match value {
            b"PASSED" => Logged::Passed,
            b"DELAYED" => Logged::Delayed,
            b"REJECTED" => Logged::Rejected,
            b"DELAYED_DRY_RUN" => Logged::DelayedDryRun,
            b"REJECTED_DRY_RUN" => Logged::RejectedDryRun,
            _ => Logged::Unknown,
        }
    }

    /// Whether the real limiter admitted the request (dry-run rejections count as
    /// what the limiter *would* have done: rejected).
    pub fn admitted(self) -> Option<bool> {
        match self {
            Logged::Unknown => None,
            Logged::Passed | Logged::Delayed | Logged::DelayedDryRun => Some(true),
            Logged::Rejected | Logged::RejectedDryRun => Some(false),
        }
    }
}

/// How precise the timestamps of an input are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Every timestamp was a whole second (`$time_local`, `%t`).
    Second,
    /// At least one timestamp carried a fraction of a second (`$msec`, ISO 8601 with fraction, epoch floats).
    Millisecond,
}

/// Key id meaning "no value for this key" (a request an nginx zone would not account).
pub const NO_KEY: Id = Id::MAX;

/// One parsed request, before it lands in the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Event {
    pub ts: Millis,
    pub client: Id,
    pub endpoint: Id,
    /// The request path without its query string (what policy routes match).
    pub path: Id,
    pub method: Id,
    pub status: u16,
    pub logged: Logged,
    pub protocol: Protocol,
}

/// The values of one more client key (a policy rule keyed differently from `--key`).
#[derive(Debug, Default, Clone)]
pub struct KeyColumn {
    /// Per event: the key id, or [`NO_KEY`].
    pub ids: Vec<Id>,
    pub names: Interner,
}

/// Columnar storage of all events, time-ordered once [`EventTable::sort_by_time`] ran.
#[derive(Debug, Default, Clone)]
pub struct EventTable {
    pub ts: Vec<Millis>,
    pub client: Vec<Id>,
    pub endpoint: Vec<Id>,
    /// Path id per event, or empty when ingestion kept no paths (every
    /// event's path is then the empty one, id 0): read it with [`EventTable::path_at`].
    pub path: Vec<Id>,
    pub method: Vec<Id>,
    pub status: Vec<u16>,
    /// Limiter decisions read from the log ([`Logged::Unknown`] where a line had none).
    pub logged: Vec<Logged>,
    /// HTTP versions ([`Protocol::Unknown`] where a line had none).
    pub protocol: Vec<Protocol>,
    /// Columns of the extra keys asked for at ingestion, in the order asked.
    pub extra_keys: Vec<KeyColumn>,
    pub clients: Interner,
    pub endpoints: Interner,
    pub paths: Interner,
    pub methods: Interner,
}

impl EventTable {
    /// Number of events.
    pub fn len(&self) -> usize {
        self.ts.len()
    }

    /// True when there are no events.
    pub fn is_empty(&self) -> bool {
        self.ts.is_empty()
    }

    /// Appends one event (ids must come from this table's interners).
    pub fn push(&mut self, e: Event) {
        self.logged.push(e.logged);
        self.ts.push(e.ts);
        self.client.push(e.client);
        self.endpoint.push(e.endpoint);
        self.path.push(e.path);
        self.method.push(e.method);
        self.status.push(e.status);
        self.protocol.push(e.protocol);
    }

    /// True when at least one line recorded a limiter decision.
    pub fn has_logged_decisions(&self) -> bool {
        self.logged.iter().any(|&l| l != Logged::Unknown)
    }

    /// The HTTP versions the events were sent with.
    pub fn protocols(&self) -> ProtocolSet {
        ProtocolSet::of(self.protocol.iter().copied())
    }

    /// The path id of row `i` (0, the empty path, when no paths were kept).
    pub fn path_at(&self, i: usize) -> Id {
        self.path.get(i).copied().unwrap_or(0)
    }

    /// The event at row `i`.
    pub fn get(&self, i: usize) -> Event {
        Event {
            ts: self.ts[i],
            client: self.client[i],
            endpoint: self.endpoint[i],
            path: self.path_at(i),
            method: self.method[i],
            status: self.status[i],
            logged: self.logged[i],
            protocol: self.protocol[i],
        }
    }

    /// Orders rows by time; rows with equal times keep their input order.
    pub fn sort_by_time(&mut self) {
        if self.ts.is_sorted() {
            return;
        }
        if let Some(stretches) = Stretches::find(&self.ts, MAX_STRETCH) {
            self.permute_in_place(&stretches);
            return;
        }
        let order = TimeOrder::of(&self.ts);
        self.ts = order.sorted_times(std::mem::take(&mut self.ts));
        // The id columns one after another, each on every core and written
        // into the memory the one before it left: one new column of ids in
        // all, not one per column (fresh memory costs a fault per page).
        let mut spare: Vec<Id> = Vec::new();
        for column in self.id_columns() {
            order.permute_into(column, &mut spare);
            std::mem::swap(column, &mut spare);
        }
        self.status = order.permute(&self.status);
        self.logged = order.permute(&self.logged);
        self.protocol = order.permute(&self.protocol);
    }

    /// Puts every column in the order of `stretches`, in place.
    fn permute_in_place(&mut self, stretches: &Stretches) {
        stretches.permute(&mut self.ts);
        for column in self.id_columns() {
            stretches.permute(column);
        }
        stretches.permute(&mut self.status);
        stretches.permute(&mut self.logged);
        stretches.permute(&mut self.protocol);
    }

    /// Every column of ids one per row: both ways of putting rows in time
    /// order move these alike (the path column only when paths were kept).
    fn id_columns(&mut self) -> impl Iterator<Item = &mut Vec<Id>> {
        let paths = (!self.path.is_empty()).then_some(&mut self.path);
        [&mut self.client, &mut self.endpoint, &mut self.method]
            .into_iter()
            .chain(paths)
            .chain(self.extra_keys.iter_mut().map(|c| &mut c.ids))
    }

    /// Time of the first and last event.
    pub fn span(&self) -> Option<(Millis, Millis)> {
        Some((*self.ts.first()?, *self.ts.last()?))
    }

    /// Row indices grouped by client, each group in time order.
    /// `offsets[c]..offsets[c + 1]` indexes `rows` for client `c`.
    pub fn rows_by_client(&self) -> ClientGroups {
        group_rows(&self.client, self.clients.len())
    }
}

/// Rows grouped by a dense key (a counting sort, so each group keeps time order).
#[derive(Debug, Clone)]
pub struct ClientGroups {
    pub offsets: Vec<usize>,
    pub rows: Vec<u32>,
}

impl ClientGroups {
    /// The rows of group `c`.
    pub fn rows(&self, c: usize) -> &[u32] {
        &self.rows[self.offsets[c]..self.offsets[c + 1]]
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True when there are no groups.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Counting sort of row indices by `keys` (values below `groups`).
pub fn group_rows(keys: &[Id], groups: usize) -> ClientGroups {
    let mut offsets = vec![0usize; groups + 1];
    for &k in keys {
        offsets[k as usize + 1] += 1;
    }
    for i in 0..groups {
        offsets[i + 1] += offsets[i];
    }
    let mut next = offsets.clone();
    let mut rows = vec![0u32; keys.len()];
    for (i, &k) in keys.iter().enumerate() {
        let slot = &mut next[k as usize];
        rows[*slot] = i as u32;
        *slot += 1;
    }
    ClientGroups { offsets, rows }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(ts: Millis, client: Id) -> Event {
        Event {
            ts,
            client,
            status: 200,
            ..Event::default()
        }
    }

    #[test]
    fn sorting_is_stable_for_equal_times() {
        let mut t = EventTable::default();
        for (ts, c) in [(5, 0), (1, 1), (5, 2), (1, 3), (3, 4)] {
            t.push(event(ts, c));
        }
        t.sort_by_time();
        assert_eq!(t.ts, vec![1, 1, 3, 5, 5]);
        assert_eq!(t.client, vec![1, 3, 4, 0, 2]);
    }

    proptest::proptest! {
        /// Every column (paths and extra keys too) follows the stable time
        /// order, whether the rows are out of order in short stretches
        /// (sorted in place) or over the whole table (past 64 rows in tests).
        #[test]
        fn every_column_follows_the_stable_time_order(
            steps in proptest::collection::vec(0i64..3, 0..400),
            window in proptest::sample::select(vec![1usize, 5, 30, 400]),
            seed: u64,
            paths: bool,
        ) {
            // Times in order, then reversed within windows: local disorder
            // for short windows, a long one for 400.
            let mut t = 0;
            let mut times: Vec<Millis> = steps.iter().map(|&s| { t += s * 1000; t }).collect();
            for (k, chunk) in times.chunks_mut(window).enumerate() {
                if (seed >> (k % 64)) & 1 == 1 {
                    chunk.reverse();
                }
            }
            let mut table = EventTable {
                extra_keys: vec![KeyColumn::default(), KeyColumn::default()],
                ..EventTable::default()
            };
            let logged = [Logged::Unknown, Logged::Passed, Logged::Delayed, Logged::Rejected];
            for (i, &ts) in times.iter().enumerate() {
                let i32 = i as Id;
                table.push(Event {
                    ts,
                    client: i32,
                    endpoint: i32 + 1,
                    path: i32 + 2,
                    method: i32 + 3,
                    status: i as u16,
                    logged: logged[i % 4],
                    protocol: Protocol::ALL[i % Protocol::ALL.len()],
                });
                table.extra_keys[0].ids.push(i32 + 4);
                table.extra_keys[1].ids.push(i32 + 5);
            }
            if !paths {
                table.path.clear();
            }
            let mut order: Vec<Id> = (0..times.len() as Id).collect();
            order.sort_by_key(|&i| times[i as usize]);
            table.sort_by_time();
            let shifted = |k: Id| order.iter().map(|&i| i + k).collect::<Vec<Id>>();
            proptest::prop_assert_eq!(&table.client, &shifted(0));
            proptest::prop_assert_eq!(&table.endpoint, &shifted(1));
            let want_paths = if paths { shifted(2) } else { Vec::new() };
            proptest::prop_assert_eq!(&table.path, &want_paths);
            proptest::prop_assert_eq!(&table.method, &shifted(3));
            proptest::prop_assert_eq!(&table.extra_keys[0].ids, &shifted(4));
            proptest::prop_assert_eq!(&table.extra_keys[1].ids, &shifted(5));
            let status: Vec<u16> = order.iter().map(|&i| i as u16).collect();
            proptest::prop_assert_eq!(&table.status, &status);
            let want_logged: Vec<Logged> = order.iter().map(|&i| logged[i as usize % 4]).collect();
            proptest::prop_assert_eq!(&table.logged, &want_logged);
            let want_protocol: Vec<Protocol> =
                order.iter().map(|&i| Protocol::ALL[i as usize % Protocol::ALL.len()]).collect();
            proptest::prop_assert_eq!(&table.protocol, &want_protocol);
            let want_times: Vec<Millis> = order.iter().map(|&i| times[i as usize]).collect();
            proptest::prop_assert_eq!(&table.ts, &want_times);
        }
    }

    #[test]
    fn logged_decisions_are_detected() {
        let mut t = EventTable::default();
        t.push(event(1, 0));
        assert!(!t.has_logged_decisions());
        t.push(Event {
            logged: Logged::Rejected,
            ..event(2, 0)
        });
        assert!(t.has_logged_decisions());
        assert_eq!(t.get(1).logged, Logged::Rejected);
    }

    #[test]
    fn groups_keep_time_order() {
        let g = group_rows(&[1, 0, 1, 2, 0], 3);
        assert_eq!(g.rows(0), &[1, 4]);
        assert_eq!(g.rows(1), &[0, 2]);
        assert_eq!(g.rows(2), &[3]);
    }
}
