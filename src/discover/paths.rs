//! The distinct paths behind the table's endpoints, methods aside, with their
//! requests: what discovery feeds to its trie and what mapping counts per
//! template. A path is stood for by the first endpoint that has it, so nothing
//! is copied: memory is a few bytes per endpoint (a million distinct paths
//! cost about 16 MB here, against their text held once by the interner).

use hashbrown::HashTable;
use rayon::prelude::*;

use super::order::PathSource;
use crate::events::{EventTable, Id, Interner, group_rows, hash32, spread_hash};

/// Marks an endpoint that is no path: a routed name, or not `METHOD /path`.
pub(super) const NO_PATH: Id = Id::MAX;

/// The most segments a path may have to be fed to discovery: the trie and
/// its passes recurse once per segment, so a path of thousands (a few
/// kilobytes of `/a/a/a…`, within nginx's request line) would overflow the
/// stack. Deeper paths are left as they are, as routed names are.
pub(super) const MAX_SEGMENTS: usize = 128;

/// The path of an endpoint `name` that discovery reads: not one of the
/// `routed` names, `METHOD /path` or `/path`, of at most [`MAX_SEGMENTS`].
fn discoverable_path<'n>(name: &'n str, routed: &[String]) -> Option<&'n str> {
    if routed.iter().any(|r| r == name) {
        return None;
    }
    let (_, path) = method_and_path(name)?;
    let shallow = path.len() <= MAX_SEGMENTS
        || memchr::memchr_iter(b'/', path.as_bytes()).count() <= MAX_SEGMENTS;
    shallow.then_some(path)
}

/// Splits an endpoint name into method and path, when it has that shape:
/// `METHOD /path`, or `/path` alone (a line that logs no method; the method
/// is then empty).
pub fn method_and_path(name: &str) -> Option<(&str, &str)> {
    if name.starts_with('/') {
        return Some(("", name));
    }
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
    /// (0 for the other endpoints); 32 bits, like the numbers of the table's
    /// rows, which no path's requests can outnumber.
    pub(super) requests: Vec<u32>,
}

/// Bits of a path's hash that choose its partition of the index.
const PARTITION_BITS: u32 = 8;
/// Partitions of the index.
const PARTITIONS: usize = 1 << PARTITION_BITS;

/// Per endpoint of `names`: the first endpoint with its path, or [`NO_PATH`]
/// (`routed` names, and names that are not `METHOD /path`).
///
/// One hash table over a million paths is a cache miss or two per path, on
/// one core. Instead every path's hash is computed in parallel, reading the
/// names in the order they lie in memory; the endpoints are then put in
/// partitions by the hash's top bits (in id order within each), and each
/// partition is indexed on its own, in parallel, in a table small enough to
/// stay in cache. Two paths are compared only when their hashes are equal.
fn owners(names: &Interner, routed: &[String]) -> Vec<Id> {
    let path_of = |e: Id| discoverable_path(names.name(e), routed);
    let mut owner = vec![NO_PATH; names.len()];
    let mut hashes = vec![0u32; names.len()];
    owner
        .par_iter_mut()
        .zip(hashes.par_iter_mut())
        .enumerate()
        .with_min_len(1 << 12)
        .for_each(|(e, (owner, hash))| {
            if let Some(path) = path_of(e as Id) {
                (*owner, *hash) = (e as Id, hash32(path.as_bytes()));
            }
        });
    // The endpoints by partition, in id order within each; names that are
    // no path go to one more group, left out.
    let partitions: Vec<Id> = owner
        .par_iter()
        .zip(&hashes)
        .map(|(&o, &h)| {
            if o == NO_PATH {
                PARTITIONS as Id
            } else {
                h >> (32 - PARTITION_BITS)
            }
        })
        .collect();
    let by_partition = group_rows(&partitions, PARTITIONS + 1);
    drop(partitions);
    // Per partition, the endpoints whose path an earlier endpoint has.
    let repeats: Vec<Vec<(Id, Id)>> = (0..PARTITIONS)
        .into_par_iter()
        .map(|p| {
            let members = by_partition.rows(p);
            let mut index: HashTable<Id> = HashTable::with_capacity(members.len());
            let mut repeats = Vec::new();
            let table_hash = |e: Id| spread_hash(hashes[e as usize]);
            for &e in members {
                // Paths are read only to tell equal hashes apart: read in
                // partition order, each would be a cache miss.
                let first = *index
                    .entry(
                        table_hash(e),
                        |&o| hashes[o as usize] == hashes[e as usize] && path_of(o) == path_of(e),
                        |&o| table_hash(o),
                    )
                    .or_insert(e)
                    .get();
                if first != e {
                    repeats.push((e, first));
                }
            }
            repeats
        })
        .collect();
    for (e, first) in repeats.into_iter().flatten() {
        owner[e as usize] = first;
    }
    owner
}

