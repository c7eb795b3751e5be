//! The endpoint rules of the policy `analyze --write-policy` writes: each
//! rests on every request it counts (a template's route also matches the
//! frequent siblings discovery kept by name, and a gateway checks every
//! rule), and each has a name of its own.

use std::path::{Path, PathBuf};

use crate::support::{json_of_success, rlctl};

/// One combined line of `client` at second `t` of the log.
fn line(client: &str, t: u32, method: &str, path: &str) -> String {
    format!(
        "{client} - - [05/Jan/2026:00:{:02}:{:02} +0000] \"{method} {path} HTTP/1.1\" 200 1\n",
        t / 60,
        t % 60
    )
}

/// `lines` written as `access.log` in `dir`.
fn write_log(dir: &Path, lines: &str) -> PathBuf {
    let log = dir.join("access.log");
    std::fs::write(&log, lines).unwrap();
    log
}

/// The policy `analyze --write-policy` (with `args`) writes beside `log`:
/// its path and its text.
fn written_policy(log: &Path, args: &[&str]) -> (PathBuf, String) {
    let policy = log.with_file_name("policy.toml");
    rlctl()
        .args(["analyze", "-q"])
        .args(args)
        .arg("--write-policy")
        .arg(&policy)
        .arg(log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&policy).unwrap();
    (policy, text)
}

/// The rule rows (`results[]`) of `simulate --policy policy log`.
fn replayed(policy: &Path, log: &Path) -> Vec<serde_json::Value> {
    let out = rlctl()
        .args(["simulate", "-q", "--format", "json", "--policy"])
        .arg(policy)
        .arg(log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["results"].as_array().unwrap().clone()
}

/// 15 minutes of 40 clients: a page of `pages` every 2 s each, taken in
/// turn, and one of 1,500 slugs (`/p/post-N`) every 10 s.
fn pages_and_slugs(pages: &[&str]) -> String {
    let mut lines = String::new();
    for t in 0..900u32 {
        for c in 1..=40u32 {
            let client = format!("10.0.0.{c}");
            if (t + c) % 2 == 0 {
                let page = pages[((t / 2 + c) as usize) % pages.len()];
                lines.push_str(&line(&client, t, "GET", &format!("/p/{page}")));
            }
            if (t + c) % 10 == 0 {
                let slug = (t * 41 + c * 7) % 1500;
                lines.push_str(&line(&client, t, "GET", &format!("/p/post-{slug}")));
            }
        }
    }
    lines
}

#[test]
fn a_template_rule_that_also_counts_named_siblings_says_so() {
    // Ten pages by name, every 2 s per client, and one of 1,500 slugs every
    // 10 s: discovery names the slugs `GET /p/:id` and keeps the ten.
    let pages = [
        "about", "blog", "cart", "deals", "faq", "help", "jobs", "news", "shop", "team",
    ];
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &pages_and_slugs(&pages));
    let (policy, text) = written_policy(&log, &["--window", "10s"]);
    assert!(text.contains("name = \"get-p-id\""), "{text}");
    assert!(
        text.contains("# Rule get-p-id's route also matches 10 other reported endpoint(s) (18000 requests), so its limit rests on their requests and its own ("),
        "{text}"
    );
    assert!(
        text.contains("#   GET /p/about (1800 requests)\n"),
        "{text}"
    );
    // A page's own rule matches no other endpoint.
    assert!(!text.contains("# Rule get-p-about"), "{text}");
    // Replayed, no rule hits a client of this even traffic; from the slugs'
    // requests alone, the rule of /p/:id rejected every client.
    for rule in replayed(&policy, &log) {
        assert_eq!(rule["clients_rejected"], 0, "{rule}");
    }
}

#[test]
fn a_template_rule_counts_the_paths_of_a_route_named_endpoint_too() {
    // Five pages named by one --route rule, and one of 1,500 slugs: the
    // slugs' rule `^/p/[^/]+$` also counts the pages, which their name
    // (`pages`) does not show; an analysis with --route rules reads their
    // paths. Matched by name only, its limit rested on the slugs alone and
    // the replay hit every client.
    let pages = ["about", "blog", "cart", "deals", "faq"];
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &pages_and_slugs(&pages));
    let route = ["--route", "^/p/(about|blog|cart|deals|faq)$=pages"];
    let (policy, text) = written_policy(&log, &[&["--window", "10s"][..], &route].concat());
    assert!(
        text.contains("route = \"^/p/(about|blog|cart|deals|faq)$\""),
        "{text}"
    );
    assert!(
        text.contains(
            "# Rule get-p-id's route also matches 1 other reported endpoint(s) (18000 requests)"
        ),
        "{text}"
    );
    assert!(text.contains("#   pages (18000 requests)\n"), "{text}");
    for rule in replayed(&policy, &log) {
        assert_eq!(rule["clients_rejected"], 0, "{rule}");
    }
}

