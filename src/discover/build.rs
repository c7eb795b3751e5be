//! Building the trie of the distinct paths, fed in the canonical order (most
//! requests first, ties by path), on every core where that order allows.
//!
//! A node with fewer than [`trie::CAP`] distinct children among its paths
//! never collapses while they are fed, so the subtrie under each child sees
//! the same inserts, in the same order, as in one pass: those subtries are
//! built on their own, in parallel, each from its own paths sorted in the
//! canonical order (so that only the groups being built hold their sorted
//! paths). The root is split so; so is a child that holds most of the paths
//! (every path under `/api`, say), a level further down, and so on. Such a
//! node with more children collapses on the way: [`super::wide_root`] works
//! out where, and builds its subtries apart all the same. Any other node is
//! built from its paths in one pass.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::order::{self, PathSource};
use super::paths::{Paths, split_segments};
use super::trie;
use super::wide_root;
use crate::events::Id;

/// A child with at least this many paths, and more than half of its
/// parent's, is split in turn (in tests, small ones too, so that the tests'
/// paths are split at every level they have).
const SPLIT_PATHS: usize = if cfg!(test) { 64 } else { 1 << 16 };

/// Grouping stops when one core's share of the paths has more than this many
/// groups, of fewer than [`FEW_PATHS_PER_GROUP`] paths each on average: with
/// that many, building by group costs more than it saves (millions of first
/// segments took seconds to group), and the node is built in one pass.
const MANY_GROUPS: usize = 1 << 12;
const FEW_PATHS_PER_GROUP: usize = 4;

/// A node with at least [`trie::CAP`] groups is built by group only when
/// they hold this many paths each on average (in tests, always, so that the
/// tests' wide nodes are built by group).
const WIDE_PATHS_PER_GROUP: usize = if cfg!(test) { 0 } else { 8 };

/// The trie of the distinct paths.
pub(super) fn trie(paths: &Paths) -> trie::Node {
    node(paths, || paths.par_owners(), 0)
}

/// The subtrie of the paths of `owners()` (which share `shared` bytes):
/// split by next segment ([`split`]); or, with [`trie::CAP`] next segments
/// or more, built by group all the same ([`wide_root::build`]) when the
/// groups are large enough for it to pay, else in one pass.
fn node<I: ParallelIterator<Item = Id>>(
    paths: &Paths,
    owners: impl Fn() -> I,
    shared: usize,
) -> trie::Node {
    match Groups::of(paths, owners(), shared) {
        Some(groups) if groups.by_segment.len() < trie::CAP => split(paths, groups, shared),
        Some(groups) if groups.by_segment.len() * WIDE_PATHS_PER_GROUP <= groups.grouped => {
            wide_root::build(paths, groups, shared)
        }
        _ => fed(paths, owners().collect(), shared),
    }
}

/// The paths below a node (which all share the node's `shared` bytes, its
/// segments with their slashes) by their segment after it.
pub(super) struct Groups<'t> {
    pub(super) by_segment: FxHashMap<&'t str, Vec<Id>>,
    /// The path that ends at the node, if one does (the node's own path).
    pub(super) end: Option<Id>,
    /// Requests of all.
    pub(super) total: u64,
    /// Paths in the groups.
    grouped: usize,
}

impl<'t> Groups<'t> {
    /// Grouped on every core (`None` past [`MANY_GROUPS`] in one core's
    /// share): the order within a group does not matter, as its paths are
    /// sorted before they are fed. The cores' groups are then
    /// merged into the largest set of them, so that each group of the others
    /// is looked up once (merging them two by two would look a group up again
    /// at every level, which costs seconds with millions of groups).
    fn of(
        paths: &Paths<'t>,
        owners: impl ParallelIterator<Item = Id>,
        shared: usize,
    ) -> Option<Self> {
        let empty = || Groups {
            by_segment: FxHashMap::default(),
            end: None,
            total: 0,
            grouped: 0,
        };
        let mut parts: Vec<Groups<'t>> = owners
            .fold(empty, |mut groups, e| {
                if groups.too_many() {
                    return groups;
                }
                let requests = u64::from(paths.requests[e as usize]);
                let rest = paths.owner_path(e).get(shared..).unwrap_or_default();
                match rest.get(1..) {
                    None => groups.end = Some(e),
                    Some(rest) => {
                        let segment =
                            &rest[..rest.bytes().position(|b| b == b'/').unwrap_or(rest.len())];
                        groups.by_segment.entry(segment).or_default().push(e);
                        groups.grouped += 1;
                    }
                }
                groups.total += requests;
                groups
            })
            .collect();
        if parts.iter().any(Groups::too_many) {
            return None;
        }
        let largest = (0..parts.len()).max_by_key(|&i| parts[i].by_segment.len());
        let mut all = largest.map_or_else(empty, |i| parts.swap_remove(i));
        for part in parts {
            for (segment, mut owners) in part.by_segment {
                all.by_segment
                    .entry(segment)
                    .or_default()
                    .append(&mut owners);
            }
            all.end = all.end.or(part.end);
            all.total += part.total;
            all.grouped += part.grouped;
        }
        Some(all)
    }

