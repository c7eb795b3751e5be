//! End-to-end tests of `rlctl export`: one snapshot per target for a two-rule
//! policy, outputs that parse (YAML, JSON) or pass the product's own check
//! (`nginx -t`, `haproxy -c`), real nginx and HAProxy enforcing an export, and
//! hostile rule names and routes that must not break out of comments or strings.
//! Exemptions are tested in [`super::export_exempt`].

use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use predicates::str::contains;

use crate::support::nginx::{Nginx, http_get, statuses_of};
use crate::support::{Engine, require, rlctl};

/// A global rule and an endpoint rule with a method and a route.
pub(crate) const TWO_RULES: &str = r#"
[[rule]]
name = "global"
key = "ip"
limit = "40/1m"
burst = 7
algorithm = "token-bucket"

[[rule]]
name = "get-api-search"
method = "GET"
route = "^/api/search$"
key = "ip"
limit = "20/1m"
burst = 10
algorithm = "token-bucket"
"#;

/// Names and routes written to break out of comments, strings and blocks.
const HOSTILE: &str = r#"
[[rule]]
name = "x\"; } evil {\n# ' `"
key = "ip"
limit = "5000/1h"
route = "^/a\"b\\\\c'd ;\\{\\}`$ # x"
method = "post"
algorithm = "leaky-bucket"
burst = 3
"#;

pub(crate) const TARGETS: [&str; 6] = ["nginx", "envoy", "traefik", "kong", "haproxy", "aws-waf"];

