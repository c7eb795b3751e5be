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
/// `reading`'s way (`None`: as the policy, see [`Exemption::compared_on`]);
/// `None` without exemptions. The column each exemption's client is
/// compared on must be among `keys` (the ingestion's key set, see
/// [`crate::policy::exempt::add_key_columns`]).
fn exempt_mask(
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
            Some(c) => match names.get(&c) {
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
/// keys: they exempt nothing there (a typo, or a name that is no client).
pub fn unmatched_clients<'e>(
    table: &EventTable,
    exemptions: &'e [Exemption],
    keys: &KeySet,
) -> Vec<&'e Exemption> {
    (exemptions.iter())
        .filter(|e| {
            let (key_text, client) = e.key_and_client(keys, None);
            client.is_some_and(|c| key_names(table, key_ref(keys, &key_text)).get(&c).is_none())
        })
        .collect()
}

/// The exemption masks of a replay: the policy's and each product
/// reading's (`--gateway`), one per distinct way of comparing the clients.
#[derive(Debug, Clone, Default)]
pub struct ExemptMasks {
    /// The distinct masks, the policy's first.
    masks: Vec<Option<Arc<[bool]>>>,
    /// Each reading's place among them.
    places: Vec<(KeyReading, usize)>,
}

impl ExemptMasks {
    /// The masks of `exemptions` as the policy and each of `readings` read
    /// their keys; readings that compare every client on the same column
    /// share a mask.
    pub fn new(
        table: &EventTable,
        exemptions: &[Exemption],
        keys: &KeySet,
        readings: &[KeyReading],
    ) -> Self {
        let compared = |reading| -> Vec<(String, Option<String>)> {
            (exemptions.iter())
                .map(|e| e.key_and_client(keys, reading))
                .collect()
        };
        let mut ways = vec![compared(None)];
        let mut masks = vec![exempt_mask(table, exemptions, keys, None)];
        let mut places = Vec::new();
        for &reading in readings {
            let way = compared(Some(reading));
            let place = match ways.iter().position(|w| *w == way) {
                Some(place) => place,
                None => {
                    ways.push(way);
                    masks.push(exempt_mask(table, exemptions, keys, Some(reading)));
                    masks.len() - 1
                }
            };
            places.push((reading, place));
        }
        ExemptMasks { masks, places }
    }

    /// The mask of scenarios read `reading`'s way (`None`: the policy's),
    /// and its place among the masks: scenarios with one place share it.
    pub fn of(&self, reading: Option<KeyReading>) -> (usize, Option<&Arc<[bool]>>) {
        let place = match reading {
            None => 0,
            Some(r) => {
                let found = self.places.iter().find(|(k, _)| *k == r);
                debug_assert!(
                    found.is_some() || self.masks.is_empty(),
                    "no exemption mask for {r:?}"
                );
                found.map_or(0, |&(_, place)| place)
            }
        };
        (place, self.masks.get(place).and_then(Option::as_ref))
    }
}
