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
