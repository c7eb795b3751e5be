//! Discovery and mapping against their first, plainly written versions: the
//! definitions the faster code must agree with, on random and hand-made rows.

use super::*;
use crate::events::{Id, Interner};
use rustc_hash::FxHashMap;

/// The mapping as first written (a template lookup and a copied path per
/// endpoint): the definition [`apply`] must agree with.
fn apply_reference(
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
                match method {
                    "" => text,
                    method => format!("{method} {text}"),
                }
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
        .filter(|(template, (_, paths))| {
            paths.len() > 1 || paths.keys().any(|path| path != template)
        })
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

/// Discovery as first written (a map of copied paths): the definition
/// [`discover`] must agree with.
fn discover_reference(table: &EventTable, routed: &[String]) -> TemplateSet {
    let root = trie_reference(table, routed);
    let mut templates = Vec::new();
    collect(&root, &mut Vec::new(), &mut templates);
    TemplateSet::new(templates)
}

/// The finished trie of [`discover_reference`].
fn trie_reference(table: &EventTable, routed: &[String]) -> trie::Node {
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
    root
}

/// A trie written out node by node: requests, whether it collapsed, and per
/// parameter the values it counted and their shapes. Discovery's trie must
/// be the reference's, not only give its templates.
fn trie_text(node: &trie::Node, depth: usize, out: &mut String) {
    use std::fmt::Write;
    let pad = " ".repeat(depth);
    let (count, ends, collapsed) = (node.count, node.terminal, node.collapsed);
    writeln!(out, "{pad}{count} {ends} {collapsed}").unwrap();
    for (name, child) in &node.children {
        writeln!(out, "{pad}/{name}").unwrap();
        trie_text(child, depth + 1, out);
    }
    for (key, param) in &node.params {
        writeln!(out, "{pad}/{key:?} {:?}", param.counted()).unwrap();
        trie_text(&param.node, depth + 1, out);
    }
}

/// Asserts that discovery builds the reference's trie from `table`, and
/// returns its templates.
fn built_like_the_reference(table: &EventTable) -> Vec<String> {
    let text = |root: &trie::Node| {
        let mut out = String::new();
        trie_text(root, 0, &mut out);
        out
    };
    let mut built = build::trie(&paths::Paths::new(table, &[]));
    built.finish();
    assert_eq!(text(&built), text(&trie_reference(table, &[])));
    template_texts(&discover(table, &[]))
}

fn endpoint_counts(table: &EventTable) -> Vec<u64> {
    let mut counts = vec![0u64; table.endpoints.len()];
    for &e in &table.endpoint {
        counts[e as usize] += 1;
    }
    counts
}

fn uses_text(uses: &[TemplateUse]) -> Vec<(String, u64, u64, String)> {
    uses.iter()
        .map(|u| {
            (
                u.template.clone(),
                u.requests,
                u.distinct_paths,
                u.example.clone(),
            )
        })
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]
    /// Mapping gives the reference's names, ids, events and template uses,
    /// on paths shared by several methods, paths without a method (a log
    /// that logs none), routed names and names that are no path at all.
    #[test]
    fn apply_agrees_with_the_reference(
        rows in proptest::collection::vec(
            (0usize..5, 0u64..300, 0u64..9, 1u64..4),
            1..400,
        ),
    ) {
        let methods = ["GET", "POST", "search", "GET", ""];
        let rows: Vec<(String, u64)> = rows
            .iter()
            .map(|&(m, id, kind, n)| {
                let path = match kind {
                    0 => format!("/api/orders/{}", hex8(id)),
                    1 => format!("/static/app.{}.js", hex8(id)),
                    2 => format!("/static/app.{}.js", id),
                    3 => "/api/orders/search".to_string(),
                    4 => format!("/{}/app.1.js", hex8(id)),
                    // Paths alike for more than the bytes a sort key holds.
                    6 => format!("/api/orders/by-customer-{}/{}", id % 3, id % 7),
                    // A path that is its first segment, and one whose next
                    // byte sorts before `/`.
                    7 => format!("/api{}", ["", "/", "-v2/x", "/orders"][id as usize % 4]),
                    8 => format!("/api/{}", id % 2),
                    // A space in the path, with and without a method before it.
                    5 => format!("/api/a b/{}", id % 5),
                    _ => "/api/orders/:id".to_string(),
                };
                let name = match methods[m] {
                    "search" => "search".to_string(),
                    "" => path,
                    m => format!("{m} {path}"),
                };
                (name, n)
            })
            .collect();
        let routed = vec!["search".to_string()];
        let set = discover(&table(&rows), &routed);
        // Discovering and mapping at once equals the two steps.
        let (mut both, mut steps) = (table(&rows), table(&rows));
        let (together, uses) = discover_and_apply(&mut both, &routed);
        let apart = apply(&mut steps, &set, &routed);
        proptest::prop_assert_eq!(template_texts(&together), template_texts(&set));
        proptest::prop_assert_eq!(uses_text(&uses), uses_text(&apart));
        proptest::prop_assert_eq!(
            both.endpoints.names().collect::<Vec<_>>(),
            steps.endpoints.names().collect::<Vec<_>>()
        );
        proptest::prop_assert_eq!(&both.endpoint, &steps.endpoint);
        proptest::prop_assert_eq!(
            template_texts(&set),
            template_texts(&discover_reference(&table(&rows), &routed))
        );
        let file = "/api/orders/:id\n/api/orders/search\n/static/app.:hash.js\n/:slug/app.1.js\n";
        for set in [set, TemplateSet::new(routes_file::parse(file, "routes").unwrap())] {
            let mut fast = table(&rows);
            let mut reference = table(&rows);
            let a = apply(&mut fast, &set, &routed);
            let b = apply_reference(&mut reference, &set, &routed);
            proptest::prop_assert_eq!(uses_text(&a), uses_text(&b));
            proptest::prop_assert_eq!(
                fast.endpoints.names().collect::<Vec<_>>(),
                reference.endpoints.names().collect::<Vec<_>>()
            );
            proptest::prop_assert_eq!(&fast.endpoint, &reference.endpoint);
        }
    }
}

