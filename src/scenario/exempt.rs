//! Exemptions in a replay: which events a policy's exempt rules match. An
//! exempt event is one no rule applies to, so it is admitted and changes no
//! limiter's state (the replay's rule for events outside every rule).

use std::sync::Arc;

use rayon::prelude::*;

use super::names::NameFilter;
use super::plan::key_ref;
use super::selection::{key_ids, key_names};
use crate::events::{EventTable, NO_KEY};
use crate::ingest::key::{KeyReading, KeySet};
use crate::policy::Exemption;

/// Per event, whether an exemption matches it, for a product reading keys
/// `reading`'s way (`None`: as the policy, see [`Exemption::key_and_client`]);
/// `None` without exemptions. Each exemption's key, as read so, must be among
/// `keys` (the ingestion's key set).
pub fn exempt_mask(
    table: &EventTable,
    exemptions: &[Exemption],
    keys: &KeySet,
    reading: Option<KeyReading>,
) -> Option<Arc<[bool]>> {
    if exemptions.is_empty() {
        return None;
    }
    let mut mask = vec![false; table.len()];
    for e in exemptions {
        let filter = NameFilter::new(
            &table.methods,
            &table.paths,
            e.method.as_deref(),
            e.route.as_ref(),
        );
        let (key_text, client) = e.key_and_client(keys, reading);
        let key = key_ref(keys, &key_text);
        let (ids, names) = (key_ids(table, key), key_names(table, key));
        // A client that never appears matches nothing.
        let client = match client {
            Some(c) => match names.get(c) {
                Some(id) => Some(id),
                None => continue,
            },
            None => None,
        };
        mask.par_iter_mut().enumerate().for_each(|(i, exempt)| {
            let matched = filter.picks(table.method[i], table.path_at(i))
                && client.is_none_or(|c| ids[i] == c && ids[i] != NO_KEY);
            *exempt |= matched;
        });
    }
    Some(mask.into())
}

/// The exemptions naming a client that no request has, as the policy reads
/// keys: they exempt nothing there (a typo, or an address where `--cidr4/6`
/// made the clients prefixes).
pub fn unmatched_clients<'e>(
    table: &EventTable,
    exemptions: &'e [Exemption],
    keys: &KeySet,
) -> Vec<&'e Exemption> {
    (exemptions.iter())
        .filter(|e| {
            let (key_text, client) = e.key_and_client(keys, None);
            client.is_some_and(|c| key_names(table, key_ref(keys, &key_text)).get(c).is_none())
        })
        .collect()
}

/// The exemption masks of a replay: the policy's, and one for each product
/// reading (`--gateway`) that matches some exemption's client otherwise.
#[derive(Debug, Clone, Default)]
pub struct ExemptMasks {
    policy: Option<Arc<[bool]>>,
    read: Vec<(KeyReading, Option<Arc<[bool]>>)>,
}

impl ExemptMasks {
    /// The masks of `exemptions` as the policy and each of `readings` read
    /// their keys (see [`exempt_mask`]).
    pub fn new(
        table: &EventTable,
        exemptions: &[Exemption],
        keys: &KeySet,
        readings: &[KeyReading],
    ) -> Self {
        let policy = exempt_mask(table, exemptions, keys, None);
        let mut read: Vec<(KeyReading, Option<Arc<[bool]>>)> = Vec::new();
        for &reading in readings {
            if read.iter().any(|(r, _)| *r == reading) {
                continue;
            }
            let differs = exemptions
                .iter()
                .any(|e| e.key_and_client(keys, Some(reading)) != e.key_and_client(keys, None));
            let mask = match differs {
                true => exempt_mask(table, exemptions, keys, Some(reading)),
                false => policy.clone(),
            };
            read.push((reading, mask));
        }
        ExemptMasks { policy, read }
    }

    /// The mask of scenarios read `reading`'s way, and its place among the
    /// masks (0: the policy's; scenarios with one place share it).
    pub fn of(&self, reading: Option<KeyReading>) -> (usize, Option<&Arc<[bool]>>) {
        let found = reading.and_then(|r| self.read.iter().position(|(k, _)| *k == r));
        match found {
            Some(i) if !same(&self.read[i].1, &self.policy) => (i + 1, self.read[i].1.as_ref()),
            _ => (0, self.policy.as_ref()),
        }
    }
}

/// Whether two masks are the same one.
fn same(a: &Option<Arc<[bool]>>, b: &Option<Arc<[bool]>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}
