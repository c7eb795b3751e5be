//! `rlctl watch` decides as `rlctl simulate` on the same lines: with
//! `--gateway` for several gateway models, and with a policy's exemptions.
//! Each case replays a generated log with `--from-start` and compares
//! `/metrics` with `simulate --format json`, rule by rule.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::support::free_port;
use crate::support::watch::{start, wait_for};
use crate::support::{json_of_success, rlctl};

const POLICY: &str = r#"
[[rule]]
name = "global"
limit = "30/1m"
burst = 10
algorithm = "token-bucket"

[[rule]]
name = "api"
route = "^/api/"
limit = "5/10s"
algorithm = "fixed-window"

[[rule]]
name = "pages"
method = "GET"
limit = "100/1h"
algorithm = "sliding-counter"
"#;

const EXEMPTIONS: &str = r#"
[[rule]]
name = "assets"
route = "^/static/"
exempt = true

[[rule]]
name = "busiest"
client = "86.234.175.112"
exempt = true
"#;

/// A generated log of `lines` lines (30 clients, some of them runaway).
fn generated(dir: &Path, lines: usize) -> std::path::PathBuf {
    generated_as(dir, lines, "combined")
}

/// [`generated`] in `format` (JSON lines log X-Forwarded-For, combined not).
fn generated_as(dir: &Path, lines: usize, format: &str) -> std::path::PathBuf {
    let log = dir.join("access.log");
    rlctl()
        .args(["generate", "--lines", &lines.to_string(), "--clients", "30"])
        .args(["--seed", "7", "--format", format, "-o"])
        .arg(&log)
        .assert()
        .success();
    log
}

/// Watches `log` from its start until every line is decided; returns the
/// final scrape.
fn watched(log: &Path, policy: &Path, extra: &[&str], lines: f64) -> BTreeMap<String, f64> {
    let port = free_port();
    let mut flags = vec!["--from-start", "--max-delay", "1s"];
    flags.extend(extra);
    let _watch = start(log, policy, &flags, port);
    let file_key = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
    wait_for(port, "every line decided", |m| {
        // "global" applies to every request an exemption does not take; with
        // Kong, which runs one plugin per request, every plugin merges it
        // ("pages + global"), and each request takes one of them.
        let decided = (m.iter())
            .filter(|(name, _)| {
                name.starts_with("rlctl_requests_total{rule=") && name.contains("global")
            })
            .map(|(_, n)| n)
            .sum::<f64>()
            + m.get("rlctl_requests_exempt_total").copied().unwrap_or(0.0);
        m.get(&file_key) == Some(&lines)
            && m.get("rlctl_reorder_pending") == Some(&0.0)
            && decided == lines
    })
}

/// `rlctl simulate --gateway GATEWAY --format json` of `policy` over `log`.
fn simulated_as(log: &Path, policy: &Path, gateway: &str) -> serde_json::Value {
    json_of_success(
        rlctl()
            .arg("simulate")
            .arg(log)
            .arg("--policy")
            .arg(policy)
            .args(["--gateway", gateway, "--format", "json"]),
    )
}

/// Asserts that each rule's requests and would-rejects equal simulate's;
/// returns the rejections of all rules.
fn assert_same(m: &BTreeMap<String, f64>, simulated: &serde_json::Value, what: &str) -> f64 {
    let results = simulated["results"].as_array().unwrap();
    // Three rules; Traefik has `global` once per router that chains it.
    let expected = if what == "traefik" { 5 } else { 3 };
    assert_eq!(results.len(), expected, "{what}");
    let mut rejected = 0.0;
    for r in results {
        let rule = r["rule"].as_str().unwrap();
        // (A rule that took no request may have no series yet.)
        let metric = |name: &str| {
            let series = format!("{name}{{rule=\"{rule}\"}}");
            m.get(&series).copied().unwrap_or(0.0)
        };
        let requests = metric("rlctl_requests_total");
        let would_reject = metric("rlctl_would_reject_total");
        assert_eq!(
            requests,
            r["requests"].as_f64().unwrap(),
            "{what}: {rule} requests"
        );
        assert_eq!(
            would_reject,
            r["rejected"].as_f64().unwrap(),
            "{what}: {rule} rejected"
        );
        rejected += would_reject;
    }
    rejected
}

