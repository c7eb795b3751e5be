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

pub mod routes_file;
pub mod shape;
pub mod template;
pub mod trie;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::events::{EventTable, Id, Interner};
use crate::ingest::endpoint::RouteRule;
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

/// Splits an endpoint name into method and path, when it has that shape
/// (the endpoints templates apply to).
pub fn method_and_path(name: &str) -> Option<(&str, &str)> {
    let (method, path) = name.split_once(' ')?;
    let is_method = !method.is_empty()
        && method
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_');
    (is_method && path.starts_with('/')).then_some((method, path))
}

/// Requests per endpoint id.
fn endpoint_counts(table: &EventTable) -> Vec<u64> {
    let mut counts = vec![0u64; table.endpoints.len()];
    for &e in &table.endpoint {
        counts[e as usize] += 1;
    }
    counts
}

/// Discovers the templates of the table's endpoints (`routed`: names that
/// explicit rules gave, left out).
pub fn discover(table: &EventTable, routed: &[String]) -> TemplateSet {
    let counts = endpoint_counts(table);
    let mut paths: FxHashMap<&str, u64> = FxHashMap::default();
    for (e, name) in table.endpoints.names().enumerate() {
        if routed.iter().any(|r| r == name) {
            continue;
        }
        if let Some((_, path)) = method_and_path(name) {
            *paths.entry(path).or_default() += counts[e];
        }
    }
    let mut order: Vec<(&str, u64)> = paths.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut root = trie::Node::default();
    for (path, count) in order {
        let segments: Vec<&str> = path[1..].split('/').collect();
        root.insert(&segments, count);
    }
    root.finish();
    let mut templates = Vec::new();
    collect(&root, &mut Vec::new(), &mut templates);
    TemplateSet::new(templates)
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
pub fn apply(
    table: &mut EventTable,
    templates: &TemplateSet,
    routed: &[String],
) -> Vec<TemplateUse> {
    let counts = endpoint_counts(table);
    let mut names = Interner::default();
    let mut map: Vec<Id> = Vec::with_capacity(table.endpoints.len());
    // Per template: requests, distinct paths with their requests.
    let mut uses: FxHashMap<String, (u64, FxHashMap<String, u64>)> = FxHashMap::default();
    for (e, name) in table.endpoints.names().enumerate() {
        let matched = (!routed.iter().any(|r| r == name))
            .then(|| method_and_path(name))
            .flatten()
            .and_then(|(method, path)| Some((method, path, templates.find(path)?)));
        let new_name = match matched {
            Some((method, path, t)) => {
                let text = t.to_string();
                let entry = uses.entry(text.clone()).or_default();
                entry.0 += counts[e];
                *entry.1.entry(path.to_string()).or_default() += counts[e];
                format!("{method} {text}")
            }
            None => name.to_string(),
        };
        map.push(names.intern(&new_name));
    }
    for e in &mut table.endpoint {
        *e = map[*e as usize];
    }
    table.endpoints = names;
    let mut out: Vec<TemplateUse> = uses
        .into_iter()
        .filter(|(_, (_, paths))| paths.len() > 1)
        .map(|(template, (requests, paths))| {
            // Prefer a path as logged to one the shape rules already turned into a template.
            let example = paths
                .iter()
                .max_by(|a, b| {
                    (!a.0.contains(':'), a.1)
                        .cmp(&(!b.0.contains(':'), b.1))
                        .then(b.0.cmp(a.0))
                })
                .map(|(p, _)| p.clone())
                .unwrap_or_default();
            TemplateUse {
                template,
                requests,
                distinct_paths: paths.len() as u64,
                example,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.requests
            .cmp(&a.requests)
            .then_with(|| a.template.cmp(&b.template))
    });
    out
}

#[cfg(test)]
mod tests;
