//! `rlctl simulate --gateway` and `rlctl export --check` end to end: scenario
//! names (models labelled in every output), results independent of the number
//! of threads, and the reasons `--check` gives.

use crate::support::{json_of_success, rlctl, success};

mod kong_real_log;
mod reviewed;
mod versions;

const LOG_FORMAT: &str = r#"$msec $remote_addr "$request" $status"#;

/// One client: a burst of 30 requests 100 ms apart, then one every 5 s until
/// 200 s (12 a minute, above the policy's 10); a second client with one
/// request a minute.
fn log_text() -> String {
    let mut lines = Vec::new();
    let base = 1_767_571_200_000i64; // 2026-01-05T00:00:00Z
    let line = |t: i64, ip: &str| {
        format!(
            "{}.{:03} {ip} \"GET /api/items HTTP/1.1\" 200",
            t / 1000,
            t % 1000
        )
    };
    for i in 0..30 {
        lines.push((base + i * 100, line(base + i * 100, "10.0.0.1")));
    }
    for s in (5..=200).step_by(5) {
        lines.push((base + s * 1000, line(base + s * 1000, "10.0.0.1")));
    }
    for m in 0..3 {
        lines.push((
            base + m * 60_000 + 500,
            line(base + m * 60_000 + 500, "10.0.0.2"),
        ));
    }
    lines.sort();
    lines.into_iter().map(|(_, l)| l + "\n").collect()
}

const POLICY: &str = "[[rule]]\nname = \"api\"\nlimit = \"10/1m\"\nalgorithm = \"sliding-log\"\n";

fn files() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&log, log_text()).unwrap();
    std::fs::write(&policy, POLICY).unwrap();
    (dir, log, policy)
}

#[test]
fn gateway_all_runs_the_policy_then_every_gateway_labelling_the_models() {
    let (_dir, log, policy) = files();
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json", "--gateway", "all"])
            .args(["--log-format", LOG_FORMAT, "--policy"])
            .arg(&policy)
            .arg(&log),
    );
    let names: Vec<&str> = json["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(names[0], "policy", "{names:?}");
    for expected in [
        "nginx",
        "haproxy",
        "haproxy-req-rate",
        "envoy",
        "envoy-timer",
        "envoy-ratelimit",
        "traefik",
        "kong",
        "kong-redis",
        "aws-waf (model)",
        "cloudflare (model)",
        "redis-swc",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // The table names the models too.
    let out = rlctl()
        .args([
            "simulate",
            "-q",
            "--format",
            "table",
            "--gateway",
            "cloudflare",
        ])
        .args(["--log-format", LOG_FORMAT, "--policy"])
        .arg(&policy)
        .arg(&log)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("cloudflare (model)"));
}

#[test]
fn gateway_decisions_do_not_depend_on_the_number_of_threads() {
    let (dir, log, policy) = files();
    let decisions = |threads: &str| {
        let csv = dir.path().join(format!("decisions-{threads}.csv"));
        success(
            rlctl()
                .env("RAYON_NUM_THREADS", threads)
                .args(["simulate", "-q", "--format", "json", "--gateway", "all"])
                .args(["--log-format", LOG_FORMAT, "--policy"])
                .arg(&policy)
                .arg("--decisions")
                .arg(&csv)
                .arg(&log),
        );
        std::fs::read_to_string(&csv).unwrap()
    };
    let one = decisions("1");
    assert_eq!(one, decisions("3"));
    assert!(one.contains(",aws-waf (model),"));
    assert!(one.contains(",false\n") && one.contains(",true\n"));
}

#[test]
fn unknown_gateways_and_all_algorithms_are_usage_errors() {
    let (_dir, log, policy) = files();
    for (flags, message) in [
        (vec!["--gateway", "apache"], "unknown gateway"),
        (vec!["--gateway", "kong", "--algo", "all"], "not all"),
    ] {
        let out = rlctl()
            .args(["simulate", "-q", "--policy"])
            .arg(&policy)
            .args(&flags)
            .arg(&log)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(message),
            "{flags:?}"
        );
    }
}

