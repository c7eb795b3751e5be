//! The trie of paths with at least [`CAP`] distinct first segments (a
//! scanner probing random names, a tenant's name first in every path): the
//! root collapses while the paths are fed, so the subtries under the first
//! segments are not built apart as [`super::build`] builds them
//! otherwise. Fed in one pass instead, on one core, a million paths took
//! about four times as long as built group by group (their one trie outgrows
//! the caches). This builds them group by group all the same, to the trie
//! the one pass makes:
//!
//! 1. The root collapses as it takes the path that brings its `CAP`-th first
//!    segment: ranking the groups of paths by their first path in the
//!    canonical order, the first path of the `CAP`-th group. The paths up to
//!    it, in that order, come before the collapse; the others after.
//! 2. The subtries of the paths before the collapse are built group by group,
//!    in parallel, and the root collapses over them, as it would have: the
//!    requests before the collapse decide which children are rare.
//! 3. After the collapse, each child the root kept takes the rest of its
//!    group's paths, and each parameter the paths of the other groups whose
//!    first segment goes to it, each in the canonical order. The kept
//!    children and the parameters share nothing, so they are fed in
//!    parallel.

use std::cmp::Reverse;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::build::{feed_in_order, sorted};
use super::paths::Paths;
use super::shape::{ParamKey, param_key};
use super::trie::{self, CAP};
use crate::events::Id;

/// The owners of the paths under one first segment.
type Group<'t> = (&'t str, Vec<Id>);

/// A path's place in the canonical order: most requests first, ties by path.
type Place<'t> = (Reverse<u32>, &'t str);

/// The trie of `groups` (the distinct paths' owners by first segment, at
/// least [`CAP`] groups, `total` requests in all) as feeding every path from
/// the root in the canonical order builds it.
pub(super) fn build<'t>(paths: &Paths<'t>, groups: Vec<Group<'t>>, total: u64) -> trie::Node {
    let place = |e: Id| -> Place<'t> { (Reverse(paths.requests[e as usize]), paths.owner_path(e)) };
    let firsts: Vec<Place<'t>> = groups
        .par_iter()
        .map(|(_, owners)| owners.iter().map(|&e| place(e)).min())
        .map(|first| first.unwrap_or((Reverse(0), "")))
        .collect();
    let mut ranked = firsts.clone();
    let collapse_at = *ranked.select_nth_unstable(CAP - 1).1;

    // Per group: the paths before the collapse (for the groups whose first
    // path is among them), and those after.
    let (before, after): (Vec<Option<Group<'t>>>, Vec<Group<'t>>) = groups
        .into_par_iter()
        .zip(firsts)
        .map(
            |((first_segment, owners), first)| match first <= collapse_at {
                true => {
                    let (before, after) =
                        owners.into_iter().partition(|&e| place(e) <= collapse_at);
                    (Some((first_segment, before)), (first_segment, after))
                }
                false => (None, (first_segment, owners)),
            },
        )
        .unzip();

    // The root as the collapse finds it.
    let children: Vec<(String, trie::Node)> = before
        .into_par_iter()
        .flatten()
        .map(|(first_segment, owners)| {
            let mut child = trie::Node::default();
            let shared = 1 + first_segment.len();
            let order = sorted(paths, owners, shared);
            feed_in_order(&order, paths, shared, |segments, n| {
                child.insert(segments, n)
            });
            (first_segment.to_string(), child)
        })
        .collect();
    let mut root = trie::Node {
        count: children.iter().map(|(_, child)| child.count).sum(),
        children: children.into_iter().collect(),
        ..trie::Node::default()
    };
    root.collapse();

    // The paths after it, to the kept children and to the parameters.
    let mut to_children: FxHashMap<&str, Vec<Id>> = FxHashMap::default();
    let mut to_params: FxHashMap<ParamKey, Vec<Id>> = FxHashMap::default();
    for (first_segment, owners) in after.into_iter().filter(|(_, o)| !o.is_empty()) {
        match root.children.contains_key(first_segment) {
            true => drop(to_children.insert(first_segment, owners)),
            false => to_params
                .entry(param_key(first_segment))
                .or_default()
                .extend(owners),
        }
    }
    for key in to_params.keys() {
        root.params.entry(key.clone()).or_default();
    }
    let trie::Node {
        children, params, ..
    } = &mut root;
    let children: Vec<_> = children
        .iter_mut()
        .filter_map(|(name, child)| Some((child, to_children.remove(name.as_str())?, name.len())))
        .collect();
    let params: Vec<_> = params
        .iter_mut()
        .filter_map(|(key, param)| Some((param, to_params.remove(key)?)))
        .collect();
    rayon::join(
        || {
            children.into_par_iter().for_each(|(child, owners, len)| {
                let order = sorted(paths, owners, 1 + len);
                feed_in_order(&order, paths, 1 + len, |segments, n| {
                    child.insert(segments, n)
                });
            })
        },
        || {
            params.into_par_iter().for_each(|(param, owners)| {
                let order = sorted(paths, owners, 1);
                feed_in_order(&order, paths, 0, |segments, n| {
                    if let Some((value, rest)) = segments.split_first() {
                        param.insert(value, rest, n);
                    }
                });
            })
        },
    );
    root.count = total;
    root
}
