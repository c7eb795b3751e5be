//! Client keys that are one address, written as RFC 5952 has them, once a
//! chunk is parsed ([`canonical_chunk`]): the names of the chunk's interners
//! are rewritten, and its ids with them, only when a name needs it.

use std::borrow::Cow;

use super::{KeySet, canonical_address};
use crate::events::{Id, Interner, NO_KEY};
use crate::ingest::chunk::ChunkResult;

/// Puts the names of a parsed chunk's keys that are one address as logged
/// ([`super::KeySpec::is_one_address`]) in canonical form, so that a client
/// whose address was written two ways is one client. Looked at once per name
/// with a colon, not per line: the clients' are found as they are interned
/// (`clients_with_colon`); an extra key column's names are looked through
/// here (a rule keyed on the address under another `--key` is rare).
pub fn canonical_chunk(keys: &KeySet, clients_with_colon: &[Id], out: &mut ChunkResult) {
    if keys.primary.is_one_address()
        && let Some((names, ids)) = canonical_names(&out.clients, clients_with_colon)
    {
        out.clients = names;
        for event in &mut out.events {
            event.client = ids[event.client as usize];
        }
    }
    for (spec, column) in keys.extra.iter().zip(&mut out.extra_keys) {
        if spec.is_one_address()
            && let Some((names, ids)) =
                canonical_names(&column.names, &names_with_colon(&column.names))
        {
            column.names = names;
            for id in column.ids.iter_mut().filter(|id| **id != NO_KEY) {
                *id = ids[*id as usize];
            }
        }
    }
}

/// The names of `names` with every address in canonical form
/// ([`canonical_address`]), and each name's id among them; `None` when the
/// names of `candidates` (those that may need it: the ones with a colon)
/// already are, as they almost always are.
pub fn canonical_names(names: &Interner, candidates: &[Id]) -> Option<(Interner, Vec<Id>)> {
    if candidates
        .iter()
        .all(|&id| matches!(canonical_address(names.name(id)), Cow::Borrowed(_)))
    {
        return None;
    }
    let mut canonical = Interner::default();
    let ids = names
        .names()
        .map(|name| canonical.intern(&canonical_address(name)))
        .collect();
    Some((canonical, ids))
}

/// The ids of the names of `names` with a colon: those [`canonical_names`]
/// may have to write otherwise.
pub fn names_with_colon(names: &Interner) -> Vec<Id> {
    (0..names.len() as Id)
        .filter(|&id| names.name(id).contains(':'))
        .collect()
}

#[cfg(test)]
mod tests;