#[test]
fn export_check_gives_a_reason_for_every_difference() {
    let (_dir, log, policy) = files();
    let out = success(
        rlctl()
            .args(["export", "--target", "aws-waf", "--policy"])
            .arg(&policy)
            .arg("--check")
            .arg(&log)
            .args(["--log-format", LOG_FORMAT]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The burst passes AWS WAF until its check at 10 s (window alignment);
    // from 70 s on the policy admits again, but AWS WAF counted the blocked
    // requests and stays blocked (counted rejections).
    assert!(text.contains("as aws-waf (model) enforces"), "{text}");
    assert!(text.contains("not an exact replay"), "{text}");
    let count = |reason: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(&format!("{reason}: ")))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0)
    };
    assert!(count("window alignment") > 0, "{text}");
    assert!(count("counted rejections") > 0, "{text}");
    let rows = text
        .lines()
        .filter(|l| l.trim_start().starts_with("2026-01-05T"))
        .count();
    assert_eq!(
        rows,
        count("window alignment") + count("counted rejections")
    );
    let words = "10.0.0.1 GET /api/items allowed rejected counted rejections";
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" ") == words),
        "{text}"
    );

    // The exported HAProxy config differs from a sliding log by its windows only.
    let out = rlctl()
        .args(["export", "--target", "haproxy", "--policy"])
        .arg(&policy)
        .arg("--check")
        .arg(&log)
        .args(["--log-format", LOG_FORMAT])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("counted rejections"), "{text}");
    assert!(!text.contains("(a model"), "{text}");
}

