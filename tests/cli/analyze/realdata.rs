//! `rlctl analyze` on the third-party logs of the shared realdata folder
//! (skipped when it is absent): every sample parses and reconciles, each
//! source is detected, a bad line is named by its line number, figures
//! match counts made independently of rlctl, the lines glued two by two
//! (each second newline dropped) give the same figures, and a blog's posts
//! are one endpoint.

use predicates::str::contains;

use super::{analyze_json, write};
use crate::support::{realdata, rlctl};

#[test]
fn realdata_every_sample_parses_and_reconciles() {
    // (file, lines, parsed, clients) as counted independently with grep/awk.
    let expected = [
        ("elastic_examples_apache_logs", 10000, 10000, 1753),
        ("tstack_lnav_logfile_shop_access_log.0", 1000, 1000, 101),
        ("elastic_beats_nginx_access_test.log", 7, 7, 5),
        ("tstack_lnav_logfile_access_log.0", 3, 3, 1),
        ("tstack_lnav_logfile_access_log.1", 1, 1, 1),
        ("tstack_lnav_logfile_bad_access_log.0", 3, 2, 1),
        ("tstack_lnav_logfile_caddy_log.0", 39, 4, 1),
        ("tstack_lnav_logfile_caddy_log.1", 4, 4, 4),
    ];
    for (name, lines, parsed, clients) in expected {
        let Some(path) = realdata(name) else { return };
        let json = analyze_json(&[path.to_str().unwrap()]);
        let got = (
            json["input"]["lines"].as_u64(),
            json["input"]["parsed"].as_u64(),
            json["overall"]["clients"].as_u64(),
        );
        assert_eq!(got, (Some(lines), Some(parsed), Some(clients)), "{name}");
        assert_eq!(
            json["input"]["lines"].as_u64(),
            Some(
                json["input"]["parsed"].as_u64().unwrap()
                    + json["input"]["skipped"].as_u64().unwrap()
            )
        );
    }
}

#[test]
fn realdata_sources_are_detected() {
    // Caddy's access entries among its other messages (and behind a
    // docker-compose prefix) are told apart by their fields; nginx and
    // Apache lines stay combined, address lists included.
    let expected = [
        ("tstack_lnav_logfile_caddy_log.0", "caddy (detected;"),
        ("tstack_lnav_logfile_caddy_log.1", "caddy (detected;"),
        ("elastic_beats_nginx_access_test.log", "combined (detected)"),
        (
            "tstack_lnav_logfile_shop_access_log.0",
            "combined (detected)",
        ),
        ("elastic_examples_apache_logs", "combined (detected)"),
    ];
    for (name, format) in expected {
        let Some(path) = realdata(name) else { return };
        let json = analyze_json(&[path.to_str().unwrap()]);
        let got = json["input"]["files"][0]["format"]
            .as_str()
            .unwrap_or_default();
        assert!(got.starts_with(format), "{name}: {got}");
    }
}

#[test]
fn realdata_blog_posts_are_one_template() {
    // The Apache log's /blog/geekery/ holds about 200 posts, a few with a
    // date or a digit in their names (`keynav-on-xinerama2.html`,
    // `grok-20070915.html`): one parameter position, whose only template of
    // a skeleton is the one that eight or more posts share.
    let Some(path) = realdata("elastic_examples_apache_logs") else {
        return;
    };
    let json = analyze_json(&[path.to_str().unwrap()]);
    // Templates of one path each are listed too when they rename it
    // (`/blog/geekery/:slug/trackback/`): those of many are the posts'.
    let blog: Vec<&str> = (json["templates"].as_array().unwrap().iter())
        .filter(|t| t["distinct_paths"].as_u64() > Some(1))
        .filter_map(|t| t["template"].as_str())
        .filter(|t| t.starts_with("/blog/geekery/"))
        .collect();
    assert_eq!(
        blog,
        ["/blog/geekery/:slug", "/blog/geekery/xdotool-:hash.html"]
    );
}

#[test]
fn realdata_bad_line_is_reported_with_its_line_number() {
    let Some(path) = realdata("tstack_lnav_logfile_bad_access_log.0") else {
        return;
    };
    rlctl()
        .args(["analyze", "--format", "json", path.to_str().unwrap()])
        .assert()
        .success()
        .stderr(contains("bad_access_log.0:2: malformed line"));
    rlctl()
        .args(["analyze", "--strict", path.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("bad_access_log.0:2:"));
}

#[test]
fn realdata_out_of_order_apache_log_matches_an_independent_count() {
    let Some(path) = realdata("elastic_examples_apache_logs") else {
        return;
    };
    let json = analyze_json(&[path.to_str().unwrap()]);
    // Independent count: per (ip, minute) with awk over the raw file (order does not matter).
    let text = std::fs::read_to_string(&path).unwrap();
    let mut counts = std::collections::HashMap::<(String, String), u64>::new();
    for line in text.lines() {
        let ip = line.split(' ').next().unwrap().to_string();
        let minute = line.split('[').nth(1).unwrap()[..17].to_string();
        *counts.entry((ip, minute)).or_default() += 1;
    }
    let max = counts.values().max().copied();
    assert_eq!(json["overall"]["per_window"]["max"].as_u64(), max);
    assert_eq!(
        json["overall"]["per_window"]["samples"].as_u64(),
        Some(counts.len() as u64)
    );
}

#[test]
fn realdata_lines_glued_two_by_two_give_the_same_figures() {
    // Detection reads whole lines: with every line glued, the format is given.
    for (name, format) in [
        ("elastic_examples_apache_logs", "combined"),
        ("tstack_lnav_logfile_shop_access_log.0", "combined"),
        ("elastic_beats_nginx_access_test.log", "combined"),
        ("tstack_lnav_logfile_caddy_log.0", "caddy"),
        ("tstack_lnav_logfile_caddy_log.1", "caddy"),
    ] {
        let Some(path) = realdata(name) else { return };
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let glued: String = lines.chunks(2).map(|pair| pair.concat() + "\n").collect();
        let dir = tempfile::tempdir().unwrap();
        let glued_path = write(dir.path(), name, glued.as_bytes());
        let (mut apart, mut together) = (
            analyze_json(&["--log-format", format, path.to_str().unwrap()]),
            analyze_json(&["--log-format", format, glued_path.to_str().unwrap()]),
        );
        let input = &together["input"];
        assert_eq!(
            input["lines"].as_u64(),
            Some(lines.len().div_ceil(2) as u64),
            "{name}"
        );
        assert_eq!(
            input["glued"].as_u64(),
            Some(lines.len() as u64 / 2),
            "{name}"
        );
        assert_eq!(input["parsed"], apart["input"]["parsed"], "{name}");
        apart["input"] = serde_json::Value::Null;
        together["input"] = serde_json::Value::Null;
        assert_eq!(apart, together, "{name}");
    }
}