    /// Whether there are too many groups for building by group to pay.
    fn too_many(&self) -> bool {
        let groups = self.by_segment.len();
        groups > MANY_GROUPS && groups * FEW_PATHS_PER_GROUP > self.grouped
    }

    /// Requests of the path that ends at the node.
    pub(super) fn ends(&self, paths: &Paths) -> u64 {
        self.end
            .map_or(0, |e| u64::from(paths.requests[e as usize]))
    }
}

/// The node of `groups` (fewer than [`trie::CAP`] of them), its children
/// built apart, in parallel.
fn split(paths: &Paths, groups: Groups, shared: usize) -> trie::Node {
    let below = groups.grouped;
    let (ends, total) = (groups.ends(paths), groups.total);
    let children: Vec<(String, trie::Node)> = groups
        .by_segment
        .into_par_iter()
        .map(|(segment, owners)| {
            let shared = shared + 1 + segment.len();
            let child = match owners.len() >= SPLIT_PATHS && owners.len() * 2 > below {
                true => node(
                    paths,
                    || owners.par_iter().copied().with_min_len(1 << 14),
                    shared,
                ),
                false => fed(paths, owners, shared),
            };
            (segment.to_string(), child)
        })
        .collect();
    trie::Node {
        count: total,
        terminal: ends,
        children: children.into_iter().collect(),
        ..trie::Node::default()
    }
}

/// The subtrie of `owners` (whose paths share `shared` bytes), fed in one pass.
fn fed(paths: &Paths, owners: Vec<Id>, shared: usize) -> trie::Node {
    let mut node = trie::Node::default();
    feed(&mut node, paths, owners, shared);
    node
}

/// Feeds the paths of `owners` (which share `shared` bytes) to `node`, in
/// the canonical order.
pub(super) fn feed(node: &mut trie::Node, paths: &Paths, owners: Vec<Id>, shared: usize) {
    let order = sorted(paths, owners, shared);
    feed_in_order(&order, paths, shared, |segments, n| {
        node.insert(segments, n)
    });
}

/// The paths of `owners` in the canonical order (every path has the same
/// `shared` bytes first).
pub(super) fn sorted(paths: &Paths, owners: Vec<Id>, shared: usize) -> Vec<order::Entry> {
    let mut order: Vec<order::Entry> = owners
        .iter()
        .map(|&e| order::Entry::new(e, u64::from(paths.requests[e as usize])))
        .collect();
    drop(owners);
    order::sort(&mut order, paths, shared);
    order
}

/// Paths fed to the trie are copied a block at a time, in feeding order.
const FEED_BLOCK: usize = 1 << 14;

/// Hands `insert` the segments of each path of `order` after its first
/// `shared` bytes (whole segments, which every path has), with its requests,
/// in that order.
///
/// The names lie in memory in endpoint order, not in this one: read one by
/// one between inserts, each read waits on memory. So the paths of a block
/// are first copied into one buffer, each path's memory asked for a few
/// paths ahead so that the waits overlap, and the inserts then read the
/// buffer front to back.
pub(super) fn feed_in_order(
    order: &[order::Entry],
    paths: &Paths,
    shared: usize,
    mut insert: impl FnMut(&[&str], u64),
) {
    let mut text = String::new();
    let mut ends: Vec<usize> = Vec::with_capacity(FEED_BLOCK.min(order.len()));
    for block in order.chunks(FEED_BLOCK) {
        text.clear();
        ends.clear();
        for (i, entry) in block.iter().enumerate() {
            paths.prefetch_ahead(|k| block.get(i + k).map(|e| e.owner));
            text.push_str(
                paths
                    .owner_path(entry.owner)
                    .get(shared..)
                    .unwrap_or_default(),
            );
            ends.push(text.len());
        }
        let mut segments: Vec<&str> = Vec::new();
        let mut start = 0;
        for (entry, &end) in block.iter().zip(&ends) {
            // What follows the shared bytes: nothing (the path ends at the
            // node), or `/` and the segments below.
            match &text[start..end] {
                "" => segments.clear(),
                below => split_segments(below, &mut segments),
            }
            start = end;
            insert(&segments, entry.requests);
        }
    }
}
