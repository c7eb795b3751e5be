//! Exemptions in the dry run: which requests of a parsed chunk a policy's
//! `exempt = true` rules match, with `rlctl simulate`'s semantics
//! (`scenario::exempt`): an exemption matches a request when its method (if
//! given) and route (if given, on the path as ingested) match and, when it
//! names a client, the request's value of the exemption's key is that client.
//! An exempt request is admitted, counted by no rule and changes no state.

use crate::events::NO_KEY;
use crate::ingest::chunk::ChunkResult;
use crate::ingest::key::{KeyReading, KeySet, same_ignoring_case};
use crate::policy::Exemption;
use crate::scenario::names::NameFilter;
use crate::simulate::gateway::NameReading;

/// The column of a parsed chunk that holds `key`: 0 for the primary key,
/// i + 1 for extra key i (0 when absent, which [`super::shadow::keys_for`]
/// prevents).
pub fn key_column(keys: &KeySet, key: &str) -> usize {
    if key == keys.primary.text {
        return 0;
    }
    keys.extra
        .iter()
        .position(|k| k.text == key)
        .map_or(0, |i| i + 1)
}

/// A chunk's value of the key in `column` for event `row` (`None`: no value).
pub fn key_value(chunk: &ChunkResult, column: usize, row: usize) -> Option<&str> {
    match column {
        0 => Some(chunk.clients.name(chunk.events[row].client)),
        c => {
            let column = &chunk.extra_keys[c - 1];
            match column.ids[row] {
                NO_KEY => None,
                id => Some(column.names.name(id)),
            }
        }
    }
}

/// A policy's exemptions, each with the chunk column of its key and the
/// client compared with that key's values.
#[derive(Debug, Clone, Default)]
pub struct Exemptions {
    list: Vec<(Exemption, usize, Option<String>)>,
    /// How methods and paths are read.
    names: NameReading,
    /// Whether clients are compared ignoring case
    /// ([`KeyReading::exempt_ignores_case`]).
    ignore_case: bool,
}

impl Exemptions {
    /// The exemptions as a product reading keys `reading`'s way matches
    /// them (`None`: as the policy; see [`Exemption::key_and_client`]), and
    /// methods and paths `names`' way, with `keys` (from
    /// [`super::shadow::keys_for_policy`]) telling which column holds each
    /// one's key.
    pub fn new(
        exemptions: &[Exemption],
        keys: &KeySet,
        (reading, names): (Option<KeyReading>, NameReading),
    ) -> Exemptions {
        Exemptions {
            names,
            ignore_case: reading.is_some_and(|r| r.exempt_ignores_case),
            list: exemptions
                .iter()
                .map(|e| {
                    let (key, client) = e.key_and_client(keys, reading);
                    (e.clone(), key_column(keys, &key), client)
                })
                .collect(),
        }
    }

    /// Per event of `chunk`, whether an exemption matches it (`None`: there
    /// are no exemptions).
    pub fn mask(&self, chunk: &ChunkResult) -> Option<Vec<bool>> {
        if self.list.is_empty() {
            return None;
        }
        let mut mask = vec![false; chunk.events.len()];
        for (e, column, client) in &self.list {
            // Methods and paths are tested once per distinct name of the chunk.
            let filter = NameFilter::new(
                &chunk.methods,
                &chunk.paths,
                (e.method.as_deref(), e.route.as_ref()),
                self.names,
            );
            for (row, event) in chunk.events.iter().enumerate() {
                mask[row] |= filter.picks(event.method, event.path, event.protocol)
                    && client.as_deref().is_none_or(|want| {
                        key_value(chunk, *column, row).is_some_and(|value| match self.ignore_case {
                            false => value == want,
                            true => same_ignoring_case(value, want),
                        })
                    });
            }
        }
        Some(mask)
    }
}