#[test]
fn export_check_replays_exemptions_admitted_and_uncounted() {
    let (dir, log, _) = files();
    let check = |target: &str, policy_text: &str| -> String {
        let policy = dir.path().join("exempt.toml");
        std::fs::write(&policy, policy_text).unwrap();
        let out = success(
            rlctl()
                .args(["export", "--target", target, "--policy"])
                .arg(&policy)
                .arg("--check")
                .arg(&log)
                .args(["--log-format", LOG_FORMAT]),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let exempt =
        format!("{POLICY}[[rule]]\nname = \"busy\"\nclient = \"10.0.0.1\"\nexempt = true\n");
    let other = format!(
        "{POLICY}[[rule]]\nname = \"hook\"\nmethod = \"POST\"\nroute = \"^/api/items$\"\nexempt = true\n"
    );
    let route =
        format!("{POLICY}[[rule]]\nname = \"items\"\nroute = \"^/api/items$\"\nexempt = true\n");
    for (target, label) in [
        ("nginx", "nginx"),
        ("haproxy", "haproxy"),
        ("aws-waf", "aws-waf (model)"),
    ] {
        // Without the exemption the policy rejects some of 10.0.0.1's requests.
        let plain = check(target, POLICY);
        assert!(!plain.contains("policy rejects 0,"), "{plain}");
        let text = check(target, &exempt);
        assert!(
            text.contains(&format!(
                "policy rejects 0, {label} rejects 0; they differ on 0 requests"
            )),
            "{text}"
        );
        // An exemption for another method and route changes nothing.
        let text = check(target, &other);
        let first = |t: &str| t.lines().nth(1).unwrap_or_default().to_string();
        assert_eq!(first(&text), first(&plain), "{text}");
        // A route exemption admits every request on it.
        let text = check(target, &route);
        assert!(
            text.contains(&format!("policy rejects 0, {label} rejects 0")),
            "{text}"
        );
    }
}

#[test]
fn report_shows_the_policy_as_gateways_enforce_it_when_asked() {
    let (_dir, log, policy) = files();
    let report = |extra: &[&str], format: &str| {
        let out = success(
            rlctl()
                .args(["report", "-q", "--format", format, "--policy"])
                .arg(&policy)
                .args(["--log-format", LOG_FORMAT])
                .args(extra)
                .arg(&log),
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let markdown = report(&["--gateway", "all"], "markdown");
    assert!(
        markdown.contains("The policy as your gateway enforces it"),
        "{markdown}"
    );
    assert!(markdown.contains("| aws-waf (model) |"), "{markdown}");
    assert!(markdown.contains("| haproxy |"), "{markdown}");
    let json: serde_json::Value =
        serde_json::from_str(&report(&["--gateway", "kong-redis"], "json")).unwrap();
    assert_eq!(json["gateways"][0]["scenario"], "kong-redis");
    // Without --gateway the report is as before: no section, no JSON key.
    let plain: serde_json::Value = serde_json::from_str(&report(&[], "json")).unwrap();
    assert!(plain.get("gateways").is_none());
    assert!(!report(&[], "markdown").contains("as your gateway"));
}

/// The policy whose `rlctl export --target nginx` is the real nginx's
/// configuration in `nginx.rs` (5r/s burst 3 on `/api/`, 30r/m on `/slow/`,
/// `nodelay`): leaky-bucket burst B exports as `burst=B`.
const NGINX_POLICY: &str = r#"
[[rule]]
name = "api"
route = "^/api/"
limit = "5r/s"
burst = 3
algorithm = "leaky-bucket"

[[rule]]
name = "slow"
route = "^/slow/"
limit = "30r/m"
algorithm = "leaky-bucket"
"#;

#[test]
fn nginx_gateway_reproduces_a_real_nginx() {
    let Some(run) = crate::nginx::run_limit_req_scenario() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&log, &run.log_text).unwrap();
    std::fs::write(&policy, NGINX_POLICY).unwrap();
    // The exported config is the one nginx ran.
    let exported = rlctl()
        .args(["export", "--target", "nginx", "--policy"])
        .arg(&policy)
        .output()
        .unwrap();
    let exported = String::from_utf8(exported.stdout).unwrap();
    assert!(exported.contains("rate=5r/s;") && exported.contains("burst=3 nodelay;"));
    assert!(exported.contains("rate=30r/m;"), "{exported}");
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json", "--compare-logged"])
            .args(["--gateway", "nginx", "--log-format"])
            .arg(NGINX_FORMAT)
            .arg("--policy")
            .arg(&policy)
            .arg(&log),
    );
    let c = &json["comparison"][0];
    println!(
        "nginx gateway agreement: {} of {}",
        c["agree"], c["compared"]
    );
    assert_eq!(c["scenario"], "nginx");
    assert_eq!(
        c["compared"].as_u64(),
        Some(run.log_text.lines().count() as u64)
    );
    assert_eq!(c["agree"], c["compared"], "{c:#}");
}

/// nginx running the nginx export of `policy`, logging `$limit_req_status`.
fn nginx_with(policy: &str) -> Option<crate::support::nginx::Nginx> {
    nginx_escaping(policy, "default")
}

/// [`nginx_with`], its log's values escaped as `escape=` says.
fn nginx_escaping(policy: &str, escape: &str) -> Option<crate::support::nginx::Nginx> {
    let exported = crate::export::export(policy, "nginx", &[]);
    let config = format!(
        "{exported}\nlog_format rl escape={escape} '{NGINX_FORMAT}';\n\
         server {{\n    listen 127.0.0.1:{{{{port}}}};\n    access_log {{{{access_log}}}} rl;\n    \
         location / {{ empty_gif; }}\n}}\n"
    );
    crate::support::nginx::Nginx::start(&config)
}

/// `(agreeing, compared)` of `simulate --compare-logged` with `policy` on
/// `log_text` (read with `format`) and `extra` arguments.
fn compared_logged(policy: &str, log_text: &str, format: &str, extra: &[&str]) -> (u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let (log, policy_file) = (dir.path().join("access.log"), dir.path().join("p.toml"));
    std::fs::write(&log, log_text).unwrap();
    std::fs::write(&policy_file, policy).unwrap();
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json", "--compare-logged"])
            .args(extra)
            .args(["--log-format", format, "--policy"])
            .arg(&policy_file)
            .arg(&log),
    );
    let c = &json["comparison"][0];
    (
        c["agree"].as_u64().unwrap(),
        c["compared"].as_u64().unwrap(),
    )
}

/// The nginx log format of [`nginx_with`].
const NGINX_FORMAT: &str = r#"$msec $remote_addr "$request" $status $limit_req_status"#;

/// [`compared_logged`] of an nginx log of [`nginx_with`] with `policy` and
/// `extra` arguments, and the text of `export --target nginx --check` on it.
fn replayed_nginx_log(policy: &str, log_text: &str, extra: &[&str]) -> ((u64, u64), String) {
    let dir = tempfile::tempdir().unwrap();
    let (log, policy_file) = (dir.path().join("access.log"), dir.path().join("p.toml"));
    std::fs::write(&log, log_text).unwrap();
    std::fs::write(&policy_file, policy).unwrap();
    let check = rlctl()
        .args([
            "export",
            "--target",
            "nginx",
            "--log-format",
            NGINX_FORMAT,
            "--check",
        ])
        .arg(&log)
        .arg("--policy")
        .arg(&policy_file)
        .output()
        .unwrap();
    let counts = compared_logged(policy, log_text, NGINX_FORMAT, extra);
    (counts, String::from_utf8_lossy(&check.stdout).into_owned())
}

#[test]
fn nginx_gateway_reads_paths_as_nginx_uri() {
    // One request a minute on /api/search, spelt five ways. nginx matches
    // the exported map against $uri (decoded, slashes merged, dot segments
    // resolved), so the second to fifth are the route's too and rejected.
    // The policy reads the logged paths, which its route does not match but
    // for the absolute-form target's, read as its path by both.
    let policy = "[[rule]]\nname='search'\nroute='^/api/search$'\nlimit='1/1m'\nburst=1\n";
    let Some(nginx) = nginx_with(policy) else {
        return;
    };
    let requests = [
        ("GET", "/api/search"),
        ("GET", "/api//search"),
        ("GET", "/api/%73earch"),
        ("GET", "/api/x/../search"),
        ("GET", "http://x/api/search"),
    ];
    let statuses: Vec<u16> = (requests.iter())
        .map(|(m, p)| status_of(nginx.addr(), m, p))
        .collect();
    assert_eq!(statuses, [200, 429, 429, 429, 429], "{}", nginx.error_log());
    let log_text = nginx.read_access_log(requests.len());
    let (gateway, check) = replayed_nginx_log(policy, &log_text, &["--gateway", "nginx"]);
    assert_eq!(gateway, (5, 5), "{log_text}");
    assert!(
        check.contains("  method, path or version: 3\n"),
        "{check}\n{log_text}"
    );
    let (policy_reading, _) = replayed_nginx_log(policy, &log_text, &[]);
    assert_eq!(policy_reading, (2, 5), "the policy reads paths as logged");
}

#[test]
fn nginx_gateway_matches_routes_on_bytes_as_nginx_does() {
    // Found by review against nginx 1.22: nginx's PCRE (no UTF mode) lets
    // `$` match before the newline a decoded `%0a` ends $uri with (the
    // export now writes `\z`), and reads `\w` and `(?i)` as ASCII and
    // byte-wise, where the replay matched them as Unicode text.
    let policy = "[[rule]]\nname='search'\nroute='^/api/search$'\nlimit='1/1m'\nburst=1\n\
                  [[rule]]\nname='word'\nroute='^/u/\\w+$'\nlimit='1/1m'\nburst=1\n\
                  [[rule]]\nname='cafe'\nroute='(?i)^/caf\\x{e9}$'\nlimit='1/1m'\nburst=1\n";
    let Some(nginx) = nginx_with(policy) else {
        return;
    };
    let requests = [
        "/api/search%0a",
        "/api/search",
        "/api/search",
        "/u/%C3%A9",
        "/u/%C3%A9",
        "/CAF%C3%89",
        "/CAF%C3%89",
        "/u/ab",
        "/u/ab",
    ];
    let statuses: Vec<u16> = (requests.iter())
        .map(|p| status_of(nginx.addr(), "GET", p))
        .collect();
    assert_eq!(
        statuses,
        [200, 200, 429, 200, 200, 200, 200, 200, 429],
        "{}",
        nginx.error_log()
    );
    let log_text = nginx.read_access_log(requests.len());
    let (gateway, check) = replayed_nginx_log(policy, &log_text, &["--gateway", "nginx"]);
    assert_eq!(gateway, (9, 9), "{log_text}");
    assert!(check.contains("differ on 0 requests"), "{check}");
}

/// A log of `requests` (`METHOD target`) from one client, one a second,
/// and a policy of one rule, 1 a minute with a burst of 1, on the route
/// `^/api/search$`: (the directory, the log, the policy).
fn one_a_second_on_search(
    requests: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let log_text: String = (requests.iter().enumerate())
        .map(|(i, r)| format!("{}.000 10.0.0.1 \"{r} HTTP/1.1\" 200\n", 1_767_571_200 + i))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (log, policy) = (dir.path().join("access.log"), dir.path().join("p.toml"));
    std::fs::write(&log, log_text).unwrap();
    let rule = "[[rule]]\nname='search'\nroute='^/api/search$'\nlimit='1/1m'\nburst=1\n";
    std::fs::write(&policy, rule).unwrap();
    (dir, log, policy)
}

/// The requests and rejections of the first rule of `simulate` (with `args`)
/// of `policy` over `log`.
fn rule_counts(
    policy: &std::path::Path,
    log: &std::path::Path,
    args: &[&str],
) -> (Option<u64>, Option<u64>) {
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json"])
            .args(args)
            .args(["--log-format", LOG_FORMAT, "--policy"])
            .arg(policy)
            .arg(log),
    );
    let result = &json["results"][0];
    (result["requests"].as_u64(), result["rejected"].as_u64())
}

