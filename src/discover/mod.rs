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

mod build;
mod mapping;
mod matcher;
mod order;
mod paths;
pub mod routes_file;
pub mod shape;
pub mod template;
pub mod trie;
mod wide_root;

use serde::Serialize;

use crate::events::EventTable;
use crate::ingest::endpoint::RouteRule;
use mapping::{Mapping, mapping};
use paths::Paths;
pub use paths::method_and_path;
pub use template::{Segment, Template, TemplateSet};

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

/// How a command names a table's endpoints, up to the renaming: by the
/// templates of a routes file, by discovered ones, or (`None`) as ingestion
/// named them. `rules` are the `--route` rules, whose names stay.
pub fn plan_naming(
    table: &EventTable,
    routes: Option<&TemplateSet>,
    discover: DiscoverChoice,
    rules: &[RouteRule],
) -> Option<Plan> {
    let routed: Vec<String> = rules.iter().map(|r| r.name.clone()).collect();
    match (routes, discover) {
        (Some(set), _) => Some(plan_templates(table, set, &routed)),
        (None, DiscoverChoice::On) => Some(plan_discovery(table, &routed)),
        (None, DiscoverChoice::Off) => None,
    }
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
    let mut root = build::trie(paths);
    root.finish();
    let mut templates = Vec::new();
    collect(&root, &mut Vec::new(), &mut templates);
    TemplateSet::new(templates)
}

/// Every template of the finished trie (one per node where paths end): its
/// kept names as discovery keeps them ([`Segment::of_name`]: `:id` from the
/// shape rules a parameter, `jobs:cancel` literal), its parameters as whole
/// or pattern segments (`:id`, `app.:hash.js`).
fn collect(node: &trie::Node, prefix: &mut Vec<Segment>, out: &mut Vec<Template>) {
    if node.terminal > 0 {
        out.push(Template {
            segments: prefix.clone(),
        });
    }
    for (name, child) in &node.children {
        prefix.push(Segment::of_name(name));
        collect(child, prefix, out);
        prefix.pop();
    }
    for (key, param) in &node.params {
        prefix.push(Segment::parse(&param.display(key)));
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
