//! Endpoint discovery: path positions that are parameters, recognised by their
//! cardinality (see [`trie`]) and named so that templates read naturally
//! (see [`shape`]): `/api/orders/:id`, `/static/app.:hash.js`.
//!
//! Discovery runs on the endpoints ingestion produced (method + path after
//! the shape rules and any `--route` rules): one pass over the event table's
//! endpoint column counts requests per endpoint, the distinct paths are fed
//! to the trie in a canonical order, and the endpoint column is then mapped
//! onto templates (`METHOD template`). Endpoints named by a `--route` rule,
//! and `(invalid request)`, are left as they are: explicit rules win. The
//! same mapping applies templates read from a routes file ([`routes_file`]).

mod mapping;
mod matcher;
mod order;
mod paths;
pub mod routes_file;
pub mod shape;
pub mod template;
pub mod trie;
mod wide_root;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::events::{EventTable, Id};
use crate::ingest::endpoint::RouteRule;
use mapping::{Mapping, mapping};
use order::PathSource;
pub use paths::method_and_path;
use paths::{Paths, split_segments};
pub use template::{Template, TemplateSet};

/// Whether discovery runs (`--discover`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiscoverChoice {
    /// Discover templates from the paths.
    #[default]
    On,
    /// Shape rules only.
    Off,
}

impl std::str::FromStr for DiscoverChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "on" => Ok(DiscoverChoice::On),
            "off" => Ok(DiscoverChoice::Off),
            other => Err(format!("unknown --discover `{other}` (use on or off)")),
        }
    }
}

/// A template that collapsed several paths, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateUse {
    pub template: String,
    pub requests: u64,
    /// Distinct paths (methods aside) it collapsed.
    pub distinct_paths: u64,
    /// The path with the most requests among them (ties: the first by text).
    pub example: String,
}

/// Discovers the templates of the table's endpoints (`routed`: names that
/// explicit rules gave, left out) without mapping them: commands use
/// [`discover_and_apply`]; tests compare discovery alone with its reference.
#[cfg(test)]
pub fn discover(table: &EventTable, routed: &[String]) -> TemplateSet {
    discover_paths(&Paths::new(table, routed))
}

/// Discovers the templates of the table's endpoints and maps the endpoints
/// onto them, as discovering and then [`apply`] would, with one index of the
/// distinct paths serving both.
pub fn discover_and_apply(
    table: &mut EventTable,
    routed: &[String],
) -> (TemplateSet, Vec<TemplateUse>) {
    plan_discovery(table, routed).apply(table)
}

/// Templates and the renaming of a table's endpoints onto them, worked out
/// from the table as it is (so that other readers of it can run meanwhile):
/// [`Plan::apply`] renames.
pub struct Plan {
    templates: TemplateSet,
    mapping: Mapping,
}

impl Plan {
    /// Renames the table's endpoints (the table the plan was made from);
    /// returns the templates and their uses.
    pub fn apply(self, table: &mut EventTable) -> (TemplateSet, Vec<TemplateUse>) {
        (self.templates, self.mapping.rewrite(table))
    }
}

/// [`discover_and_apply`] up to the renaming.
pub fn plan_discovery(table: &EventTable, routed: &[String]) -> Plan {
    let paths = Paths::new(table, routed);
    let templates = discover_paths(&paths);
    let mapping = mapping(table, &paths, &templates);
    Plan { templates, mapping }
}

/// [`apply`] of `templates` up to the renaming.
pub fn plan_templates(table: &EventTable, templates: &TemplateSet, routed: &[String]) -> Plan {
    let mapping = mapping(table, &Paths::new(table, routed), templates);
    Plan {
        templates: templates.clone(),
        mapping,
    }
}

fn discover_paths(paths: &Paths) -> TemplateSet {
    let mut root = build_trie(paths);
    root.finish();
    let mut templates = Vec::new();
    collect(&root, &mut Vec::new(), &mut templates);
    TemplateSet::new(templates)
}