#[test]
fn traefik_gateway_routes_on_its_decoded_cleaned_path() {
    // One request a second on /api/search, spelt six ways. Traefik routes on
    // the path its entry point decodes and cleans, so the second to fourth
    // are the route's too and rejected; it answers 400 to a `#` in the path
    // and to a method that is not a token, which no rule then counts. The
    // policy reads paths as logged.
    let requests = [
        "GET /api/search",
        "GET /api//search",
        "GET /api/%73earch",
        "GET /api/x/../search",
        "GET /api/search#x",
        "G@T /api/search",
    ];
    let (_dir, log, policy) = one_a_second_on_search(&requests);
    let traefik = rule_counts(&policy, &log, &["--gateway", "traefik"]);
    assert_eq!(traefik, (Some(4), Some(3)));
    let out = success(
        rlctl()
            .args(["export", "--target", "traefik", "--policy"])
            .arg(&policy)
            .arg("--check")
            .arg(&log)
            .args(["--log-format", LOG_FORMAT]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("policy rejects 2, traefik rejects 3"),
        "{text}"
    );
    assert!(text.contains("  method, path or version: 5\n"), "{text}");
}

#[test]
fn kong_gateway_routes_on_its_normalised_path() {
    // One request a second on paths under /api/search. Kong's router reads
    // the request URI decoded (but for reserved characters), without dot
    // segments and with slashes merged, so the second, third, fifth and
    // sixth are the route's too; a path that is not UTF-8 once decoded no
    // route matches (Kong answers 404), which no rule then counts. The
    // policy reads paths as logged.
    let requests = [
        "GET /api/search",
        "GET /api//search",
        "GET /api/%73earch",
        "GET /api/search%FF",
        "GET /api/search/%C3%A9",
        "GET /api/%2e%2e/api/search",
    ];
    let rule = "[[rule]]\nname='search'\nroute='^/api/search'\nlimit='1/1m'\nburst=1\n";
    let counted = counted_by_gateway_and_policy(rule, &requests, "kong");
    assert_eq!(counted, (Some(5), Some(3)));
}

#[test]
fn kong_gateway_on_a_real_log_counts_no_path_that_is_not_utf8_decoded() {
    // A third-party Apache log holds a spam request whose path escapes
    // Windows-1251 bytes: Kong's router answers it 404, the policy counts it.
    let Some(log) = crate::support::realdata("elastic_examples_apache_logs") else {
        return;
    };
    let text = std::fs::read(&log).unwrap();
    let (mut routed, mut not_utf8) = (0, 0);
    for line in text.split(|&b| b == b'\n') {
        let prefix = b" /presentations/";
        let Some(at) = line.windows(prefix.len()).position(|w| w == prefix) else {
            continue;
        };
        let path = line[at + 1..]
            .split(|&b| b == b' ' || b == b'?')
            .next()
            .unwrap();
        routed += 1;
        not_utf8 += u64::from(std::str::from_utf8(&percent_decoded(path)).is_err());
    }
    assert!(
        not_utf8 > 0,
        "the log changed: {routed} requests, none not UTF-8"
    );
    let rule = "[[rule]]\nname='slides'\nroute='^/presentations/'\nlimit='100000/1m'\n";
    let counted = |args: &[&str]| requests_counted(rule, &log, args);
    assert_eq!(counted(&[]), routed, "the policy");
    assert_eq!(counted(&["--gateway", "kong"]), routed - not_utf8);
}

/// `path` with every `%` and two hex digits decoded.
fn percent_decoded(path: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::new();
    let mut i = 0;
    while i < path.len() {
        let escape = (path[i] == b'%')
            .then(|| Some(hex(*path.get(i + 1)?)? * 16 + hex(*path.get(i + 2)?)?))
            .flatten();
        match escape {
            Some(byte) => {
                out.push(byte as u8);
                i += 3;
            }
            None => {
                out.push(path[i]);
                i += 1;
            }
        }
    }
    out
}

#[test]
fn traefik_gateway_counts_no_options_star() {
    // Go's net/http answers `OPTIONS *` itself, before Traefik's router;
    // `GET *` and `OPTIONS` on a path reach it, and a rule for every request
    // counts them. The policy counts all four.
    let requests = [
        "GET /api/search",
        "OPTIONS *",
        "GET *",
        "OPTIONS /api/search",
    ];
    let rule = "[[rule]]\nname='every'\nlimit='1/1m'\nburst=1\n";
    let counted = counted_by_gateway_and_policy(rule, &requests, "traefik");
    assert_eq!(counted, (Some(3), Some(4)));
}

/// The requests the first rule of `policy_text` counts in `log`, as
/// `simulate` with `args` replays it.
fn requests_counted(policy_text: &str, log: &std::path::Path, args: &[&str]) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(&policy, policy_text).unwrap();
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json", "--policy"])
            .arg(&policy)
            .args(args)
            .arg(log),
    );
    json["results"][0]["requests"].as_u64().unwrap()
}

