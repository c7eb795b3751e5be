//! Exemptions in a replay: which events a policy's exempt rules match. An
//! exempt event is one no rule applies to, so it is admitted and changes no
//! limiter's state (the replay's rule for events outside every rule).

use std::sync::Arc;

use rayon::prelude::*;

use super::names::NameFilter;
use super::plan::key_ref;
use super::selection::{key_ids, key_names};
use crate::events::{EventTable, NO_KEY};
use crate::ingest::key::KeySet;
use crate::policy::Exemption;

/// Per event, whether an exemption matches it; `None` without exemptions.
/// Each exemption's key must be among `keys` (the ingestion's key set).
pub fn exempt_mask(
    table: &EventTable,
    exemptions: &[Exemption],
    keys: &KeySet,
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
        let key = key_ref(keys, &e.key.text);
        let (ids, names) = (key_ids(table, key), key_names(table, key));
        // A client that never appears matches nothing.
        let client = match &e.keyed_client {
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