#[test]
fn watch_with_a_gateway_counts_as_simulate_with_that_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let log = generated(dir.path(), 3000);
    let policy = dir.path().join("policy.toml");
    fs::write(&policy, POLICY).unwrap();
    // Counted rejections (haproxy-req-rate, envoy-ratelimit, kong-redis,
    // aws-waf, cloudflare), doubles (envoy, traefik, redis-swc), delays
    // (nginx, traefik), and the two documented models.
    let gateways = [
        "nginx",
        "haproxy-req-rate",
        "envoy",
        "envoy-timer",
        "envoy-ratelimit",
        "traefik",
        "kong-redis",
        "aws-waf",
        "cloudflare",
        "redis-swc",
    ];
    for gateway in gateways {
        let m = watched(&log, &policy, &["--gateway", gateway], 3000.0);
        let simulated = simulated_as(&log, &policy, gateway);
        // The documented models are labelled "aws-waf (model)".
        let scenario = simulated["results"][0]["scenario"].as_str().unwrap();
        assert!(scenario.starts_with(gateway), "{scenario}");
        let rejected = assert_same(&m, &simulated, gateway);
        assert!(
            rejected > 0.0,
            "{gateway}: the policy should reject something"
        );
    }
}

#[test]
fn watch_honours_exemptions_as_simulate_does() {
    let dir = tempfile::tempdir().unwrap();
    let log = generated(dir.path(), 3000);
    let policy = dir.path().join("policy.toml");
    fs::write(&policy, format!("{POLICY}{EXEMPTIONS}")).unwrap();
    for extra in [&[][..], &["--gateway", "haproxy-req-rate"][..]] {
        let m = watched(&log, &policy, extra, 3000.0);
        let mut simulate = rlctl();
        simulate
            .arg("simulate")
            .arg(&log)
            .arg("--policy")
            .arg(&policy)
            .args(extra)
            .args(["--format", "json"]);
        let simulated = json_of_success(&mut simulate);
        let rejected = assert_same(&m, &simulated, &format!("{extra:?}"));
        assert!(rejected > 0.0);
        // Both exemptions took requests, which no rule counted.
        let exempt = m["rlctl_requests_exempt_total"];
        assert!(exempt > 0.0);
        assert_eq!(m["rlctl_requests_total{rule=\"global\"}"] + exempt, 3000.0);
    }
}

/// A global rule, and two keyed otherwise: on X-Forwarded-For (the
/// generated JSON log's proxied clients log an address there, the others
/// `-`) and on the address and user.
const KEYED_POLICY: &str = r#"
[[rule]]
name = "global"
limit = "30/1m"
burst = 10

[[rule]]
name = "forwarded"
key = "xff"
limit = "10/1m"
algorithm = "fixed-window"

[[rule]]
name = "pair"
key = "ip+user"
limit = "10/1m"
algorithm = "sliding-log"
"#;

#[test]
fn watch_reads_keys_as_the_gateway_does_as_simulate_does() {
    let dir = tempfile::tempdir().unwrap();
    let log = generated_as(dir.path(), 3000, "json");
    let policy = dir.path().join("policy.toml");
    fs::write(&policy, KEYED_POLICY).unwrap();
    for gateway in ["haproxy", "aws-waf"] {
        let m = watched(&log, &policy, &["--gateway", gateway], 3000.0);
        assert_same(&m, &simulated_as(&log, &policy, gateway), gateway);
    }
    // AWS WAF counts only the requests with an address in X-Forwarded-For
    // and, for ip+user, only those with a user.
    let m = watched(&log, &policy, &["--gateway", "aws-waf"], 3000.0);
    for rule in ["forwarded", "pair"] {
        let counted = m[&format!("rlctl_requests_total{{rule=\"{rule}\"}}")];
        assert!(counted > 0.0 && counted < 3000.0, "{rule}: {counted}");
    }
}