/// The requests the first rule of `policy_text` counts, of one request a
/// second of each of `requests`, replayed as `gateway` and as the policy.
fn counted_by_gateway_and_policy(
    policy_text: &str,
    requests: &[&str],
    gateway: &str,
) -> (Option<u64>, Option<u64>) {
    let (dir, log, _) = one_a_second_on_search(requests);
    let policy = dir.path().join("rule.toml");
    std::fs::write(&policy, policy_text).unwrap();
    let on_gateway = rule_counts(&policy, &log, &["--gateway", gateway]).0;
    (on_gateway, rule_counts(&policy, &log, &[]).0)
}

#[test]
fn envoy_gateway_counts_no_request_its_codec_refuses() {
    // One request a second on /api/search. Envoy's HTTP/1 parser refuses a
    // method it does not know, as sent (`get`, `M-SEARCH`), and its
    // connection manager a `#` anywhere in the target; it routes on the path
    // as sent (`//` is not merged). The policy counts every one of them.
    let requests = [
        "GET /api/search",
        "get /api/search",
        "M-SEARCH /api/search",
        "GET /api/search?q=#x",
        "GET /api//search",
        "PURGE /api/search",
    ];
    let (_dir, log, policy) = one_a_second_on_search(&requests);
    for envoy in ["envoy", "envoy-timer", "envoy-ratelimit"] {
        let counts = rule_counts(&policy, &log, &["--gateway", envoy]);
        assert_eq!(counts, (Some(2), Some(1)), "{envoy}");
    }
    let counts = rule_counts(&policy, &log, &[]);
    assert_eq!(counts, (Some(5), Some(4)), "the policy");
}