#[test]
fn endpoints_named_alike_get_rules_of_their_own_names() {
    // `/a-b`, `/a_b` and `/a.b` all read `get-a-b`: a policy with two rules
    // of one name cannot be loaded, so report failed on its own policy.
    let mut lines = String::new();
    for t in 0..1800u32 {
        for c in 1..=40u32 {
            let path = ["/a-b", "/a_b", "/a.b"][((t + c) % 3) as usize];
            lines.push_str(&line(&format!("10.0.0.{c}"), t, "GET", path));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &lines);
    let (_, text) = written_policy(&log, &[]);
    for name in ["get-a-b", "get-a-b-2", "get-a-b-3"] {
        assert!(text.contains(&format!("name = \"{name}\"\n")), "{text}");
    }
    let checked = rlctl::policy::Policy::parse_policy(&text, "policy.toml").unwrap();
    assert_eq!(checked.rules.len(), 4);
    rlctl()
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["report", "-q", "--format", "json"])
        .arg(&log)
        .assert()
        .success();
}

#[test]
fn a_client_set_apart_only_in_a_rules_wider_scope_is_profiled() {
    // Every client sends 2 requests a second to /api/heavy, so 10.9.9.9's
    // 200 a minute to /p/secret (8 minutes) stand out neither overall nor
    // on /p/secret (too few samples for a limit of its own): only among the
    // requests the rule of /p/:id counts.
    let pages = ["about", "blog", "cart", "deals", "faq"];
    let mut lines = String::new();
    for t in 0..1800u32 {
        for c in 1..=40u32 {
            let client = format!("10.0.0.{c}");
            lines.push_str(&line(&client, t, "GET", "/api/heavy"));
            lines.push_str(&line(&client, t, "GET", "/api/heavy"));
            if (t + c) % 2 == 0 {
                let page = pages[((t / 2 + c) % 5) as usize];
                lines.push_str(&line(&client, t, "GET", &format!("/p/{page}")));
            }
            if (t + c) % 10 == 0 {
                let slug = (t * 41 + c * 7) % 1500;
                lines.push_str(&line(&client, t, "GET", &format!("/p/post-{slug}")));
            }
        }
        if (600..1080).contains(&t) {
            for _ in 0..(3 + t % 2) {
                lines.push_str(&line("10.9.9.9", t, "GET", "/p/secret"));
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &lines);
    let out = rlctl()
        .args(["analyze", "-q", "--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let profiled: Vec<&str> = (json["profiles"].as_array().unwrap().iter())
        .map(|p| p["client"].as_str().unwrap())
        .collect();
    assert!(profiled.contains(&"10.9.9.9"), "{profiled:?}");
}

#[test]
fn a_rule_matches_a_colon_of_the_path_as_it_is() {
    // A custom method (`/v1/jobs:cancel`) is no template: read as one, its
    // rule's route was `^/v1/jobs[A-Za-z0-9]+$` and matched none of its
    // requests, and its endpoint took in `/v1/jobsB7`.
    let mut lines = String::new();
    for t in 0..1800u32 {
        for c in 1..=40u32 {
            let path = ["/v1/jobs:cancel", "/v1/jobs"][((t + c) % 2) as usize];
            lines.push_str(&line(&format!("10.0.0.{c}"), t, "POST", path));
        }
        lines.push_str(&line("10.0.1.1", t, "POST", "/v1/jobsB7"));
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &lines);
    let routes = dir.path().join("routes.txt");
    let routes_arg = routes.to_str().unwrap();
    let (policy, text) = written_policy(&log, &["--write-routes", routes_arg]);
    assert!(text.contains("route = \"^/v1/jobs:cancel$\""), "{text}");
    let rules = replayed(&policy, &log);
    let cancel = rules
        .iter()
        .find(|r| r["rule"] == "post-v1-jobs-cancel")
        .unwrap();
    assert_eq!(cancel["requests"], 36000, "{cancel}");
    // The routes file writes its colon escaped, and reads back to the same
    // endpoints and the same policy: a routes file of `/v1/jobs:cancel`
    // would read as a template.
    let written = std::fs::read_to_string(&routes).unwrap();
    assert!(
        written.lines().any(|l| l == "/v1/jobs\\:cancel"),
        "{written}"
    );
    let (_, again) = written_policy(&log, &["--routes", routes_arg]);
    assert_eq!(again, text);
    let json = json_of_success(
        rlctl()
            .args(["analyze", "--format", "json", "--routes", routes_arg])
            .arg(&log),
    );
    let requests = |name: &str| {
        json["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["endpoint"] == name)
            .map(|e| e["requests"].clone())
    };
    assert_eq!(requests("POST /v1/jobs:cancel"), Some(36000.into()));
    assert_eq!(requests("POST /v1/jobsB7"), Some(1800.into()));
}

#[test]
fn log_text_with_control_characters_leaves_the_policy_readable_and_exportable() {
    // Found by review: the suggested exemption's comment held the path raw
    // (TOML refuses control characters in comments, so rlctl could not read
    // its own policy back), and a route kept a raw ESC that every export
    // refused.
    let dir = tempfile::tempdir().unwrap();
    let probe = "/h/\x1b]0;pwned\x07";
    let mut lines = String::new();
    for minute in 0..10 {
        for s in (0..60).step_by(15) {
            lines.push_str(&line("10.0.0.1", minute * 60 + s, "GET", probe));
        }
        for c in 0..100 {
            lines.push_str(&line(
                &format!("10.0.1.{c}"),
                minute * 60 + c % 60,
                "GET",
                "/g\x1b[2J",
            ));
        }
    }
    let log = write_log(dir.path(), &lines);
    let (policy, text) = written_policy(&log, &[]);
    assert!(!text.chars().any(|c| c.is_control() && c != '\n'), "{text}");
    assert!(text.contains(r"on GET /h/\x1b]0;pwned\x07,"), "{text}");
    assert!(text.contains(r"route = '^/g\x{1b}\[2J$'"), "{text}");
    let rules = replayed(&policy, &log);
    let rule = rules.iter().find(|r| r["rule"] == "get-g-2j").unwrap();
    assert_eq!(rule["requests"], 1000);
    for target in ["nginx", "haproxy", "envoy", "traefik", "kong", "aws-waf"] {
        rlctl()
            .args(["export", "--target", target, "--policy"])
            .arg(&policy)
            .assert()
            .success();
    }
}

#[test]
fn a_route_from_an_escaped_path_also_matches_it_decoded_as_nginx_reads_it() {
    // Found by users: the route of the logged path `/percent%20x` was
    // `^/percent%20x$`, which nginx (matching the decoded `$uri`,
    // `/percent x`) and Traefik never matched.
    let mut lines = String::new();
    for minute in 0..10 {
        for c in 0..100 {
            let client = format!("10.0.1.{c}");
            lines.push_str(&line(&client, minute * 60 + c % 60, "GET", "/percent%20x"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let log = write_log(dir.path(), &lines);
    let (policy, text) = written_policy(&log, &[]);
    let written: toml::Table = toml::from_str(&text).unwrap();
    let route = (written["rule"].as_array().unwrap().iter())
        .find_map(|r| r.get("route").and_then(|r| r.as_str()))
        .unwrap_or_else(|| panic!("no route in {text}"));
    assert_eq!(route, "^/percent(?:%20| )x$");
    let re = regex::Regex::new(route).unwrap();
    assert!(re.is_match("/percent%20x") && re.is_match("/percent x"));
    assert!(!re.is_match("/percentQx"));
    let rules = replayed(&policy, &log);
    let rule = rules
        .iter()
        .find(|r| r["rule"] == "get-percent-20x")
        .unwrap();
    assert_eq!(rule["requests"], 1000);
    // A real nginx, given the route, limits the path as sent.
    let one_rule = format!("[[rule]]\nname='p'\nroute='{route}'\nlimit='1/1m'\nburst=1\n");
    let config = format!(
        "{}\nserver {{\n    listen 127.0.0.1:{{{{port}}}};\n    location / {{ empty_gif; }}\n}}\n",
        crate::export::export(&one_rule, "nginx", &[])
    );
    let Some(nginx) = crate::support::nginx::Nginx::start(&config) else {
        return;
    };
    let status = |path| crate::gateway::status_with(nginx.addr(), ("GET", path), "");
    let statuses = ["/percentQx", "/percent%20x", "/percent%20x", "/percentQx"].map(status);
    assert_eq!(statuses, [200, 200, 429, 200], "{}", nginx.error_log());
}

#[test]
fn a_path_that_is_no_text_once_decoded_gets_no_rule_and_is_named() {
    // Found by users: `/bytes%FF%FE` got the route `^/bytes%[fF][fF]%[fF][eE]$`,
    // which nginx (reading `$uri` decoded, the bytes 0xFF 0xFE) never
    // matched, and a raw byte 0xFF a route of U+FFFD, which no request holds.
    let mut lines = Vec::new();
    for minute in 0..10 {
        for c in 0..100 {
            let client = format!("10.0.1.{c}");
            let t = minute * 60 + c % 60;
            lines.extend(line(&client, t, "GET", "/bytes%FF%FE").into_bytes());
            lines.extend(
                line(&client, t, "GET", "/raw_z")
                    .replace('_', "\u{1}")
                    .into_bytes(),
            );
            lines.extend(line(&client, t, "GET", "/caf%C3%A9").into_bytes());
        }
    }
    let raw = lines
        .iter()
        .map(|&b| if b == 1 { 0xff } else { b })
        .collect::<Vec<u8>>();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    std::fs::write(&log, raw).unwrap();
    let (_, text) = written_policy(&log, &[]);
    assert!(
        text.contains("# No rule for 2 endpoint(s) with a recommendation of their own"),
        "{text}"
    );
    assert!(text.contains("#   GET /bytes%FF%FE\n"), "{text}");
    let written: toml::Table = toml::from_str(&text).unwrap();
    let routes: Vec<&str> = (written["rule"].as_array().unwrap().iter())
        .filter_map(|r| r.get("route").and_then(|r| r.as_str()))
        .collect();
    assert_eq!(routes, ["^/caf(?:%[cC]3%[aA]9|é)$"], "{text}");
}
