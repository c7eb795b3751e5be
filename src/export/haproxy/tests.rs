//! The HAProxy export's thresholds, quoting, tables and limits.

use super::*;
use crate::policy::Policy;

fn rules(text: &str) -> Vec<CheckedRule> {
    Policy::parse(text, "p").unwrap()
}

#[test]
fn threshold_is_capacity_plus_limit_minus_one() {
    let r = rules("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7");
    assert_eq!(threshold(&Shape::of(&r[0]).unwrap()), 46);
    let r = rules("[[rule]]\nname='g'\nlimit='100/1m'\nalgorithm='fixed-window'");
    assert_eq!(threshold(&Shape::of(&r[0]).unwrap()), 299);
}

#[test]
fn windows_and_counters_past_haproxys_limits_are_refused() {
    // Found by review: `haproxy -c` refused both ("timer overflow";
    // "array size is out of allowed range (1-100)").
    let export = |text: &str| Haproxy.render(&rules(text), &ExportOptions::default());
    let month = export("[[rule]]\nname='q'\nlimit='100/13d'\n").unwrap_err();
    assert!(month.to_string().contains("at most 2147483s"), "{month}");
    assert!(export("[[rule]]\nname='q'\nlimit='100/12d'\n").is_ok());
    let many = |n: usize| -> String {
        (0..n)
            .map(|i| format!("[[rule]]\nname='r{i}'\nroute='^/r{i}$'\nlimit='10/1m'\n"))
            .collect()
    };
    assert!(export(&many(100)).is_ok());
    let refused = export(&many(101)).unwrap_err();
    assert!(
        refused
            .to_string()
            .contains("101 rules share key ip and window 60s"),
        "{refused}"
    );
}

#[test]
fn quoting_is_strong() {
    assert_eq!(quote("^/a'b$"), r"'^/a'\''b$'");
    assert_eq!(quote(r"^/\d+ #x$"), r"'^/\d+ #x$'");
}

#[test]
fn rules_with_one_key_and_window_share_a_table_and_a_counter() {
    let r = rules(
        "[[rule]]\nname='g'\nlimit='40/1m'\n[[rule]]\nname='s'\nmethod='GET'\nroute='^/s$'\nlimit='20/1m'\nburst=5",
    );
    let out = Haproxy.render(&r, &ExportOptions::default()).unwrap();
    assert!(out.contains("store gpc_rate(2,60s)"), "{out}");
    assert!(out.contains("http-request track-sc0 src table rl_g\n"));
    assert!(out.contains(
        "deny deny_status 429 if { sc_gpc_rate(1,0) gt 24 } { method GET } { path -m reg '^/s\\z' }"
    ));
    assert!(out.contains("sc-inc-gpc(0,0)\n"));
    assert!(!out.contains("track-sc1"));
    let four = rules(
        "[[rule]]\nname='a'\nlimit='1/s'\n[[rule]]\nname='b'\nlimit='1/m'\n[[rule]]\nname='c'\nlimit='1/h'\n[[rule]]\nname='d'\nlimit='1/10s'",
    );
    assert!(Haproxy.render(&four, &ExportOptions::default()).is_err());
}