#[test]
fn nginx_gateway_counts_no_request_nginx_answers_400_even_without_routes() {
    // No rule has a route: the paths must still be read, for nginx answers
    // these itself, before limit_req counts them: first a connection closed
    // before its request line (logged `""`), then bad paths, a lowercase
    // method (whose line nginx may log as `"get"` alone: the policy counts
    // it all the same) and a space in the target (logged as sent).
    let policy = "[[rule]]\nname='all'\nlimit='1/1m'\nburst=1\n";
    let Some(nginx) = nginx_with(policy) else {
        return;
    };
    {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(nginx.addr()).unwrap();
        stream.write_all(b"\r\n").unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        stream.read_to_end(&mut Vec::new()).unwrap();
    }
    let requests = [
        ("GET", "/a"),
        ("GET", "/a%00"),
        ("GET", "/b%zz"),
        ("GET", "/.."),
        ("get", "/a"),
        ("GET", "/a b"),
        ("GET", "/a?q=x y"),
        ("GET", "/a?q=\u{1}"),
        ("GET", "/a?q=\u{e9}"),
        ("GET", "/a?q=#x"),
        ("GET", "/a?q=\u{7f}x"),
        ("GET", "/a#x y"),
        ("GET", "/caf\u{e9}"),
        ("GET", "/a"),
    ];
    let statuses: Vec<u16> = (requests.iter())
        .map(|(m, p)| status_of(nginx.addr(), m, p))
        .collect();
    assert_eq!(
        statuses,
        [
            200, 400, 400, 400, 400, 400, 400, 400, 429, 429, 400, 400, 429, 429
        ]
    );
    let log_text = nginx.read_access_log(requests.len() + 1);
    assert!(
        log_text.starts_with(|c: char| c.is_ascii_digit()) && log_text.contains(" \"\" 400 "),
        "{log_text}"
    );
    let (gateway, _) = replayed_nginx_log(policy, &log_text, &["--gateway", "nginx"]);
    assert_eq!(gateway, (15, 15), "{log_text}");
    let (policy_reading, _) = replayed_nginx_log(policy, &log_text, &[]);
    assert_eq!(policy_reading, (5, 15), "the policy counts every request");
}