/// The trie of the distinct paths, fed in the canonical order (most requests
/// first, ties by path).
///
/// With fewer than [`trie::CAP`] distinct first segments the root never
/// collapses while paths are fed, so the subtrie under each first segment
/// sees the same inserts, in the same order, as in one pass: those subtries
/// are built on their own, in parallel, each from its own paths sorted in
/// the canonical order (so that only the groups being built hold their
/// sorted paths). With more, the root collapses on the way: see
/// [`wide_root`].
fn build_trie(paths: &Paths) -> trie::Node {
    // Grouped on every core: the order within a group does not matter, as
    // its paths are sorted before they are fed.
    let (groups, total) = paths
        .par_owners()
        .fold(
            || (FxHashMap::<&str, Vec<Id>>::default(), 0u64),
            |(mut groups, total), e| {
                let rest = paths.owner_path(e).get(1..).unwrap_or_default();
                let first = &rest[..rest.bytes().position(|b| b == b'/').unwrap_or(rest.len())];
                groups.entry(first).or_default().push(e);
                (groups, total + u64::from(paths.requests[e as usize]))
            },
        )
        .reduce(
            || (FxHashMap::default(), 0),
            |(mut a, a_total), (b, b_total)| {
                for (first, mut owners) in b {
                    a.entry(first).or_default().append(&mut owners);
                }
                (a, a_total + b_total)
            },
        );
    if groups.len() >= trie::CAP {
        return wide_root::build(paths, groups.into_iter().collect(), total);
    }
    let children: Vec<(String, trie::Node)> = groups
        .into_par_iter()
        .map(|(first, owners)| {
            let mut child = trie::Node::default();
            let order = sorted(paths, owners, 1 + first.len());
            feed_in_order(&order, paths, 1, |segments, n| child.insert(segments, n));
            (first.to_string(), child)
        })
        .collect();
    trie::Node {
        count: total,
        children: children.into_iter().collect(),
        ..trie::Node::default()
    }
}

/// The paths of `owners` in the canonical order (every path has the same
/// `shared` bytes first).
fn sorted(paths: &Paths, owners: Vec<Id>, shared: usize) -> Vec<order::Entry> {
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

/// Hands `insert` the segments of each path of `order` but the first `skip`,
/// with its requests, in that order.
///
/// The names lie in memory in endpoint order, not in this one: read one by
/// one between inserts, each read waits on memory. So the paths of a block
/// are first copied into one buffer, each path's memory asked for a few
/// paths ahead so that the waits overlap, and the inserts then read the
/// buffer front to back.
fn feed_in_order(
    order: &[order::Entry],
    paths: &Paths,
    skip: usize,
    mut insert: impl FnMut(&[&str], u64),
) {
    let mut text = String::new();
    let mut ends: Vec<usize> = Vec::with_capacity(FEED_BLOCK.min(order.len()));
    for block in order.chunks(FEED_BLOCK) {
        text.clear();
        ends.clear();
        for (i, entry) in block.iter().enumerate() {
            paths.prefetch_ahead(|k| block.get(i + k).map(|e| e.owner));
            text.push_str(paths.owner_path(entry.owner));
            ends.push(text.len());
        }
        let mut segments: Vec<&str> = Vec::new();
        let mut start = 0;
        for (entry, &end) in block.iter().zip(&ends) {
            split_segments(&text[start..end], &mut segments);
            start = end;
            insert(&segments[skip..], entry.requests);
        }
    }
}

/// Every template of the finished trie (one per node where paths end).
fn collect(node: &trie::Node, prefix: &mut Vec<String>, out: &mut Vec<Template>) {
    if node.terminal > 0 {
        let text = format!("/{}", prefix.join("/"));
        out.push(Template::parse(&text).unwrap_or_else(|_| {
            Template {
                segments: prefix
                    .iter()
                    .map(|s| template::Segment::Literal(s.clone()))
                    .collect(),
            }
        }));
    }
    for (name, child) in &node.children {
        prefix.push(name.clone());
        collect(child, prefix, out);
        prefix.pop();
    }
    for (key, param) in &node.params {
        prefix.push(param.display(key));
        collect(&param.node, prefix, out);
        prefix.pop();
    }
}

/// Maps the table's endpoints onto the templates of a routes file, as every
/// command does with `--routes` (endpoints the `rules` named are left as they are).
pub fn apply_routes(
    table: &mut EventTable,
    templates: &TemplateSet,
    rules: &[RouteRule],
) -> Vec<TemplateUse> {
    let routed: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    apply(table, templates, &routed)
}

/// Maps the table's endpoints onto `templates` (`METHOD template`), leaving
/// `routed` names and names without a method and path as they are; returns
/// the templates that collapsed more than one path, most requests first.
///
/// Each distinct path is matched once (methods aside) and no path is copied:
/// memory follows the templates, not the distinct paths, beyond one map entry
/// per path while the table is mapped.
pub fn apply(
    table: &mut EventTable,
    templates: &TemplateSet,
    routed: &[String],
) -> Vec<TemplateUse> {
    let mapping = mapping(table, &Paths::new(table, routed), templates);
    mapping.rewrite(table)
}

#[cfg(test)]
mod tests;
