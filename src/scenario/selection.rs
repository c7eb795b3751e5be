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

use super::names::NameFilter;
use super::plan::{KeyRef, PlannedRule};
use crate::events::{ClientGroups, EventTable, Id, group_rows};
use crate::simulate::{ByClient, Census, NOT_APPLICABLE, Traffic};
use crate::units::Millis;

/// A rule's requests.
#[derive(Debug)]
pub(crate) struct Selection {
    /// The requests it applies to, or `None` when it applies to all.
    subset: Option<Subset>,
}

impl Selection {
    /// What `rule` selects among the events of `table` at times `ts`, leaving
    /// out those `exempt` marks.
    pub(crate) fn new(
        table: &EventTable,
        ts: &[Millis],
        rule: &PlannedRule,
        exempt: Option<&[bool]>,
    ) -> Self {
        let column = key_column(table, rule, exempt);
        let keys = column.as_deref().unwrap_or(key_ids(table, rule.key));
        let subset = Subset::of(keys, ts, &table.client, &table.endpoint);
        Selection { subset }
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

/// The key id of every event for `key` ([`NO_KEY`](crate::events::NO_KEY),
/// which is [`NOT_APPLICABLE`], where it has no value).
pub(crate) fn key_ids(table: &EventTable, key: KeyRef) -> &[Id] {
    match key {
        KeyRef::Primary => &table.client,
        KeyRef::Extra(i) => &table.extra_keys[i].ids,
    }
}

/// Per event, the key a rule counts by, or [`NOT_APPLICABLE`] where the rule's
/// method or route does not match, an exemption matches (`exempt`), or the key
/// has no value; `None` when the rule applies to every request, so that its
/// column is [`key_ids`].
fn key_column(table: &EventTable, rule: &PlannedRule, exempt: Option<&[bool]>) -> Option<Vec<u32>> {
    let filter = NameFilter::new(
        &table.methods,
        &table.paths,
        rule.method.as_deref(),
        rule.route.as_ref(),
    );
    if filter.picks_all() && exempt.is_none() {
        return None;
    }
    let ids = key_ids(table, rule.key);
    let column: Vec<u32> = (0..table.len())
        .into_par_iter()
        .map(|i| {
            let exempted = exempt.is_some_and(|mask| mask[i]);
            if filter.picks(table.method[i], table.path_at(i)) && !exempted {
                ids[i] // NO_KEY is NOT_APPLICABLE
            } else {
                NOT_APPLICABLE
            }
        })
        .collect();
    Some(column)
}

/// Some of the events: their rows (in time order), times, clients and
/// endpoints, and the same rows grouped by client.
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
        subset.grouped_ts = (subset.groups.rows.iter())
            .map(|&i| subset.ts[i as usize])
            .collect();
        subset.census = Census::new(&subset.client, &subset.endpoint);
        Some(subset)
    }

    /// Per event, its key in `ids` within the subset, [`NOT_APPLICABLE`] outside.
    pub(crate) fn key_column(&self, ids: &[u32]) -> Vec<u32> {
        let mut column = vec![NOT_APPLICABLE; ids.len()];
        for &row in &self.rows {
            column[row as usize] = ids[row as usize];
        }
        column
    }

    /// The values of `column` (one per event) at the subset's rows.
    pub(crate) fn pick<T: Copy>(&self, column: &[T]) -> Vec<T> {
        self.rows.iter().map(|&i| column[i as usize]).collect()
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

#[cfg(test)]
mod tests;
