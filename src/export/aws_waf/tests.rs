//! Tests of the AWS WAF conversions: evaluation windows, limits and aggregation keys.

use super::*;
use crate::policy::Policy;
use serde_json::Value;

#[test]
fn windows_map_to_the_closest_allowed() {
    assert_eq!(window(1), 60);
    assert_eq!(window(60), 60);
    assert_eq!(window(90), 60);
    assert_eq!(window(100), 120);
    assert_eq!(window(240), 300);
    assert_eq!(window(3600), 600);
}

#[test]
fn limits_scale_to_the_window_with_the_burst_and_a_floor() {
    let shape = |t: &str| Shape::of(&Policy::parse(t, "p").unwrap()[0]).unwrap();
    // 40/1m burst 7 over 60 s: 7 + 40 - 1.
    assert_eq!(
        limit(&shape("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7"), 60),
        46
    );
    // 5000/1h over 600 s: capacity 5000 (default) + ⌈5000·600/3600⌉ - 1.
    assert_eq!(
        limit(&shape("[[rule]]\nname='g'\nlimit='5000/1h'"), 600),
        5000 + 834 - 1
    );
    // 10/s sliding-log over 60 s: at most 10 in each of 60 seconds.
    assert_eq!(
        limit(
            &shape("[[rule]]\nname='g'\nlimit='10/s'\nalgorithm='sliding-log'"),
            60
        ),
        600
    );
    // 1/1h token bucket: 1 + ⌈60/3600⌉ - 1 = 1, raised to AWS's minimum.
    assert_eq!(limit(&shape("[[rule]]\nname='g'\nlimit='1/1h'"), 60), 10);
}

#[test]
fn keys_become_aggregation_settings() {
    let rules = Policy::parse(
        "[[rule]]\nname='k'\nkey='xff+field:http_x_api_key'\nlimit='40/1m'",
        "p",
    )
    .unwrap();
    let out: Value =
        serde_json::from_str(&AwsWaf.render(&rules, &ExportOptions::default()).unwrap()).unwrap();
    let st = &out["Rules"][0]["Statement"]["RateBasedStatement"];
    assert_eq!(st["AggregateKeyType"], "CUSTOM_KEYS");
    assert_eq!(st["CustomKeys"][1]["Header"]["Name"], "x-api-key");
    assert_eq!(st["ForwardedIPConfig"]["HeaderName"], "X-Forwarded-For");
}

/// The AWS WAF export of the policy `text`, as JSON.
fn rendered(text: &str) -> Value {
    let policy = crate::policy::Policy::parse_policy(text, "p").unwrap();
    let out = AwsWaf.render_policy(&policy, &ExportOptions::default());
    serde_json::from_str(&out.unwrap()).unwrap()
}

#[test]
fn exemptions_narrow_every_rules_scope_down() {
    let out = rendered(
        "[[rule]]\nname='g'\nlimit='40/1m'\n[[rule]]\nname='s'\nmethod='GET'\nroute='^/s$'\nlimit='20/1m'\n\
         [[rule]]\nname='health'\nroute='^/healthz$'\nexempt=true\n\
         [[rule]]\nname='monitor'\nclient='10.0.0.7'\nexempt=true\n\
         [[rule]]\nname='partner'\nkey='field:http_x_api_key'\nclient='k1'\nmethod='POST'\nexempt=true\n",
    );
    let scope =
        |i: usize| &out["Rules"][i]["Statement"]["RateBasedStatement"]["ScopeDownStatement"];
    let any = &scope(0)["NotStatement"]["Statement"]["OrStatement"]["Statements"];
    assert_eq!(any[0]["RegexMatchStatement"]["RegexString"], "^/healthz$");
    let arn = any[1]["IPSetReferenceStatement"]["ARN"].as_str().unwrap();
    assert_eq!(
        arn,
        "REPLACE-WITH-THE-ARN-OF-IP-SET-rlctl-exempt-1-0-monitor"
    );
    assert_eq!(out["IPSets"][0]["Addresses"][0], "10.0.0.7/32");
    assert_eq!(out["IPSets"][0]["Name"], "rlctl-exempt-1-0-monitor");
    let partner = &any[2]["AndStatement"]["Statements"];
    assert_eq!(partner[0]["ByteMatchStatement"]["SearchString"], "post");
    assert_eq!(
        partner[1]["ByteMatchStatement"]["FieldToMatch"]["SingleHeader"]["Name"],
        "x-api-key"
    );
    assert_eq!(partner[1]["ByteMatchStatement"]["SearchString"], "k1");
    // The routed rule keeps its own scope and adds the same NotStatement.
    let own = &scope(1)["AndStatement"]["Statements"];
    assert_eq!(own[1]["RegexMatchStatement"]["RegexString"], "^/s$");
    assert_eq!(own[2], scope(0).clone());
}

#[test]
fn exemptions_waf_cannot_match_are_refused_by_name() {
    let err =
        |exemption: &str| crate::export::render_exemption(&AwsWaf, "40/1m", exemption).unwrap_err();
    assert!(
        err("key='user'\nclient='svc'")
            .contains("aws-waf cannot express rule `e`: AWS WAF sees the Authorization header")
    );
    assert!(err("client='office'").contains("is not an IP address"));
    assert!(err("key='ip+field:http_x_k'\nclient='1.2.3.4'").contains("one value per part"));
}

#[test]
fn routes_with_capturing_groups_are_written_without_them() {
    // AWS WAF refuses capturing groups; a hand-written route often has one.
    let out = rendered(
        "[[rule]]\nname='r'\nroute='^/api/(users|orders)/[0-9]+$'\nlimit='20/1m'\n\
         [[rule]]\nname='health'\nroute='^/(healthz|readyz)$'\nexempt=true\n",
    );
    let own = &out["Rules"][0]["Statement"]["RateBasedStatement"]["ScopeDownStatement"]["AndStatement"]
        ["Statements"];
    assert_eq!(
        own[0]["RegexMatchStatement"]["RegexString"],
        "^/api/(?:users|orders)/[0-9]+$"
    );
    assert_eq!(
        own[1]["NotStatement"]["Statement"]["RegexMatchStatement"]["RegexString"],
        "^/(?:healthz|readyz)$"
    );
}
