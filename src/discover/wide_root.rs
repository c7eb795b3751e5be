//! The subtrie of a node whose paths have at least [`CAP`] distinct next
//! segments (the root, under a scanner probing random names; `/api`, when a
//! tenant's name follows it in every path): the node collapses while the
//! paths are fed, so the subtries under those segments are not built apart
//! as [`super::build`] builds them otherwise. Fed in one pass instead, on one
//! core, a million paths took about four times as long as built group by
//! group (their one trie outgrows the caches). This builds them group by
//! group all the same, to the trie the one pass makes:
//!
//! 1. The node collapses as it takes the path that brings its `CAP`-th child:
//!    ranking the groups of paths (by next segment) by their first path in
//!    the canonical order, the first path of the `CAP`-th group. The paths up
//!    to it, in that order, come before the collapse; the others after.
//! 2. The subtries of the paths before the collapse are built group by group,
//!    in parallel, and the node collapses over them, as it would have: the
//!    requests before the collapse (the node's own path's among them, if it
//!    came before) decide which children are rare.
//! 3. After the collapse, each child the node kept takes the rest of its
//!    group's paths, and each parameter the paths of the other groups whose
//!    segment goes to it, each in the canonical order. The kept children and
//!    the parameters share nothing, so they are fed in parallel.

use std::cmp::Reverse;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::build::{Groups, feed, feed_in_order, sorted};
use super::paths::Paths;
use super::shape::{ParamKey, param_key};
use super::trie::{self, CAP};
use crate::events::Id;

/// The owners of the paths under one segment.
type Group<'t> = (&'t str, Vec<Id>);

/// A path's place in the canonical order: most requests first, ties by path.
type Place<'t> = (Reverse<u32>, &'t str);

/// The subtrie of `groups` (at least [`CAP`] of them, below a node whose
/// paths share `shared` bytes) as feeding its paths in the canonical order
/// builds it.
pub(super) fn build<'t>(paths: &Paths<'t>, groups: Groups<'t>, shared: usize) -> trie::Node {
    let place = |e: Id| -> Place<'t> { (Reverse(paths.requests[e as usize]), paths.owner_path(e)) };
    let (ends, total) = (groups.ends(paths), groups.total);
    let end_before = |collapse_at: Place<'t>| groups.end.is_some_and(|e| place(e) <= collapse_at);
    let by_segment: Vec<Group<'t>> = groups.by_segment.into_iter().collect();
    let firsts: Vec<Place<'t>> = by_segment
        .par_iter()
        .map(|(_, owners)| owners.iter().map(|&e| place(e)).min())
        .map(|first| first.unwrap_or((Reverse(0), "")))
        .collect();
    let mut ranked = firsts.clone();
    let collapse_at = *ranked.select_nth_unstable(CAP - 1).1;

    // Per group: the paths before the collapse (for the groups whose first
    // path is among them), and those after.
    let (before, after): (Vec<Option<Group<'t>>>, Vec<Group<'t>>) = by_segment
        .into_par_iter()
        .zip(firsts)
        .map(|((segment, owners), first)| match first <= collapse_at {
            true => {
                let (before, after) = owners.into_iter().partition(|&e| place(e) <= collapse_at);
                (Some((segment, before)), (segment, after))
            }
            false => (None, (segment, owners)),
        })
        .unzip();

    // The node as the collapse finds it.
    let fed = |segment: &str, owners: Vec<Id>, child: &mut trie::Node| {
        feed(child, paths, owners, shared + 1 + segment.len())
    };
    let children: Vec<(String, trie::Node)> = before
        .into_par_iter()
        .flatten()
        .map(|(segment, owners)| {
            let mut child = trie::Node::default();
            fed(segment, owners, &mut child);
            (segment.to_string(), child)
        })
        .collect();
    let before_ends = if end_before(collapse_at) { ends } else { 0 };
    let mut node = trie::Node {
        count: before_ends + children.iter().map(|(_, child)| child.count).sum::<u64>(),
        children: children.into_iter().collect(),
        ..trie::Node::default()
    };
    node.collapse();

    // The paths after it, to the kept children and to the parameters.
    let mut to_children: FxHashMap<&str, Vec<Id>> = FxHashMap::default();
    let mut to_params: FxHashMap<ParamKey, Vec<Id>> = FxHashMap::default();
    for (segment, owners) in after.into_iter().filter(|(_, o)| !o.is_empty()) {
        if node.children.contains_key(segment) {
            to_children.insert(segment, owners);
        } else {
            to_params
                .entry(param_key(segment))
                .or_default()
                .extend(owners);
        }
    }
    for key in to_params.keys() {
        node.params.entry(key.clone()).or_default();
    }
    let trie::Node {
        children, params, ..
    } = &mut node;
    let children: Vec<_> = children
        .iter_mut()
        .filter_map(|(name, child)| {
            Some((name.as_str(), child, to_children.remove(name.as_str())?))
        })
        .collect();
    let params: Vec<_> = params
        .iter_mut()
        .filter_map(|(key, param)| Some((param, to_params.remove(key)?)))
        .collect();
    rayon::join(
        || {
            children
                .into_par_iter()
                .for_each(|(segment, child, owners)| fed(segment, owners, child))
        },
        || {
            params.into_par_iter().for_each(|(param, owners)| {
                let order = sorted(paths, owners, shared + 1);
                feed_in_order(&order, paths, shared, |segments, n| {
                    if let Some((value, rest)) = segments.split_first() {
                        param.insert(value, rest, n);
                    }
                });
            })
        },
    );
    node.count = total;
    node.terminal = ends;
    node
}
