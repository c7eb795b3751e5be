use super::*;
use crate::events::Event;

/// A fixed scramble, for ids and hashes.
fn scramble(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 8 hex digits that always hold a letter and a digit.
fn hex8(i: u64) -> String {
    format!("{:07x}a", scramble(i) & 0x0fff_ffff).replacen('0', "1", 0)
}

/// A table of (endpoint name, requests) rows, interned in the order given.
fn table(rows: &[(String, u64)]) -> EventTable {
    let mut t = EventTable::default();
    let c = t.clients.intern("c");
    let mut ts = 0;
    for (name, n) in rows {
        let e = t.endpoints.intern(name);
        for _ in 0..*n {
            t.push(Event {
                ts,
                client: c,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
            ts += 1;
        }
    }
    t
}

/// The hand-made shapes of the issue, each beside names that must stay.
fn shapes() -> Vec<(String, u64)> {
    let mut rows = Vec::new();
    // Short hex ids, one to three requests each, beside frequent siblings.
    for i in 0..500 {
        rows.push((format!("GET /api/orders/{}", hex8(i)), 1 + i % 3));
        if i % 5 == 0 {
            rows.push((format!("GET /api/orders/{}/items", hex8(i)), 1));
        }
    }
    rows.push(("GET /api/orders/search".into(), 300));
    rows.push(("POST /api/orders".into(), 200));
    // Hashed assets of 60 builds.
    for b in 0..60 {
        let h = hex8(10_000 + b);
        rows.push((format!("GET /static/app.{h}.js"), 5));
        rows.push((format!("GET /static/vendor.{}.js", hex8(20_000 + b)), 4));
    }
    rows.push(("GET /static/logo.png".into(), 400));
    // Slugs (200 posts, each under 1% of the blog's requests) and base62 video ids.
    for i in 0..200 {
        let word = ["one", "two", "six"][i % 3];
        rows.push((
            format!(
                "GET /blog/how-to-{word}-{}-of-things",
                "x".repeat(i % 40 + 1) + &"y".repeat(i / 40)
            ),
            2,
        ));
    }
    for i in 0..150 {
        rows.push((
            format!("GET /v/dQw{}WgXcQ", scramble(i as u64) % 1_000_000),
            1,
        ));
    }
    // A small API whose names must stay.
    for r in ["users", "products", "cart", "search", "login", "logout"] {
        rows.push((format!("GET /api/v1/{r}"), 50));
    }
    rows.push(("search".into(), 70)); // a --route name
    rows
}

fn template_texts(set: &TemplateSet) -> Vec<String> {
    set.templates().iter().map(ToString::to_string).collect()
}

#[test]
fn the_shapes_collapse_and_the_names_stay() {
    let mut t = table(&shapes());
    let routed = vec!["search".to_string()];
    let set = discover(&t, &routed);
    let texts = template_texts(&set);
    for expected in [
        "/api/orders/:id",
        "/api/orders/:id/items",
        "/api/orders/search",
        "/api/orders",
        "/static/app.:hash.js",
        "/static/vendor.:hash.js",
        "/static/logo.png",
        "/blog/:slug",
        "/v/:id",
        "/api/v1/users",
        "/api/v1/logout",
    ] {
        assert!(
            texts.contains(&expected.to_string()),
            "{expected} missing from {texts:#?}"
        );
    }
    assert_eq!(texts.len(), 15, "{texts:#?}");
    let uses = apply(&mut t, &set, &routed);
    let find = |tpl: &str| uses.iter().find(|u| u.template == tpl).unwrap();
    assert_eq!(find("/api/orders/:id").distinct_paths, 500);
    assert_eq!(find("/static/app.:hash.js").distinct_paths, 60);
    assert_eq!(find("/v/:id").distinct_paths, 150);
    assert_eq!(find("/blog/:slug").requests, 400);
    let names: Vec<&str> = t.endpoints.names().collect();
    assert!(names.contains(&"GET /api/orders/:id"));
    assert!(names.contains(&"GET /api/orders/search"));
    assert!(names.contains(&"search"));
    assert_eq!(names.len(), 16, "{names:#?}");
    // Every event kept its requests: the column was only renamed.
    let orders = t.endpoints.get("GET /api/orders/:id").unwrap();
    let n = t.endpoint.iter().filter(|&&e| e == orders).count() as u64;
    assert_eq!(n, find("/api/orders/:id").requests);
}

#[test]
fn input_order_changes_nothing() {
    let rows = shapes();
    let mut reversed = rows.clone();
    reversed.reverse();
    let mut interleaved: Vec<(String, u64)> = rows
        .iter()
        .step_by(2)
        .chain(rows.iter().skip(1).step_by(2))
        .cloned()
        .collect();
    interleaved.rotate_left(7);
    let expected = template_texts(&discover(&table(&rows), &[]));
    assert_eq!(template_texts(&discover(&table(&reversed), &[])), expected);
    assert_eq!(
        template_texts(&discover(&table(&interleaved), &[])),
        expected
    );
}

#[test]
fn a_node_at_its_cap_collapses_at_once() {
    let mut root = trie::Node::default();
    for i in 0..(trie::CAP as u64 * 3) {
        let id = hex8(i);
        root.insert(&["u", &id], 1);
        assert!(root.children["u"].children.len() < trie::CAP);
    }
    let u = &root.children["u"];
    assert!(u.collapsed);
    assert_eq!(u.params.len(), 1);
    assert_eq!(
        u.params.values().next().unwrap().distinct(),
        trie::CAP as u64 * 3
    );
}

#[test]
fn a_few_dozen_builds_of_one_asset_share_their_skeleton() {
    let mut rows = Vec::new();
    for b in 0..12 {
        rows.push((format!("GET /assets/app.{}.js", hex8(50_000 + b)), 100));
    }
    for b in 0..7 {
        rows.push((format!("GET /assets/theme.{}.css", hex8(60_000 + b)), 100));
    }
    rows.push(("GET /assets/logo.png".into(), 100));
    let texts = template_texts(&discover(&table(&rows), &[]));
    assert!(
        texts.contains(&"/assets/app.:hash.js".to_string()),
        "{texts:?}"
    );
    // Seven builds are one short of a skeleton group: they keep their names.
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.starts_with("/assets/theme."))
            .count(),
        7
    );
    assert!(texts.contains(&"/assets/logo.png".to_string()));
}

#[test]
fn few_or_frequent_children_are_not_parameters() {
    let mut rows = Vec::new();
    // 14 rare children and a frequent one: one short of a parameter position.
    for i in 0..14 {
        rows.push((format!("GET /few/{}", hex8(i)), 1));
    }
    rows.push(("GET /few/main".into(), 10_000));
    // 30 children with over 1% each: most are not rare.
    for i in 0..30 {
        rows.push((format!("GET /even/{}", hex8(100 + i)), 10));
    }
    let set = discover(&table(&rows), &[]);
    assert!(
        set.templates().iter().all(|t| !t.has_parameters()),
        "{:?}",
        template_texts(&set)
    );
}

#[test]
fn templates_read_from_a_file_map_the_same_way() {
    let mut t = table(&shapes());
    let file = "/api/orders/:id\n/api/orders/search\n/static/app.:hash.js\n";
    let set = TemplateSet::new(routes_file::parse(file, "routes").unwrap());
    let uses = apply(&mut t, &set, &[]);
    let names: Vec<&str> = t.endpoints.names().collect();
    assert!(names.contains(&"GET /api/orders/:id"));
    assert!(names.contains(&"GET /static/app.:hash.js"));
    assert!(
        names.iter().any(|n| n.starts_with("GET /static/vendor.")),
        "not in the file: left as it was"
    );
    assert_eq!(uses.len(), 2);
}

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

/// Discovery as first written (a map of copied paths): the definition
/// [`discover`] must agree with.
fn discover_reference(table: &EventTable, routed: &[String]) -> TemplateSet {
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
    /// on paths shared by several methods, routed names and names that are
    /// no path at all.
    #[test]
    fn apply_agrees_with_the_reference(
        rows in proptest::collection::vec(
            (0usize..4, 0u64..300, 0u64..6, 1u64..4),
            1..400,
        ),
    ) {
        let methods = ["GET", "POST", "search", "GET"];
        let rows: Vec<(String, u64)> = rows
            .iter()
            .map(|&(m, id, kind, n)| {
                let name = match (methods[m], kind) {
                    ("search", _) => "search".to_string(),
                    (m, 0) => format!("{m} /api/orders/{}", hex8(id)),
                    (m, 1) => format!("{m} /static/app.{}.js", hex8(id)),
                    (m, 2) => format!("{m} /static/app.{}.js", id),
                    (m, 3) => format!("{m} /api/orders/search"),
                    (m, 4) => format!("{m} /{}/app.1.js", hex8(id)),
                    (m, _) => format!("{m} /api/orders/:id"),
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
fn paths_under_a_thousand_first_segments_are_fed_in_one_pass_like_the_reference() {
    // More distinct first segments than a node holds: the root collapses while
    // paths are fed, so the subtries cannot be built apart.
    let rows: Vec<(String, u64)> = (0..(trie::CAP as u64 * 2 + 500))
        .map(|i| (format!("GET /{}/orders/{i}", hex8(i)), 1 + i % 3))
        .chain((0..50).map(|i| (format!("GET /api/v1/items/{i}"), 40)))
        .collect();
    let table = table(&rows);
    let texts = template_texts(&discover(&table, &[]));
    assert_eq!(texts, template_texts(&discover_reference(&table, &[])));
    assert!(texts.iter().any(|t| t.starts_with("/:")), "{texts:?}");
}
