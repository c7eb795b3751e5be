//! The parallel build of the trie (nodes split by segment, wide nodes that
//! collapse on the way, the order paths are fed in) on hand-made shapes and
//! wide random ones: the same trie as the reference's one pass.

use super::*;

#[test]
fn paths_under_a_thousand_first_segments_are_fed_in_one_pass_like_the_reference() {
    // More distinct first segments than a node holds: the root collapses while
    // paths are fed, so the subtries cannot be built apart.
    let rows: Vec<(String, u64)> = (0..(trie::CAP as u64 * 2 + 500))
        .map(|i| (format!("GET /{}/orders/{i}", hex8(i)), 1 + i % 3))
        .chain((0..50).map(|i| (format!("GET /api/v1/items/{i}"), 40)))
        .collect();
    let table = table(&rows);
    let texts = built_like_the_reference(&table);
    assert!(texts.iter().any(|t| t.starts_with("/:")), "{texts:?}");
}

#[test]
fn the_order_paths_are_fed_in_decides_a_collapse_like_the_reference() {
    // A node reaches its cap while paths are fed: the child holding 300 paths
    // keeps its name only if those paths come first, which among paths of
    // equal requests only their text decides, at a byte 0, 8 or 14 places
    // after the prefix the paths share (`/xN/shared/`).
    for pad in [0, 8, 14] {
        let p = "p".repeat(pad);
        let mut rows: Vec<(String, u64)> = (0..300)
            .map(|j| (format!("GET /x{pad}/shared/{p}00000/k/{j}"), 1))
            .collect();
        rows.extend((1..2000).map(|i| (format!("GET /x{pad}/shared/{p}{i:05}"), 1)));
        rows.push((format!("GET /x{pad}/shared/q"), 1));
        rows.reverse();
        let table = table(&rows);
        let texts = built_like_the_reference(&table);
        let kept = format!("/x{pad}/shared/{p}00000/");
        assert!(texts.iter().any(|t| t.starts_with(&kept)), "{texts:?}");
    }
}