#[test]
fn the_reference_shapes_collapse_under_the_property_rows() {
    // The property above is only worth its cases if its rows make parameters.
    let rows: Vec<(String, u64)> = (0..300)
        .map(|id| (format!("GET /api/orders/{}", hex8(id)), 1))
        .chain((0..100).map(|id| (format!("POST /static/app.{id}.js"), 2)))
        .collect();
    let texts = template_texts(&discover(&table(&rows), &[]));
    assert!(texts.contains(&"/api/orders/:id".to_string()), "{texts:?}");
}

#[test]
fn template_uses_of_many_paths_tallied_in_parallel_agree_with_the_reference() {
    // More distinct paths than one range of the parallel tally holds, with
    // the best example of a template in any range.
    let rows: Vec<(String, u64)> = (0..60_000u64)
        .map(|i| match i % 3 {
            0 => (format!("GET /api/orders/{}", hex8(i)), 1 + i % 5),
            1 => (format!("POST /static/app.{}.js", hex8(i)), 1 + (i * 7) % 11),
            _ => (format!("GET /api/orders/{}", hex8(i / 3 * 3)), 2),
        })
        .chain([("GET /api/orders/:id".to_string(), 1)])
        .collect();
    let file = "/api/orders/:id\n/static/app.:hash.js\n";
    let set = TemplateSet::new(routes_file::parse(file, "routes").unwrap());
    let (mut fast, mut reference) = (table(&rows), table(&rows));
    let uses = apply(&mut fast, &set, &[]);
    assert_eq!(
        uses_text(&uses),
        uses_text(&apply_reference(&mut reference, &set, &[]))
    );
    assert_eq!(uses.len(), 2);
    assert!(uses.iter().all(|u| u.distinct_paths > 1 << 14), "{uses:?}");
}

mod building;
