use super::*;
use crate::policy::Policy;

fn shape(text: &str) -> Shape {
    Shape::of(&Policy::parse(text, "p").unwrap()[0]).unwrap()
}

#[test]
fn token_bucket_limits_per_window_are_capacity_plus_refill() {
    let s = shape("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7");
    // second: 7 + ⌈40/60⌉ − 1; minute: 7 + 40 − 1; hour: 7 + 2400 − 1.
    assert_eq!(limits(&s), Limits::from([(0, 7), (1, 46), (2, 2406)]));
}

#[test]
fn fixed_windows_on_kong_periods_are_exact() {
    let s = shape("[[rule]]\nname='g'\nlimit='100/1m'\nalgorithm='fixed-window'");
    assert_eq!(limits(&s), Limits::from([(0, 100), (1, 100), (2, 6000)]));
    let s = shape("[[rule]]\nname='g'\nlimit='5000/1h'\nalgorithm='sliding-log'");
    assert_eq!(
        limits(&s),
        Limits::from([(1, 5000), (2, 5000), (3, 120_000)])
    );
}

#[test]
fn merging_takes_the_smallest_and_keeps_periods_ordered() {
    let a = Limits::from([(0, 7), (1, 46), (2, 2406)]);
    let b = Limits::from([(0, 20), (1, 30)]);
    assert_eq!(merge(&[a, b]), Limits::from([(0, 7), (1, 30), (2, 2406)]));
    // A shorter period is lowered to a longer one's limit, never a
    // longer one raised: 100/1s with 10/1h (second 100, minute 6000;
    // minute 10, hour 10, day 240) admits 10 an hour, not 100.
    let fast = Limits::from([(0, 100), (1, 6000)]);
    let slow = Limits::from([(1, 10), (2, 10), (3, 240)]);
    assert_eq!(
        merge(&[fast, slow]),
        Limits::from([(0, 10), (1, 10), (2, 10), (3, 240)])
    );
    assert_eq!(
        merge(&[Limits::from([(0, 50), (1, 10)])]),
        Limits::from([(0, 10), (1, 10)])
    );
}

fn render(policy: &str) -> String {
    let rules = Policy::parse(policy, "p").unwrap();
    Kong.render(&rules, &ExportOptions::default()).unwrap()
}

#[test]
fn rules_for_every_request_share_the_one_global_plugin() {
    // Kong holds one global rate-limiting plugin: the rules keyed alike
    // merge into it, the one keyed otherwise is said not to be enforced.
    let out = render(
        "[[rule]]\nname='a'\nlimit='100/1m'\nalgorithm='fixed-window'\n\
         [[rule]]\nname='k'\nkey='field:http_x_api_key'\nlimit='5/1s'\n\
         [[rule]]\nname='b'\nlimit='2000/1h'\nalgorithm='fixed-window'\n",
    );
    assert_eq!(out.matches("- name: rate-limiting").count(), 1, "{out}");
    assert!(out.contains("instance_name: \"rl-a\""), "{out}");
    // a: second 100, minute 100, hour 6000; b: minute 2000, hour 2000,
    // day 48000. Smallest per period: 100, 100, 2000, 48000.
    assert!(
        out.contains("    second: 100\n    minute: 100\n    hour: 2000\n    day: 48000\n"),
        "{out}"
    );
    assert!(out.contains("smallest limits of rules `a`, `b`"), "{out}");
    assert!(out.contains("NOT ENFORCED"), "{out}");
    assert!(out.contains("rule `k` limits only the routes"), "{out}");
}

