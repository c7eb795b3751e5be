//! Tests of the Envoy conversions: refill steps, intervals and refused keys.

use super::*;

fn bucket(limit: &str, capacity: u64) -> TokenBucket {
    token_bucket(limit.parse().unwrap(), capacity)
}

#[test]
fn refill_one_token_per_interval_when_it_fits() {
    let b = bucket("40/1m", 7);
    assert_eq!(
        (b.max_tokens, b.tokens_per_fill, b.fill_interval_ms, b.exact),
        (7, 1, 1500, true)
    );
    let b = bucket("600/1m", 100);
    assert_eq!(
        (b.tokens_per_fill, b.fill_interval_ms, b.exact),
        (1, 100, true)
    );
}

#[test]
fn fast_rates_refill_several_tokens_and_add_capacity() {
    // 100/s: a token every 10 ms is below Envoy's 50 ms floor: 5 every 50 ms.
    let b = bucket("100/s", 100);
    assert_eq!(
        (b.max_tokens, b.tokens_per_fill, b.fill_interval_ms, b.exact),
        (104, 5, 50, true)
    );
}

#[test]
fn a_rounded_interval_says_the_rate_it_refills_at() {
    // 21/1s: 2 tokens every 2000/21 = 95.238 ms, rounded down to 50 ms: 40
    // tokens a second, not "slightly" faster.
    let b = bucket("21/1s", 5);
    assert_eq!(
        (b.max_tokens, b.tokens_per_fill, b.fill_interval_ms, b.exact),
        (6, 2, 50, false)
    );
    let rules =
        crate::policy::Policy::parse("[[rule]]\nname='g'\nlimit='21/1s'\nburst=5", "p").unwrap();
    let out = Envoy.render(&rules, &ExportOptions::default()).unwrap();
    assert!(
        out.contains("refill: 21/1s = 2 token(s) every 0.050s (the interval, 95.238 ms, rounded down to 50 ms steps: a refill of 40/1s, 90.48% faster than the policy)."),
        "{out}"
    );
    // 7/90s: one token every 12857.143 ms, rounded to 12.850 s.
    let rules = crate::policy::Policy::parse("[[rule]]\nname='g'\nlimit='7/90s'", "p").unwrap();
    let out = Envoy.render(&rules, &ExportOptions::default()).unwrap();
    assert!(
        out.contains("(the interval, 12857.143 ms, rounded down to 50 ms steps: a refill of 7.004/90s, 0.06% faster than the policy)."),
        "{out}"
    );
}

#[test]
fn keys_envoy_cannot_read_are_refused() {
    let rules = crate::policy::Policy::parse(
        "[[rule]]\nname='c'\nkey='field:cookie_sid'\nlimit='1/s'",
        "p",
    )
    .unwrap();
    let err = Envoy.render(&rules, &ExportOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains("cannot key on cookie sid"),
        "{err}"
    );
}

#[test]
fn inexact_intervals_round_down() {
    // 7/1m: one token every 8571.4 ms, rounded down to 8550 ms (faster, safe).
    let b = bucket("7/1m", 7);
    assert_eq!(
        (b.tokens_per_fill, b.fill_interval_ms, b.exact),
        (1, 8550, false)
    );
    assert_eq!(duration(8550), "8.550s");
    assert_eq!(duration(60_000), "60s");
    assert_eq!(duration(50), "0.050s");
}

fn render_exempt(exemption: &str) -> Result<String, String> {
    crate::export::render_exemption(&Envoy, "3/1m", exemption)
}

#[test]
fn exemption_routes_come_first_and_turn_the_filter_off() {
    let out = render_exempt("route='^/h$'\nmethod='get'").unwrap();
    let routes = out.split("  routes:\n").nth(1).unwrap();
    assert!(
        routes.starts_with("  # exempt `e`: method GET, paths matching ^/h$, never limited\n  - name: \"rl-exempt-e\"\n    match:\n      safe_regex: {regex: \"/h\"}\n      headers:\n      - {name: \":method\", string_match: {exact: \"GET\"}}\n"),
        "{routes}"
    );
    let exempt_route = routes.split("\n  - match").next().unwrap();
    assert!(exempt_route.contains("stat_prefix: rlctl_exempt_e"));
    assert!(!exempt_route.contains("filter_enabled:"), "{exempt_route}");
    assert!(!exempt_route.contains("rate_limits"), "{exempt_route}");
    let out = render_exempt("key='field:arg_key'\nclient='k1'").unwrap();
    assert!(
        out.contains("query_parameters:\n      - {name: \"key\", string_match: {exact: \"k1\"}}"),
        "{out}"
    );
}