#[test]
fn nginx_gateway_reads_targets_back_from_each_log_escape() {
    // nginx writes a control byte as `\x01` (escape=default), `\u0001`
    // (json) or as itself (none), and a client's literal `\x01` as `\x5Cx01`,
    // `\\x01` or `\x01`: read back as the escaping wrote them, the replay
    // refuses the control bytes nginx answered 400 to, and only those.
    let policy = "[[rule]]\nname='all'\nlimit='1/1m'\nburst=1\n";
    let requests = [
        ("GET", "/a"),
        ("GET", "/a?q=\u{1}"),
        ("GET", "/a?q=\\x01"),
        ("GET", "/a?q=\\u0001"),
        ("GET", "/a?q=\u{7f}"),
        ("GET", "/caf\u{e9}"),
        ("GET", "/a?q=\\\\x5C"),
    ];
    for escape in ["default", "json", "none"] {
        let Some(nginx) = nginx_escaping(policy, escape) else {
            return;
        };
        let statuses: Vec<u16> = (requests.iter())
            .map(|(m, p)| status_of(nginx.addr(), m, p))
            .collect();
        assert_eq!(statuses, [200, 400, 429, 429, 400, 429, 429], "{escape}");
        let log_text = nginx.read_access_log(requests.len());
        let extra = ["--gateway", "nginx", "--log-escape", escape];
        let compared = compared_logged(policy, &log_text, NGINX_FORMAT, &extra);
        assert_eq!(compared, (7, 7), "escape={escape}:\n{log_text}");
    }
}

/// The status a server gives `method path` (HTTP/1.1, from 127.0.0.1).
fn status_of(server: std::net::SocketAddr, method: &str, path: &str) -> u16 {
    status_with(server, (method, path), "")
}

/// [`status_of`] with more header lines (`headers`: each ending in `\r\n`).
pub(crate) fn status_with(
    server: std::net::SocketAddr,
    (method, path): (&str, &str),
    headers: &str,
) -> u16 {
    status_of_line(server, &format!("{method} {path} HTTP/1.1"), headers)
}

/// The status `server` answers the request line `line` with.
fn status_of_line(server: std::net::SocketAddr, line: &str, headers: &str) -> u16 {
    let response = response_to_line(server, line, headers);
    String::from_utf8_lossy(&response[9..12]).parse().unwrap()
}

/// What `server` answers the request line `line` (and `headers`) with.
pub(crate) fn response_to_line(server: std::net::SocketAddr, line: &str, headers: &str) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(server).unwrap();
    // One write: a server that answers 400 closes as soon as it has read
    // the request line.
    let request = format!("{line}\r\nHost: x\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    // A reset after the answer (the server closed with the request unread) ends it too.
    let _ = stream.read_to_end(&mut response);
    response
}

#[test]
fn haproxy_gateway_compares_methods_as_sent() {
    // A GET rule of one request a minute (HAProxy admits two: it has no
    // burst, see the export): HAProxy's `method GET` does not match `get`
    // (methods are case-sensitive there), the policy's does.
    let policy = "[[rule]]\nname='get'\nmethod='GET'\nlimit='1/1m'\nburst=1\n";
    let Some((_running, addr, _dir)) = crate::export::start_haproxy(policy) else {
        return;
    };
    let methods = ["GET", "get", "get", "GET", "GET"];
    let statuses: Vec<u16> = methods.iter().map(|m| status_of(addr, m, "/x")).collect();
    assert_eq!(statuses, [200, 200, 200, 200, 429]);
    let lines: Vec<String> = (methods.iter().zip(&statuses).enumerate())
        .map(|(i, (m, s))| format!("1767571200.{i:03} 127.0.0.1 \"{m} /x HTTP/1.1\" {s}\n"))
        .collect();
    let compared = |extra: &[&str]| compared_logged(policy, &lines.concat(), LOG_FORMAT, extra);
    assert_eq!(compared(&["--gateway", "haproxy"]), (5, 5));
    assert_eq!(
        compared(&[]),
        (2, 5),
        "the policy takes methods in any case"
    );
}

