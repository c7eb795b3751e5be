//! What a rule selects (its key, method and route, less the exempt requests),
//! worked out once per run and shared by every scenario that replays the same
//! rule with another algorithm: when it applies to some requests only, those
//! requests (rows, times, clients, endpoints, grouped by client) for its
//! summary, from which its key column for the replay follows.
//!
//! It decides nothing: a [`Subset`] only restricts columns to rows, so a
//! summary over it is the summary of the copied rows.

use std::borrow::Cow;

use rayon::prelude::*;

use super::names::{AnsweredItself, NameBits};
use super::plan::{KeyRef, PlannedRule};
use unless::Unless;

use crate::events::{ClientGroups, EventTable, Id, Interner, group_rows};
use crate::simulate::gateway::NameReading;
use crate::simulate::{ByClient, Census, NOT_APPLICABLE, Traffic, rules_in};
use crate::units::Millis;

/// A rule's requests.
#[derive(Debug)]
pub(crate) struct Selection {
    /// The requests it applies to, or `None` when it applies to all.
    subset: Option<Subset>,
}

impl Selection {
    /// What `rule` selects among the events of `table` at times `ts`, leaving
    /// out those `exempt` marks: the plain definition [`Selection::many`]
    /// keeps to.
    #[cfg(test)]
    pub(crate) fn new(
        table: &EventTable,
        ts: &[Millis],
        (rule, names): (&PlannedRule, NameReading),
        exempt: Option<&[bool]>,
    ) -> Self {
        let column = key_column(table, (rule, names), exempt);
        let ids = key_ids(table, rule.key);
        let keys = column.as_deref().unwrap_or(ids);
        let subset = Subset::of(keys, ts, ids, &table.endpoint);
        Selection { subset }
    }

    /// What each of `rules` selects, methods and paths read as `names` says:
    /// [`Selection::new`] of each, with up to 64 rules worked out in one pass
    /// over the events (a bit per rule and event for which rules apply, then
    /// each rule's rows).
    pub(crate) fn many(
        table: &EventTable,
        ts: &[Millis],
        (rules, names): (&[&PlannedRule], NameReading),
        exempt: Option<&[bool]>,
    ) -> Vec<Self> {
        let batch = |rules: &[&PlannedRule]| {
            let rows = rows_applying(table, (rules, names), exempt, EVENTS_PER_TASK);
            (rows.into_par_iter())
                .zip(rules)
                .map(|(rows, rule)| Selection {
                    subset: (rows.len() != table.len()).then(|| {
                        Subset::of_rows(rows, ts, key_ids(table, rule.key), &table.endpoint)
                    }),
                })
                .collect::<Vec<_>>()
        };
        // A rule for every method and path, with no exemption, selects where
        // its key has a value: read off the key column, without the bits
        // (unless the product answers some of the requests itself).
        let answers_some = names.answers_some_itself() && answers_any(table, names);
        let everywhere = |r: &PlannedRule| {
            exempt.is_none()
                && r.method.is_none()
                && r.route.is_none()
                && r.unless.is_empty()
                && !answers_some
        };
        let narrow: Vec<&PlannedRule> = rules.iter().copied().filter(|r| !everywhere(r)).collect();
        let mut narrowed = narrow
            .chunks(64)
            .flat_map(batch)
            .collect::<Vec<_>>()
            .into_iter();
        (rules.iter())
            .map(|rule| match everywhere(rule) {
                true => {
                    let ids = key_ids(table, rule.key);
                    Selection {
                        subset: Subset::of(ids, ts, ids, &table.endpoint),
                    }
                }
                false => narrowed.next().expect("one selection per narrow rule"),
            })
            .collect()
    }

    /// Per event, the key the rule counts by (its `key`), or [`NOT_APPLICABLE`]
    /// where the rule does not apply: the column [`Selection::new`] worked out.
    pub(crate) fn keys<'t>(&self, table: &'t EventTable, key: KeyRef) -> Cow<'t, [u32]> {
        let ids = key_ids(table, key);
        match &self.subset {
            None => Cow::Borrowed(ids),
            Some(subset) => Cow::Owned(subset.key_column(ids)),
        }
    }

    /// The requests the rule applies to, when not all.
    pub(crate) fn subset(&self) -> Option<&Subset> {
        self.subset.as_ref()
    }
}

/// Whether a product reading names `names`' way answers any of the
/// table's methods, paths or HTTP versions itself (before any rule sees the request).
fn answers_any(table: &EventTable, names: NameReading) -> bool {
    let itself = AnsweredItself::new(&table.methods, &table.paths, names);
    !itself.answers_none(table.protocols())
        || table.methods.names().any(|m| !names.reads_method(m))
        || table
            .paths
            .names()
            .collect::<Vec<_>>()
            .par_iter()
            .any(|p| names.path(p).is_none())
}