/// [`owners`] as first written, one table for every path: the reference the
/// partitioned index must agree with.
#[cfg(test)]
fn owners_reference(names: &Interner, routed: &[String]) -> Vec<Id> {
    let mut first: std::collections::HashMap<&str, Id> = std::collections::HashMap::new();
    names
        .names()
        .enumerate()
        .map(|(e, name)| match discoverable_path(name, routed) {
            Some(path) => *first.entry(path).or_insert(e as Id),
            None => NO_PATH,
        })
        .collect()
}

impl<'t> Paths<'t> {
    /// The paths of `table`'s endpoints, leaving out the `routed` names.
    pub(super) fn new(table: &'t EventTable, routed: &[String]) -> Self {
        let names = &table.endpoints;
        // The events are counted while the paths are indexed.
        let (mut requests, owner) = rayon::join(
            || {
                let mut requests = vec![0u32; names.len()];
                for &e in &table.endpoint {
                    requests[e as usize] = requests[e as usize].saturating_add(1);
                }
                requests
            },
            || owners(names, routed),
        );
        for (e, &first) in owner.iter().enumerate() {
            if first != NO_PATH && first as usize != e {
                requests[first as usize] = requests[first as usize].saturating_add(requests[e]);
                requests[e] = 0;
            }
        }
        Paths {
            names,
            owner,
            requests,
        }
    }

    /// The path of `owner`, one of [`Self::par_owners`] (whose names were read
    /// as `METHOD /path` or `/path` already: the path is the name, or follows
    /// the first space).
    pub(super) fn owner_path(&self, owner: Id) -> &'t str {
        let name = self.names.name(owner);
        debug_assert!(self.is_owner(owner));
        if name.starts_with('/') {
            return name;
        }
        // A method is a few bytes: a plain scan finds its end sooner than memchr.
        let space = name.bytes().position(|b| b == b' ');
        space.map_or("", |space| &name[space + 1..])
    }

    /// The endpoints standing for a path, one per distinct path, on every
    /// core (in id order within each of the ranges the cores take).
    pub(super) fn par_owners(&self) -> impl ParallelIterator<Item = Id> + '_ {
        (0..self.owner.len() as Id)
            .into_par_iter()
            .with_min_len(1 << 14)
            .filter(|&e| self.is_owner(e))
    }

    /// Whether endpoint `e` stands for its path (is one of [`Self::par_owners`]).
    pub(super) fn is_owner(&self, e: Id) -> bool {
        self.owner[e as usize] == e
    }
}

impl<'t> PathSource<'t> for Paths<'t> {
    fn path(&self, owner: Id) -> &'t [u8] {
        self.owner_path(owner).as_bytes()
    }

    fn prefetch_ahead(&self, upcoming: impl Fn(usize) -> Option<Id>) {
        self.names.prefetch_ahead(upcoming);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_of_many_paths_agree_with_one_table() {
        let mut interner = Interner::default();
        for i in 0..30_000u32 {
            let method = ["GET", "POST", "PUT"][(i % 7 % 3) as usize];
            interner.intern(&format!("{method} /items/{}", i / 3));
        }
        interner.intern("(invalid request)");
        interner.intern("GET /items/7");
        let owner = owners(&interner, &["PUT /items/5".to_string()]);
        assert_eq!(
            owner,
            owners_reference(&interner, &["PUT /items/5".to_string()])
        );
        assert!(owner.iter().filter(|&&o| o != NO_PATH).count() > 20_000);
    }

    proptest::proptest! {
        /// Names with and without a method, paths shared by several methods,
        /// routed names, in numbers that fill several partitions.
        #[test]
        fn owners_agree_with_one_table(
            names in proptest::collection::vec(
                ("(GET|POST|HEAD|get|none|)", "(/[a-c ]{0,2}){0,3}|[a-c/]{0,3}"),
                0..600,
            ),
            routed in proptest::collection::vec("(GET|POST) /[a-c]{0,2}", 0..3),
        ) {
            let mut interner = Interner::default();
            for (method, path) in &names {
                // `none`: a log without methods names endpoints by path alone.
                match method.as_str() {
                    "none" => interner.intern(path),
                    method => interner.intern(&format!("{method} {path}")),
                };
            }
            interner.release_lookups();
            proptest::prop_assert_eq!(
                owners(&interner, &routed),
                owners_reference(&interner, &routed)
            );
        }

        #[test]
        fn segments_are_those_split_gives(path in "/[a-z/é.]{0,12}") {
            let mut segments = vec!["stale"];
            split_segments(&path, &mut segments);
            let expected: Vec<&str> = path[1..].split('/').collect();
            proptest::prop_assert_eq!(segments, expected);
        }
    }
}