#[test]
fn haproxy_gateway_counts_no_request_haproxy_answers_400() {
    // One request a minute (HAProxy admits two): HAProxy answers these 400
    // itself, before its rule counts them: a non-ASCII byte, a method that is
    // no token, a DEL where HAProxy reads the target byte by byte, a control
    // byte, a space in the target (logged as sent, whose line reads
    // `GET /a b HTTP/1.1`); a DEL among the four-byte groups it skips
    // passes. The policy counts every one; no rule has a route, so the
    // replay must keep these paths all the same.
    let policy = "[[rule]]\nname='all'\nlimit='1/1m'\nburst=1\n";
    let Some((_running, addr, _dir)) = crate::export::start_haproxy(policy) else {
        return;
    };
    let requests = [
        ("GET", "/a"),
        ("GET", "/\u{e9}"),
        ("G@T", "/a"),
        ("GET", "/abc\u{7f}"),
        ("GET", "/a\u{1}b"),
        ("GET", "/a\u{7f}b"),
        ("GET", "/a b"),
        ("GET", "/a?q=x y"),
        ("GET", "/a?q=\u{1}"),
        ("GET", "/a?q=\u{e9}"),
        ("GET", "/a?q=#x"),
        ("GET", "/a?q=\u{7f}x"),
        ("get", "/a"),
    ];
    let statuses: Vec<u16> = (requests.iter())
        .map(|&(m, p)| status_of(addr, m, p))
        .collect();
    assert_eq!(
        statuses,
        [
            200, 400, 400, 400, 400, 200, 400, 400, 400, 400, 400, 400, 429
        ]
    );
    let lines: Vec<String> = (requests.iter().zip(&statuses).enumerate())
        .map(|(i, ((m, p), s))| format!("1767571200.{i:03} 127.0.0.1 \"{m} {p} HTTP/1.1\" {s}\n"))
        .collect();
    let compared = |extra: &[&str]| compared_logged(policy, &lines.concat(), LOG_FORMAT, extra);
    assert_eq!(compared(&["--gateway", "haproxy"]), (13, 13));
    assert_eq!(compared(&[]), (2, 13), "the policy counts every request");
}

#[test]
fn haproxy_gateway_keeps_128_bytes_of_a_text_key() {
    // Two API keys that share their first 128 bytes are one client in the
    // exported `type string len 128` table: their three requests meet one
    // limit there (HAProxy admits two a minute), three clients' to the policy.
    // Keys whose 128th byte is the first of `é` (C3) or of `ĉ` (C4) are two.
    let policy = "[[rule]]\nname='k'\nkey='field:http_x_api_key'\nlimit='1/1m'\nburst=1\n";
    let Some((_running, addr, _dir)) = crate::export::start_haproxy(policy) else {
        return;
    };
    let shared = "k".repeat(128);
    let cut = "k".repeat(127);
    let keys = [
        format!("{shared}-a"),
        format!("{shared}-b"),
        format!("{shared}-a"),
        format!("{cut}\u{e9}"),
        format!("{cut}\u{e9}"),
        format!("{cut}\u{109}"),
        format!("{cut}\u{e9}"),
    ];
    let statuses: Vec<u16> = (keys.iter())
        .map(|k| status_with(addr, ("GET", "/x"), &format!("X-Api-Key: {k}\r\n")))
        .collect();
    assert_eq!(statuses, [200, 200, 429, 200, 200, 200, 429]);
    let lines: Vec<String> = (keys.iter().zip(&statuses).enumerate())
        .map(|(i, (k, s))| format!("1767571200.{i:03} 127.0.0.1 \"GET /x HTTP/1.1\" {s} \"{k}\"\n"))
        .collect();
    let format = format!("{LOG_FORMAT} \"$http_x_api_key\"");
    let compared = |extra: &[&str]| compared_logged(policy, &lines.concat(), &format, extra);
    assert_eq!(compared(&["--gateway", "haproxy"]), (7, 7));
}