#[test]
fn a_route_kong_takes_second_is_said_not_enforced() {
    let out = render(
        "[[rule]]\nname='a'\nroute='^/api'\nlimit='100/1m'\n\
         [[rule]]\nname='b'\nroute='^/api'\nkey='field:http_x_api_key'\nlimit='5/1m'\n",
    );
    let b = out.find("name: \"rl-b\"").unwrap();
    let comment = "NOT ENFORCED: Kong takes the route of rule `a` first for every request this route matches.";
    assert!(out[..b].contains(comment), "{out}");
    // Listing `b` first would hide `a` instead: no advice to.
    assert!(!out.contains("List rule"), "{out}");
    assert!(
        out.contains("`b` (keyed otherwise) does not limit them"),
        "{out}"
    );
}

#[test]
fn a_route_within_an_earlier_broader_one_is_said_not_enforced() {
    let out = render(
        "[[rule]]\nname='api'\nroute='^/api/'\nlimit='100/1m'\n\
         [[rule]]\nname='search'\nroute='^/api/search$'\nlimit='5/1m'\n\
         [[rule]]\nname='other'\nroute='^/other'\nlimit='5/1m'\n",
    );
    let (search, other) = (
        out.find("name: \"rl-search\"").unwrap(),
        out.find("name: \"rl-other\"").unwrap(),
    );
    let comment = "NOT ENFORCED: Kong takes the route of rule `api` first for every request this route matches. List rule `search` before `api` in the policy for Kong to take this route first.";
    assert!(out[..search].contains(comment), "{out}");
    assert_eq!(out.matches(comment).count(), 1, "{out}");
    assert!(other > search);
}

#[test]
fn routes_carry_their_order_and_what_they_leave_out() {
    let out = render(
        "[[rule]]\nname='g'\nlimit='100/1m'\n\
         [[rule]]\nname='s'\nroute='^/s'\nkey='field:http_x_api_key'\nlimit='5/1s'\n\
         [[rule]]\nname='m'\nmethod='POST'\nlimit='10/1m'\n",
    );
    // POST (a method and a path) comes before the route alone.
    let s = out.find("name: \"rl-s\"").unwrap();
    let m = out.find("name: \"rl-m\"").unwrap();
    assert!(out[s..].contains("regex_priority: 1\n"), "{out}");
    assert!(out[m..].contains("regex_priority: 2\n"), "{out}");
    assert!(out[m..].contains("paths: [\"~/\"]"), "{out}");
    // `s` is keyed otherwise than `g`; `m` merges `g`.
    assert!(
        out.contains("`g` (keyed otherwise) does not limit them"),
        "{out}"
    );
    assert!(out.contains("smallest limits of rules `m`, `g`"), "{out}");
}

#[test]
fn a_window_beyond_sixty_days_keeps_the_day() {
    // Kong needs at least one period: 1000/90d admits at most 1000 a day.
    let s = shape("[[rule]]\nname='g'\nlimit='1000/90d'\nalgorithm='fixed-window'");
    assert_eq!(limits(&s), Limits::from([(3, 1000)]));
    let out = render("[[rule]]\nname='g'\nlimit='1000/90d'\nalgorithm='fixed-window'");
    assert!(out.contains("    day: 1000\n"), "{out}");
}

#[test]
fn regex_paths_keep_search_semantics() {
    assert_eq!(regex_path("^/api/search$"), "~^/api/search$");
    assert_eq!(regex_path("/search"), "~.*(?:/search)");
    assert_eq!(regex_path("^/a|^/b"), "~.*(?:^/a|^/b)");
}

#[test]
fn methods_kong_cannot_route_are_refused_by_rule() {
    for method in ["M-SEARCH", "GET1", "X_Y"] {
        let rules = Policy::parse(
            &format!("[[rule]]\nname='s'\nmethod='{method}'\nlimit='5/1s'"),
            "p",
        )
        .unwrap();
        let err = Kong
            .render(&rules, &ExportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!(
                "rule `s`: Kong's routes take methods of capital letters only, not \"{method}\""
            )),
            "{err}"
        );
    }
    assert!(
        render("[[rule]]\nname='s'\nmethod='purge'\nlimit='5/1s'").contains("methods: [\"PURGE\"]")
    );
}