/// Lowercase letters for `i` (base 26), a name without digits.
fn letters(mut i: u64) -> String {
    let mut s = String::new();
    loop {
        s.push((b'a' + (i % 26) as u8) as char);
        i /= 26;
        if i == 0 {
            return s;
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Paths under more next segments than a node holds (the root's, or
    /// below a prefix all share), so that the node collapses while they are
    /// fed: heavy groups it keeps, rare groups with paths before and after
    /// the collapse, segments that go to skeleton and whole parameters, a
    /// crowd of paths under one name, most of one request (rare or not when
    /// the node collapses, not rare at the end), and the node's own path,
    /// before or after the collapse, whose requests may decide which
    /// children are rare then; built group by group like one pass.
    #[test]
    fn wide_roots_are_built_like_the_reference(
        extra in 0u64..300,
        requests in proptest::collection::vec(1u64..4, 1400),
        more in proptest::collection::vec((0u64..1400, 0u64..6, 0u64..50, 1u64..6), 0..500),
        heavy in proptest::collection::vec((0usize..3, 0u64..40, 20u64..80), 0..40),
        crowd in (1u64..4, 0u64..40, 0u64..300),
        prefix in proptest::sample::select(vec!["", "/t", "/a/b"]),
        own in proptest::prop_oneof![0u64..30, 1000u64..6000],
    ) {
        let segments = trie::CAP as u64 + 50 + extra;
        let first = |i: u64| match i % 5 {
            0 => hex8(i),
            1 => format!("w{i}-page"),
            2 => format!("lib.{}.js", hex8(i)),
            3 => format!("n{}", letters(i)),
            _ => i.to_string(),
        };
        let rest = |kind: u64, j: u64| match kind {
            0 => String::new(),
            1 => "/".to_string(),
            2 => "/x".to_string(),
            3 => format!("/x/{}", hex8(j)),
            4 => format!("/{}/y", j % 7),
            _ => format!("/x/{j}/z"),
        };
        let rows: Vec<(String, u64)> = (0..segments)
            .map(|i| (format!("GET {prefix}/{}{}", first(i), rest(i % 6, i)), requests[i as usize % 1400]))
            .chain(more.iter().filter(|m| m.0 < segments).map(|&(i, kind, j, n)| {
                (format!("GET {prefix}/{}{}", first(i), rest(kind, j)), n)
            }))
            .chain(heavy.iter().map(|&(w, j, n)| {
                (format!("POST {prefix}/{}{}", ["api", "static", "blog"][w], rest(3, j)), n)
            }))
            .chain([(format!("GET {prefix}/crowd"), crowd.0)])
            .chain((0..crowd.1).map(|j| (format!("GET {prefix}/crowd/h{j}"), 4)))
            .chain((0..crowd.2).map(|j| (format!("GET {prefix}/crowd/{}", hex8(j)), 1)))
            .chain((!prefix.is_empty() && own > 0).then(|| (format!("GET {prefix}"), own)))
            .collect();
        let table = table(&rows);
        built_like_the_reference(&table);
    }
}

#[test]
fn paths_fed_to_a_parameter_after_the_root_collapses_keep_their_order() {
    // A thousand first segments of two requests collapse the root before any
    // path of one request is fed; those then go to the root's parameter, each
    // under a first segment of its own, where `shared` reaches its cap: its
    // child holding 300 paths keeps its name only if they come first (as
    // their first segments say).
    let mut rows: Vec<(String, u64)> = (0..trie::CAP as u64)
        .map(|i| (format!("GET /e{i}"), 2))
        .collect();
    // First segments of eight hex digits (a whole parameter), in the order
    // of the paths behind them.
    let id = |n: u64| format!("{n:07x}a");
    rows.extend((0..300).map(|j| (format!("GET /{}/shared/00000/k/{j}", id(j)), 1)));
    rows.extend((1..2000).map(|i| (format!("GET /{}/shared/{i:05}", id(1000 + i)), 1)));
    rows.reverse();
    let table = table(&rows);
    let texts = built_like_the_reference(&table);
    assert!(
        texts.iter().any(|t| t.starts_with("/:id/shared/00000/")),
        "{texts:?}"
    );
}

#[test]
fn paths_under_one_prefix_are_split_level_by_level_like_the_reference() {
    // Every path under `/api`: split below it, then below `/api/v1`, whose
    // thousand and more next segments make it one pass; paths ending at
    // each level on the way.
    let mut rows: Vec<(String, u64)> = vec![
        ("GET /api".to_string(), 5),
        ("GET /api/".to_string(), 2),
        ("GET /api/v1".to_string(), 3),
    ];
    rows.extend((0..1500).map(|i| (format!("GET /api/v1/{}/items", hex8(i)), 1 + i % 3)));
    rows.extend((0..400).map(|i| (format!("GET /api/v2/orders/{i}"), 1 + i % 2)));
    rows.extend((0..100).map(|i| (format!("POST /api/v2/carts/{}", hex8(i)), 2)));
    rows.extend((0..50).map(|i| (format!("GET /static/app.{}.js", hex8(i)), 1)));
    let table = table(&rows);
    let texts = built_like_the_reference(&table);
    for expected in ["/api", "/api/v1/:id/items", "/api/v2/orders/:id"] {
        assert!(texts.iter().any(|t| t == expected), "{expected}: {texts:?}");
    }
}

#[test]
fn paths_under_thousands_of_first_segments_of_one_path_are_fed_in_one_pass_like_the_reference() {
    // Too many groups of one path each to be worth building apart: the root
    // is fed in one pass, as the reference does.
    let rows: Vec<(String, u64)> = (0..6000u64)
        .map(|i| (format!("GET /{}/x", hex8(i)), 1 + i % 2))
        .chain((0..300).map(|i| (format!("GET /api/orders/{}", hex8(i)), 3)))
        .collect();
    let table = table(&rows);
    let texts = built_like_the_reference(&table);
    assert!(texts.iter().any(|t| t == "/:id/x"), "{texts:?}");
}