/// The key id of every event for `key` ([`NO_KEY`](crate::events::NO_KEY),
/// which is [`NOT_APPLICABLE`], where it has no value).
pub(crate) fn key_ids(table: &EventTable, key: KeyRef) -> &[Id] {
    match key {
        KeyRef::Primary => &table.client,
        KeyRef::Extra(i) => &table.extra_keys[i].ids,
    }
}

/// The names of `key`'s ids (see [`key_ids`]).
pub(crate) fn key_names(table: &EventTable, key: KeyRef) -> &Interner {
    match key {
        KeyRef::Primary => &table.clients,
        KeyRef::Extra(i) => &table.extra_keys[i].names,
    }
}

/// Per event, the key a rule counts by, or [`NOT_APPLICABLE`] where the rule's
/// method or route does not match, an exemption matches (`exempt`), or the key
/// has no value; `None` when the rule applies to every request, so that its
/// column is [`key_ids`].
#[cfg(test)]
fn key_column(
    table: &EventTable,
    (rule, names): (&PlannedRule, NameReading),
    exempt: Option<&[bool]>,
) -> Option<Vec<u32>> {
    let filter = super::names::NameFilter::new(
        &table.methods,
        &table.paths,
        (rule.method.as_deref(), rule.route.as_ref()),
        names,
    );
    if filter.picks_all(table.protocols()) && exempt.is_none() && rule.unless.is_empty() {
        return None;
    }
    let unless = unless_filters(table, rule, names);
    let ids = key_ids(table, rule.key);
    let column: Vec<u32> = (0..table.len())
        .into_par_iter()
        .map(|i| {
            let exempted = exempt.is_some_and(|mask| mask[i]);
            let (method, path) = (table.method[i], table.path_at(i));
            let taken = unless.iter().any(|f| f.picks_names(method, path));
            if filter.picks(method, path, table.protocol[i]) && !exempted && !taken {
                ids[i] // NO_KEY is NOT_APPLICABLE
            } else {
                NOT_APPLICABLE
            }
        })
        .collect();
    Some(column)
}

/// Events per parallel task finding the rows each rule applies to.
const EVENTS_PER_TASK: usize = 1 << 16;

/// Per rule of `rules` (at most 64), the rows it applies to: where its method
/// and route pick the request, no exemption (`exempt`) matches, and its key
/// has a value (as [`key_column`] has it); worked out in runs of `run` events.
fn rows_applying(
    table: &EventTable,
    (rules, reading): (&[&PlannedRule], NameReading),
    exempt: Option<&[bool]>,
    run: usize,
) -> Vec<Vec<u32>> {
    let wants: Vec<_> = (rules.iter())
        .map(|r| (r.method.as_deref(), r.route.as_ref()))
        .collect();
    let names = NameBits::new(&table.methods, &table.paths, &wants, reading);
    // Per key, the rules counting by it.
    let mut keys: Vec<(KeyRef, u64)> = Vec::new();
    for (r, rule) in rules.iter().enumerate() {
        match keys.iter_mut().find(|(key, _)| *key == rule.key) {
            Some((_, bits)) => *bits |= 1u64 << r,
            None => keys.push((rule.key, 1u64 << r)),
        }
    }
    let keys: Vec<(&[Id], u64)> = (keys.into_iter())
        .map(|(key, bits)| (key_ids(table, key), bits))
        .collect();
    let unless = Unless::new(table, rules, reading);
    let applying = |i: usize| {
        if exempt.is_some_and(|mask| mask[i]) {
            return 0;
        }
        let (method, path) = (table.method[i], table.path_at(i));
        let picked = names.picks(method, path, table.protocol[i]);
        let picked = picked & !unless.rules_not_applying(method, path, table.protocol[i]);
        (keys.iter())
            .filter(|(ids, _)| ids[i] == NOT_APPLICABLE) // NO_KEY
            .fold(picked, |bits, (_, of_key)| bits & !of_key)
    };
    // Each run of `run` events gives each rule's rows in it, in parallel; each
    // rule's rows are then its runs' one after another.
    let pieces: Vec<Vec<Vec<u32>>> = (0..table.len().div_ceil(run))
        .into_par_iter()
        .map(|piece| {
            let mut rows = vec![Vec::new(); rules.len()];
            for i in piece * run..table.len().min((piece + 1) * run) {
                for r in rules_in(applying(i)) {
                    rows[r].push(i as u32);
                }
            }
            rows
        })
        .collect();
    (0..rules.len())
        .into_par_iter()
        .map(|r| {
            let mut rows = Vec::with_capacity(pieces.iter().map(|p| p[r].len()).sum());
            for piece in &pieces {
                rows.extend_from_slice(&piece[r]);
            }
            rows
        })
        .collect()
}