#[test]
fn address_clients_wrap_the_filter_in_a_matcher_that_skips_it() {
    let out = render_exempt("client='10.0.0.7'\nmethod='post'").unwrap();
    let doc: serde_norway::Value = serde_norway::from_str(&out).unwrap();
    let filter = &doc["http_filters"][0];
    assert_eq!(filter["name"], "envoy.filters.http.local_ratelimit");
    let wrapper = &filter["typed_config"];
    assert_eq!(
        wrapper["@type"],
        "type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher"
    );
    assert_eq!(
        wrapper["extension_config"]["typed_config"]["@type"].as_str(),
        Some(FILTER_TYPE)
    );
    let m = &wrapper["xds_matcher"]["matcher_list"]["matchers"][0];
    let all = &m["predicate"]["and_matcher"]["predicate"];
    let method = &all[0]["single_predicate"];
    assert_eq!(method["input"]["typed_config"]["header_name"], ":method");
    assert_eq!(method["value_match"]["exact"], "POST");
    let address = &all[1]["single_predicate"];
    assert_eq!(
        address["input"]["typed_config"]["@type"],
        "type.googleapis.com/envoy.extensions.matching.common_inputs.network.v3.SourceIPInput"
    );
    let range = &address["custom_match"]["typed_config"]["cidr_ranges"][0];
    assert_eq!(range["address_prefix"], "10.0.0.7");
    assert_eq!(range["prefix_len"], 32);
    assert_eq!(
        m["on_match"]["action"]["typed_config"]["@type"],
        "type.googleapis.com/envoy.extensions.filters.common.matcher.action.v3.SkipFilter"
    );
    // No exemption route: the address is not a route's to match.
    assert!(!out.contains("rl-exempt-"), "{out}");
    let v6 = render_exempt("key='xff'\nclient='2001:db8::1'").unwrap();
    assert!(
        v6.contains("{address_prefix: \"2001:db8::1\", prefix_len: 128}"),
        "{v6}"
    );
    // Without address exemptions the filter is not wrapped.
    let plain = render_exempt("route='^/h$'").unwrap();
    assert!(!plain.contains("ExtensionWithMatcher"), "{plain}");
}

#[test]
fn address_clients_envoy_cannot_match_exactly_are_refused_by_name() {
    let err = render_exempt("client='10.0.0.7'\nroute='^/h'").unwrap_err();
    assert!(
        err.contains(
            "envoy cannot express rule `e`: Envoy cannot join a client address with a route exactly"
        ),
        "{err}"
    );
    let err = render_exempt("client='not-an-ip'").unwrap_err();
    assert!(err.contains("is not an IP address"), "{err}");
    let err = render_exempt("key='ip+field:arg_k'\nclient='10.0.0.7+v'").unwrap_err();
    assert!(
        err.contains("cannot join the client's address with"),
        "{err}"
    );
    assert!(
        render_exempt("key='user'\nclient='svc'")
            .unwrap_err()
            .contains("not the user name")
    );
}

#[test]
fn anchored_routes_lose_their_anchors_and_others_are_wrapped() {
    // Found by review: the wrapper of a deep route that `analyze` writes
    // passed RE2's program size of 100, which Envoy refuses by default.
    assert_eq!(super::path_regex("^/api/x/[^/]+$"), "/api/x/[^/]+");
    assert_eq!(super::path_regex("/api"), ".*(?:/api).*");
    assert_eq!(super::path_regex("^/a$|^/b$"), ".*(?:^/a$|^/b$).*");
    assert_eq!(super::path_regex(r"^/a\$"), r".*(?:^/a\$).*");
    assert_eq!(super::path_regex(r"^/a\\$"), r"/a\\");
    // The same paths match, the whole path for Envoy, anywhere for the policy.
    for route in ["^/api/x/[^/]+$", "^/a$"] {
        let whole = regex::Regex::new(&format!("^(?:{})$", super::path_regex(route))).unwrap();
        let policy = regex::Regex::new(route).unwrap();
        for path in ["/api/x/1", "/api/x/1/2", "/a", "/ab", "/x/a"] {
            assert_eq!(
                whole.is_match(path),
                policy.is_match(path),
                "{route} {path}"
            );
        }
    }
}
