//! The distinct paths behind the table's endpoints, methods aside, with their
//! requests: what discovery feeds to its trie and what mapping counts per
//! template. A path is stood for by the first endpoint that has it, so nothing
//! is copied: memory is a few bytes per endpoint (a million distinct paths
//! cost about 16 MB here, against their text held once by the interner).

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

use crate::events::{EventTable, Id, Interner};

/// Marks an endpoint that is no path: a routed name, or not `METHOD /path`.
pub(super) const NO_PATH: Id = Id::MAX;

/// Splits an endpoint name into method and path, when it has that shape.
pub fn method_and_path(name: &str) -> Option<(&str, &str)> {
    let space = memchr::memchr(b' ', name.as_bytes())?;
    let (method, path) = (&name[..space], &name[space + 1..]);
    let is_method = !method.is_empty()
        && method
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_');
    (is_method && path.starts_with('/')).then_some((method, path))
}

/// Puts the segments of `path` after its leading `/` into `out` (cleared
/// first), as `path[1..].split('/')` gives them, with a plain byte scan
/// (segments are short).
pub(super) fn split_segments<'p>(path: &'p str, out: &mut Vec<&'p str>) {
    out.clear();
    let rest = path.get(1..).unwrap_or_default();
    let mut start = 0;
    for (i, b) in rest.bytes().enumerate() {
        if b == b'/' {
            out.push(&rest[start..i]);
            start = i + 1;
        }
    }
    out.push(&rest[start..]);
}

/// The distinct paths of a table's endpoints.
pub(super) struct Paths<'t> {
    names: &'t Interner,
    /// Per endpoint: the endpoint standing for its path, or [`NO_PATH`].
    pub(super) owner: Vec<Id>,
    /// Per endpoint standing for a path: the path's requests over every method
    /// (0 for the other endpoints).
    pub(super) requests: Vec<u64>,
}

fn hash_path(path: &str) -> u64 {
    let mut h = FxHasher::default();
    h.write(path.as_bytes());
    h.finish()
}

/// Per endpoint of `names`: the first endpoint with its path, or [`NO_PATH`]
/// (`routed` names, and names that are not `METHOD /path`).
fn owners(names: &Interner, routed: &[String]) -> Vec<Id> {
    let path_of = |e: Id| method_and_path(names.name(e)).map(|(_, p)| p);
    let mut index: HashTable<Id> = HashTable::with_capacity(names.len());
    let mut owner = Vec::with_capacity(names.len());
    for (e, name) in names.names().enumerate() {
        let e = e as Id;
        let path = (!routed.iter().any(|r| r == name))
            .then(|| method_and_path(name))
            .flatten()
            .map(|(_, path)| path);
        let Some(path) = path else {
            owner.push(NO_PATH);
            continue;
        };
        let hash = hash_path(path);
        let first = *index
            .entry(
                hash,
                |&o| path_of(o) == Some(path),
                |&o| hash_path(path_of(o).unwrap_or_default()),
            )
            .or_insert(e)
            .get();
        owner.push(first);
    }
    owner
}

impl<'t> Paths<'t> {
    /// The paths of `table`'s endpoints, leaving out the `routed` names.
    pub(super) fn new(table: &'t EventTable, routed: &[String]) -> Self {
        let names = &table.endpoints;
        // The events are counted while the paths are indexed.
        let (mut requests, owner) = rayon::join(
            || {
                let mut requests = vec![0u64; names.len()];
                for &e in &table.endpoint {
                    requests[e as usize] += 1;
                }
                requests
            },
            || owners(names, routed),
        );
        for (e, &first) in owner.iter().enumerate() {
            if first != NO_PATH && first as usize != e {
                requests[first as usize] += requests[e];
                requests[e] = 0;
            }
        }
        Paths {
            names,
            owner,
            requests,
        }
    }

    /// The path of `owner`, one of [`Self::owners`] (whose names were read
    /// as `METHOD /path` already: the path follows the first space).
    pub(super) fn owner_path(&self, owner: Id) -> &'t str {
        let name = self.names.name(owner);
        debug_assert_eq!(self.owner[owner as usize], owner);
        // A method is a few bytes: a plain scan finds its end sooner than memchr.
        let space = name.bytes().position(|b| b == b' ');
        space.map_or("", |space| &name[space + 1..])
    }

    /// The endpoints standing for a path, one per distinct path, in id order.
    pub(super) fn owners(&self) -> impl Iterator<Item = Id> + '_ {
        (0..self.owner.len() as Id).filter(|&e| self.owner[e as usize] == e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn segments_are_those_split_gives(path in "/[a-z/é.]{0,12}") {
            let mut segments = vec!["stale"];
            split_segments(&path, &mut segments);
            let expected: Vec<&str> = path[1..].split('/').collect();
            proptest::prop_assert_eq!(segments, expected);
        }
    }
}