pub(crate) fn write_policy(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("policy.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `rlctl export --policy <text> --target <target> <extra...>`: stdout on success.
pub(crate) fn export(text: &str, target: &str, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let policy = write_policy(dir.path(), text);
    let out = rlctl()
        .args(["export", "--target", target, "--policy"])
        .arg(&policy)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{target}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub(crate) fn yaml(text: &str) -> serde_norway::Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML ({e}):\n{text}"))
}

#[test]
fn every_target_snapshot() {
    for target in TARGETS {
        let out = export(TWO_RULES, target, &[]);
        insta::assert_snapshot!(format!("export_{target}"), out);
    }
}

#[test]
fn docs_show_the_real_output_of_every_target() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/export.md"))
        .unwrap();
    for target in TARGETS {
        let out = export(TWO_RULES, target, &[]);
        assert!(
            doc.contains(&out),
            "docs/export.md is out of date for {target}: rerun the example"
        );
    }
}

#[test]
fn yaml_and_json_outputs_parse_and_carry_the_conversions() {
    let envoy = yaml(&export(TWO_RULES, "envoy", &[]));
    let config =
        &envoy["virtual_hosts"][0]["typed_per_filter_config"]["envoy.filters.http.local_ratelimit"];
    let bucket = &config["descriptors"][0]["token_bucket"];
    assert_eq!(
        (
            bucket["max_tokens"].as_u64(),
            bucket["fill_interval"].as_str()
        ),
        (Some(7), Some("1.500s"))
    );
    assert_eq!(
        config["filter_enforced"]["default_value"]["numerator"].as_u64(),
        Some(100)
    );
    let dry = yaml(&export(TWO_RULES, "envoy", &["--dry-run"]));
    let config =
        &dry["virtual_hosts"][0]["typed_per_filter_config"]["envoy.filters.http.local_ratelimit"];
    assert_eq!(
        config["filter_enforced"]["default_value"]["numerator"].as_u64(),
        Some(0)
    );

    let traefik = yaml(&export(TWO_RULES, "traefik", &[]));
    let limit = &traefik["http"]["middlewares"]["rl-global"]["rateLimit"];
    assert_eq!(
        (limit["average"].as_u64(), limit["burst"].as_u64()),
        (Some(40), Some(7))
    );
    assert_eq!(
        traefik["http"]["routers"]["rl-get-api-search"]["rule"].as_str(),
        Some("Method(`GET`) && PathRegexp(`^/api/search$`)")
    );

    let kong = yaml(&export(TWO_RULES, "kong", &[]));
    assert_eq!(kong["plugins"][0]["config"]["minute"].as_u64(), Some(46));
    let route = &kong["services"][0]["routes"][0];
    assert_eq!(route["paths"][0].as_str(), Some("~^/api/search$"));
    assert_eq!(route["plugins"][0]["config"]["minute"].as_u64(), Some(29));

    let waf: serde_json::Value = serde_json::from_str(&export(TWO_RULES, "aws-waf", &[])).unwrap();
    let statement = &waf["Rules"][1]["Statement"]["RateBasedStatement"];
    assert_eq!(
        (
            statement["Limit"].as_u64(),
            statement["EvaluationWindowSec"].as_u64()
        ),
        (Some(29), Some(60))
    );
    assert!(waf["Notes"].as_array().is_some_and(|n| !n.is_empty()));
    let dry: serde_json::Value =
        serde_json::from_str(&export(TWO_RULES, "aws-waf", &["--dry-run"])).unwrap();
    assert!(dry["Rules"][0]["Action"]["Count"].is_object());
}

#[test]
fn hostile_names_and_routes_stay_inside_comments_and_strings() {
    let traefik = yaml(&export(HOSTILE, "traefik", &[]));
    assert_eq!(
        traefik["http"]["routers"]["rl-x-evil"]["rule"].as_str(),
        Some(r#"Method(`POST`) && PathRegexp("^/a\"b\\\\c'd ;\\{\\}`$ # x")"#)
    );
    let kong = yaml(&export(HOSTILE, "kong", &[]));
    assert_eq!(
        kong["services"][0]["routes"][0]["paths"][0].as_str(),
        Some(r#"~^/a"b\\c'd ;\{\}`$ # x"#)
    );
    let envoy = yaml(&export(HOSTILE, "envoy", &[]));
    assert_eq!(
        envoy["virtual_hosts"][0]["routes"][0]["match"]["safe_regex"]["regex"].as_str(),
        Some(r#".*(?:^/a"b\\c'd ;\{\}`$ # x).*"#)
    );
    let waf: serde_json::Value = serde_json::from_str(&export(HOSTILE, "aws-waf", &[])).unwrap();
    assert_eq!(waf["Rules"].as_array().map(Vec::len), Some(1));
    for target in TARGETS.into_iter().filter(|t| *t != "aws-waf") {
        let out = export(HOSTILE, target, &[]);
        // The newline in the name is escaped: no line starts with the name's tail.
        assert!(
            !out.lines().any(|l| l.starts_with("# ' `")),
            "{target}:\n{out}"
        );
    }
}

#[test]
fn nginx_accepts_the_export_plain_dry_run_and_hostile() {
    // Rule names as `analyze --write-policy` makes them from a deep REST path:
    // nginx's variable hash has room for names of at most 46 characters.
    let long_names = "[[rule]]\nname='get-api-v1-organizations-id-projects-id-members'\nmethod='GET'\nroute='^/api/v1/organizations/[^/]+/projects/[^/]+/members$'\nlimit='120/1m'\nburst=20\n[[rule]]\nname='get-api-v1-organizations-id-projects-id-members-x'\nroute='^/x$'\nlimit='1/1m'\n";
    for (policy, extra) in [
        (TWO_RULES, &[][..]),
        (TWO_RULES, &["--dry-run"][..]),
        (HOSTILE, &[][..]),
        (long_names, &[][..]),
    ] {
        let out = export(policy, "nginx", extra);
        let Some(result) = Nginx::check_config(&out) else {
            return;
        };
        if let Err(message) = result {
            panic!("nginx -t rejected the export:\n{message}\n{out}");
        }
    }
    assert!(export(TWO_RULES, "nginx", &["--dry-run"]).contains("limit_req_dry_run on;"));
}

#[test]
fn many_rules_say_how_to_size_nginxs_variables_hash_and_it_does() {
    // Found by users: 40 rules keyed by a header made nginx 1.22 warn
    // "could not build optimal variables_hash"; the header says what to add,
    // sized to the variables (300 rules warned even with a bucket of 128).
    let policy = |rules: usize, key: &str| -> String {
        (0..rules)
            .map(|i| {
                format!(
                    "[[rule]]\nname='get-api-v1-a-rather-long-rule-name-{i}'\nmethod='GET'\nroute='^/api/v1/r{i}$'\nkey='{key}'\nlimit='{}/1m'\n",
                    i + 5
                )
            })
            .collect()
    };
    assert!(!export(TWO_RULES, "nginx", &[]).contains("variables_hash"));
    let advised = regex::Regex::new(r"`(variables_hash_\w+ \d+;)`").unwrap();
    for (rules, key, max_size) in [(40, "field:http_x_api_key", 1024), (300, "ip", 4096)] {
        let out = export(&policy(rules, key), "nginx", &[]);
        let directives: Vec<&str> = (advised.captures_iter(&out))
            .map(|c| c.get(1).unwrap().as_str())
            .collect();
        assert_eq!(
            directives,
            [
                format!("variables_hash_max_size {max_size};"),
                "variables_hash_bucket_size 128;".to_string()
            ],
            "{out}"
        );
        let Some(plain) = Nginx::check_config_saying(&out) else {
            return;
        };
        assert!(
            plain
                .unwrap()
                .contains("could not build optimal variables_hash")
        );
        let sized = format!("{}\n{out}", directives.join("\n"));
        let said = Nginx::check_config_saying(&sized).unwrap().unwrap();
        assert!(!said.contains("variables_hash"), "{rules} rules: {said}");
    }
}

#[test]
fn real_nginx_enforces_the_converted_burst_method_and_route() {
    // global: 3/1m, 3 at once → nginx burst=2. s: GET ^/s$, 1/1m, 1 at once → burst=0.
    let policy = "[[rule]]\nname='global'\nlimit='3/1m'\nburst=3\n[[rule]]\nname='s'\nmethod='GET'\nroute='^/s$'\nlimit='1/1m'\nburst=1\n";
    let config = format!(
        "{}\nserver {{\n    listen 127.0.0.1:{{{{port}}}};\n    location / {{ empty_gif; }}\n}}\n",
        export(policy, "nginx", &[])
    );
    let Some(nginx) = Nginx::start(&config) else {
        return;
    };
    let statuses = |client: u8, path: &str, n: usize| statuses_of(nginx.addr(), client, path, n);
    assert_eq!(
        statuses(2, "/x", 5),
        [200, 200, 200, 429, 429],
        "{}",
        nginx.error_log()
    );
    assert_eq!(statuses(3, "/s", 3), [200, 429, 429]);
    assert_eq!(
        statuses(4, "/s?q=1", 2),
        [200, 429],
        "the query string is not part of the route"
    );
    assert_eq!(
        statuses(5, "/s/more", 3),
        [200, 200, 200],
        "other paths only meet the global rule"
    );
}

#[test]
fn nginx_and_haproxy_match_a_routes_non_ascii_characters_as_utf8_bytes() {
    // Found by review: `\x{200b}` (how routes write hidden characters) made
    // `nginx -t` and `haproxy -c` fail, and `\x{ad}` passed but matched the
    // byte 0xAD, never the UTF-8 C2 AD that $uri holds: the rule limited nothing.
    let policy = "[[rule]]\nname='a'\nroute='^/a\\x{ad}b$'\nlimit='1/1m'\nburst=1\n[[rule]]\nname='z'\nroute='^/z\\x{200b}w$'\nlimit='1/1m'\nburst=1\n";
    let nginx = export(policy, "nginx", &[]);
    assert!(nginx.contains(r#""~^/a\\xC2\\xADb\\z""#), "{nginx}");
    let haproxy = export(policy, "haproxy", &[]);
    assert!(
        haproxy.contains(r"path -m reg '^/z\xE2\x80\x8Bw\z'"),
        "{haproxy}"
    );
    haproxy_check(&haproxy);
    // A class holding one cannot be written for bytes: refused, with why.
    let dir = tempfile::tempdir().unwrap();
    let classed = write_policy(
        dir.path(),
        "[[rule]]\nname='c'\nroute='^/[é]$'\nlimit='1/1m'\n",
    );
    for target in ["nginx", "haproxy"] {
        let out = rlctl()
            .args(["export", "--target", target, "--policy"])
            .arg(&classed)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("class"),
            "{target}: {stderr}"
        );
    }
    let config = format!(
        "{nginx}\nserver {{\n    listen 127.0.0.1:{{{{port}}}};\n    location / {{ empty_gif; }}\n}}\n"
    );
    let Some(server) = Nginx::start(&config) else {
        return;
    };
    let statuses = |client: u8, path: &str| statuses_of(server.addr(), client, path, 3);
    assert_eq!(
        statuses(2, "/a%C2%ADb"),
        [200, 429, 429],
        "{}",
        server.error_log()
    );
    assert_eq!(statuses(3, "/z%E2%80%8Bw"), [200, 429, 429]);
    assert_eq!(
        statuses(4, "/a%ADb"),
        [200, 200, 200],
        "the lone byte is another path"
    );
}

/// `haproxy -c` accepts `config` (skipped when haproxy is not installed).
pub(crate) fn haproxy_check(config: &str) {
    let Some(binary) = require(Engine::Haproxy) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("haproxy.cfg");
    std::fs::write(&cfg, format!("{HAPROXY_HEAD}{config}")).unwrap();
    let out = Process::new(&binary)
        .arg("-c")
        .arg("-f")
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "haproxy -c: {}\n{config}",
        String::from_utf8_lossy(&out.stderr)
    );
}

pub(crate) const HAPROXY_HEAD: &str = "global\n    log stdout format raw local0\ndefaults\n    mode http\n    timeout client 5s\n    timeout server 5s\n    timeout connect 5s\n";

#[test]
fn haproxy_accepts_the_export() {
    // Rule names as `analyze --write-policy` makes them from a deep REST path:
    // nginx's variable hash has room for names of at most 46 characters.
    let long_names = "[[rule]]\nname='get-api-v1-organizations-id-projects-id-members'\nmethod='GET'\nroute='^/api/v1/organizations/[^/]+/projects/[^/]+/members$'\nlimit='120/1m'\nburst=20\n[[rule]]\nname='get-api-v1-organizations-id-projects-id-members-x'\nroute='^/x$'\nlimit='1/1m'\n";
    for (policy, extra) in [
        (TWO_RULES, &[][..]),
        (TWO_RULES, &["--dry-run"][..]),
        (HOSTILE, &[][..]),
        (long_names, &[][..]),
    ] {
        haproxy_check(&export(policy, "haproxy", extra));
    }
}

/// A running haproxy, killed when dropped.
pub(crate) struct RunningHaproxy(Child);

impl Drop for RunningHaproxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// HAProxy running the export of `policy` (answering 200 to what passes), or
/// `None` when haproxy is not installed.
pub(crate) fn start_haproxy(
    policy: &str,
) -> Option<(RunningHaproxy, SocketAddr, tempfile::TempDir)> {
    let binary = require(Engine::Haproxy)?;
    let port = crate::support::free_port();
    let frontend =
        export(policy, "haproxy", &[]).replace("127.0.0.1:8080", &format!("127.0.0.1:{port}"));
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("haproxy.cfg");
    let body = "    http-request return status 200 content-type text/plain string ok\n";
    std::fs::write(&cfg, format!("{HAPROXY_HEAD}{frontend}{body}")).unwrap();
    let child = Process::new(&binary)
        .args(["-db", "-f"])
        .arg(&cfg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = RunningHaproxy(child);
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(addr).is_err() {
        assert!(
            Instant::now() < deadline,
            "haproxy did not listen on {addr}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    Some((running, addr, dir))
}

#[test]
fn real_haproxy_denies_above_capacity_plus_limit_minus_one() {
    // 3/1m with 2 at once: no burst in HAProxy, so deny once 2 + 3 - 1 = 4 earlier requests count.
    let Some((_running, addr, _dir)) = start_haproxy("[[rule]]\nname='g'\nlimit='3/1m'\nburst=2\n")
    else {
        return;
    };
    let statuses: Vec<u16> = (0..7)
        .map(|_| http_get(addr, Ipv4Addr::new(127, 0, 0, 2), "/x").unwrap())
        .collect();
    assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429]);
}

#[test]
fn output_file_flags_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let policy = write_policy(dir.path(), TWO_RULES);
    let file = dir.path().join("limits.conf");
    rlctl()
        .args(["export", "--target", "nginx", "--clients", "100000", "-o"])
        .arg(&file)
        .arg("--policy")
        .arg(&policy)
        .assert()
        .success()
        .stdout("");
    let written = std::fs::read_to_string(&file).unwrap();
    assert!(written.contains("zone=rl_global:13m"), "{written}");
    let fail = |args: &[&str], policy: &Path, message: &str| {
        rlctl()
            .args(["export", "--policy"])
            .arg(policy)
            .args(args)
            .assert()
            .code(2)
            .stderr(contains(message));
    };
    fail(
        &["--target", "kong", "--dry-run"],
        &policy,
        "no dry-run mode",
    );
    fail(
        &["--target", "traefik", "--dry-run"],
        &policy,
        "no dry-run mode",
    );
    fail(
        &["--target", "nginx"],
        &dir.path().join("missing.toml"),
        "cannot read policy",
    );
    fail(&["--target", "gloo"], &policy, "invalid value 'gloo'");
    let combined = write_policy(dir.path(), "[[rule]]\nname='a'\nkey='ip+user'\nlimit='1/s'");
    fail(
        &["--target", "traefik"],
        &combined,
        "traefik cannot express rule `a`",
    );
    fail(&["--target", "kong"], &combined, "one thing");
    let zero = write_policy(dir.path(), "[[rule]]\nname='z'\nlimit='1/s'\nburst=0");
    fail(
        &["--target", "nginx"],
        &zero,
        "with burst 0 it would admit nothing",
    );
}

#[test]
fn export_check_lists_long_endpoints_whole() {
    // Found by review: the aligned listing cut cells at 60 characters, so
    // three endpoints that differ at their end read as one.
    let dir = tempfile::tempdir().unwrap();
    let policy = write_policy(
        dir.path(),
        "[[rule]]\nname = \"g\"\nlimit = \"30/1m\"\nalgorithm = \"fixed-window\"\n",
    );
    let long = format!("/api/v1/{}", "x".repeat(80));
    let log: String = (0..240)
        .map(|i| {
            format!(
                "10.0.0.{} - - [05/Jan/2026:00:{:02}:{:02} +0000] \"GET {long}{} HTTP/1.1\" 200 1 \"-\" \"x\"\n",
                i % 2,
                i / 120,
                i / 2 % 60,
                i % 3
            )
        })
        .collect();
    let path = dir.path().join("long.log");
    std::fs::write(&path, log).unwrap();
    let out = rlctl()
        .args(["export", "--target", "nginx", "--check"])
        .arg(&path)
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for end in 0..3 {
        assert!(text.contains(&format!("GET {long}{end} ")), "{text}");
    }
    assert!(!text.contains('…'), "{text}");
}
