//! Kong's replay of a multi-rule policy on a third-party log, checked against
//! single limits replayed on the requests each plugin takes: Kong runs one
//! plugin per request, the route's (with the smallest limits of the rules
//! merged into it) or else the global one.

use std::collections::BTreeMap;

use crate::support::{json_of_success, realdata, rlctl};

/// global (every request), `GET ^/blog/`, `^/blog/` (any method) and
/// `^/images/`, each a fixed window keyed by address.
const POLICY: &str = "\
[[rule]]\nname='global'\nlimit='20/1m'\nalgorithm='fixed-window'\n\
[[rule]]\nname='images'\nroute='^/images/'\nlimit='5/1m'\nalgorithm='fixed-window'\n\
[[rule]]\nname='blog-get'\nmethod='GET'\nroute='^/blog/'\nlimit='8/1m'\nalgorithm='fixed-window'\n\
[[rule]]\nname='blog'\nroute='^/blog/'\nlimit='30/1m'\nalgorithm='fixed-window'\n";

/// Which plugin Kong runs on a request line of the log, and the per-minute
/// limit it takes (the smallest of the rules merged into it): `GET ^/blog/`
/// merges itself, `blog` and `global` (8); the other `^/blog/` requests meet
/// `blog` with `global` (20); `^/images/`, `images` with `global` (5); the
/// rest the global plugin (20).
fn plugin_of(line: &[u8]) -> (&'static str, u32) {
    let request = line.split(|&b| b == b'"').nth(1).unwrap_or_default();
    let mut words = request.split(|&b| b == b' ');
    let (method, path) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    match (method, path) {
        (b"GET", p) if p.starts_with(b"/blog/") => ("blog-get + global + blog", 8),
        (_, p) if p.starts_with(b"/blog/") => ("blog + global", 20),
        (_, p) if p.starts_with(b"/images/") => ("images + global", 5),
        _ => ("global", 20),
    }
}

#[test]
fn kong_runs_one_merged_plugin_per_request_on_a_real_log() {
    let Some(log) = realdata("elastic_examples_apache_logs") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let replayed = rows(
        rlctl()
            .args([
                "simulate",
                "-q",
                "--format",
                "json",
                "--gateway",
                "kong",
                "--policy",
            ])
            .arg(&policy)
            .arg(&log),
    );
    // Each plugin's requests, written apart, replayed under its one limit.
    let mut parts: BTreeMap<(&str, u32), Vec<u8>> = BTreeMap::new();
    let text = std::fs::read(&log).unwrap();
    for line in text.split_inclusive(|&b| b == b'\n') {
        parts
            .entry(plugin_of(line))
            .or_default()
            .extend_from_slice(line);
    }
    assert_eq!(parts.len(), 4, "the log changed: {:?}", parts.keys());
    let mut expected = BTreeMap::new();
    for ((plugin, limit), lines) in &parts {
        let part = dir.path().join("part.log");
        std::fs::write(&part, lines).unwrap();
        let single = rows(
            rlctl()
                .args(["simulate", "-q", "--format", "json", "--gateway", "kong"])
                .args(["--algo", "fixed-window", "--limit", &format!("{limit}/1m")])
                .arg(&part),
        );
        let (requests, rejected) = single["limit"];
        assert!(requests > 0, "{plugin}");
        expected.insert(plugin.to_string(), (requests, rejected));
    }
    let rejected: Vec<u64> = expected.values().map(|&(_, r)| r).collect();
    assert!(
        rejected.iter().filter(|&&r| r > 0).count() >= 3,
        "limits that reject nothing check little: {expected:?}"
    );
    assert_eq!(replayed, expected);
}

/// The requests and rejections of each rule row of `simulate`'s JSON.
fn rows(command: &mut assert_cmd::Command) -> BTreeMap<String, (u64, u64)> {
    let json = json_of_success(command);
    (json["results"].as_array().unwrap().iter())
        .map(|r| {
            let count = |field: &str| r[field].as_u64().unwrap();
            (
                r["rule"].as_str().unwrap().to_string(),
                (count("requests"), count("rejected")),
            )
        })
        .collect()
}
