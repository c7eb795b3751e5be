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
    let text =
        format!("[[rule]]\nname='g'\nlimit='3/1m'\n[[rule]]\nname='e'\nexempt=true\n{exemption}");
    let policy = crate::policy::Policy::parse_policy(&text, "p").unwrap();
    Envoy
        .render_policy(&policy, &ExportOptions::default())
        .map_err(|e| e.to_string())
}

#[test]
fn exemption_routes_come_first_and_turn_the_filter_off() {
    let out = render_exempt("route='^/h$'\nmethod='get'").unwrap();
    let routes = out.split("  routes:\n").nth(1).unwrap();
    assert!(
        routes.starts_with("  # exempt `e`: method get, paths matching ^/h$, never limited\n  - name: \"rl-exempt-e\"\n    match:\n      safe_regex: {regex: \".*(?:^/h$).*\"}\n      headers:\n      - {name: \":method\", string_match: {exact: \"GET\"}}\n"),
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
fn clients_envoy_routes_cannot_see_are_refused_by_name() {
    let err = render_exempt("client='10.0.0.7'").unwrap_err();
    assert!(
        err.contains(
            "envoy cannot express rule `e`: an Envoy route cannot match the client's address"
        ),
        "{err}"
    );
    assert!(
        render_exempt("key='user'\nclient='svc'")
            .unwrap_err()
            .contains("not the user name")
    );
}