/// The filters of the (method, route) pairs `rule` does not apply under
/// ([`PlannedRule::unless`]), names read as `reading` says.
#[cfg(test)]
fn unless_filters(
    table: &EventTable,
    rule: &PlannedRule,
    reading: NameReading,
) -> Vec<super::names::NameFilter> {
    (rule.unless.iter())
        .map(|(method, route)| {
            super::names::NameFilter::new(
                &table.methods,
                &table.paths,
                (method.as_deref(), route.as_ref()),
                reading,
            )
        })
        .collect()
}

/// Some of the events: their rows (in time order), times, clients (by the
/// rule's key) and endpoints, and the same rows grouped by client.
#[derive(Debug)]
pub(crate) struct Subset {
    rows: Vec<u32>,
    ts: Vec<Millis>,
    client: Vec<u32>,
    endpoint: Vec<u32>,
    /// Positions in the subset grouped by client.
    groups: ClientGroups,
    /// `ts[groups.rows[i]]` at `i`.
    grouped_ts: Vec<Millis>,
    /// What no decision changes of these events, shared by their summaries.
    census: Census,
}

impl Subset {
    /// The events whose key in `keys` is not [`NOT_APPLICABLE`], with their
    /// times `ts`, `client` and `endpoint` ids; `None` when that is every event.
    pub(crate) fn of(
        keys: &[u32],
        ts: &[Millis],
        client: &[u32],
        endpoint: &[u32],
    ) -> Option<Self> {
        if keys.iter().all(|&k| k != NOT_APPLICABLE) {
            return None;
        }
        let rows: Vec<u32> = (0..keys.len() as u32)
            .filter(|&i| keys[i as usize] != NOT_APPLICABLE)
            .collect();
        Some(Self::of_rows(rows, ts, client, endpoint))
    }

    /// The events at `rows` (in order), with their times `ts`, `client` and
    /// `endpoint` ids.
    pub(crate) fn of_rows(rows: Vec<u32>, ts: &[Millis], client: &[u32], endpoint: &[u32]) -> Self {
        let mut subset = Subset {
            ts: Vec::new(),
            client: Vec::new(),
            endpoint: Vec::new(),
            groups: ClientGroups {
                offsets: Vec::new(),
                rows: Vec::new(),
            },
            grouped_ts: Vec::new(),
            census: Census::new(&[], &[]),
            rows,
        };
        subset.ts = subset.pick(ts);
        subset.client = subset.pick(client);
        subset.endpoint = subset.pick(endpoint);
        let groups = subset.client.iter().max().map_or(0, |&c| c as usize + 1);
        subset.groups = group_rows(&subset.client, groups);
        subset.grouped_ts = (subset.groups.rows.par_iter())
            .map(|&i| subset.ts[i as usize])
            .collect();
        subset.census = Census::new(&subset.client, &subset.endpoint);
        subset
    }

    /// Per event, its key in `ids` within the subset, [`NOT_APPLICABLE`] outside.
    pub(crate) fn key_column(&self, ids: &[u32]) -> Vec<u32> {
        let mut column = vec![NOT_APPLICABLE; ids.len()];
        for &row in &self.rows {
            column[row as usize] = ids[row as usize];
        }
        column
    }

    /// The subset's rows, in increasing order.
    pub(crate) fn rows(&self) -> &[u32] {
        &self.rows
    }

    /// The values of `column` (one per event) at the subset's rows.
    pub(crate) fn pick<T: Copy + Send + Sync>(&self, column: &[T]) -> Vec<T> {
        (self.rows.par_iter())
            .map(|&i| column[i as usize])
            .collect()
    }

    /// `traffic` (all events) restricted to the subset, grouped by client.
    pub(crate) fn traffic<'a>(&'a self, traffic: &Traffic<'a>) -> Traffic<'a> {
        Traffic {
            ts: &self.ts,
            client: &self.client,
            endpoint: &self.endpoint,
            by_client: Some(ByClient {
                groups: &self.groups,
                ts: &self.grouped_ts,
                allowed: None,
            }),
            census: Some(&self.census),
            ..*traffic
        }
    }
}

mod shared_keys;
mod unless;

pub(crate) use shared_keys::shared_keys;
#[cfg(test)]
use shared_keys::shared_keys_in_blocks;

#[cfg(test)]
mod tests;
