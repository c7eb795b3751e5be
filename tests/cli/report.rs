//! End-to-end tests of `rlctl report`: gates and exit codes, every format (with
//! snapshots), determinism, hostile log content, and `$GITHUB_STEP_SUMMARY`.

use std::path::{Path, PathBuf};

use crate::support::rlctl;

const MSEC_FORMAT: &str = r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/msec.log")
}

fn report(args: &[&str]) -> std::process::Output {
    report_on(&fixture(), args)
}

/// `rlctl report -q` of the `$msec` log at `log`.
pub(crate) fn report_on(log: &Path, args: &[&str]) -> std::process::Output {
    rlctl()
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["report", "-q", "--log-format", MSEC_FORMAT])
        .args(args)
        .arg(log)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn gates_pass_and_fail_with_exit_codes() {
    let pass = report(&[
        "--max-reject-rate",
        "100%",
        "--max-clients-rejected",
        "100%",
    ]);
    assert_eq!(pass.status.code(), Some(0), "{}", text(&pass.stderr));
    assert!(text(&pass.stdout).starts_with("## rlctl report: PASS"));

    // Half the usual limit: some requests are rejected.
    let fail = report(&["--multiplier", "0.5", "--max-reject-rate", "0%"]);
    assert_eq!(fail.status.code(), Some(1), "{}", text(&fail.stderr));
    let first = text(&fail.stdout).lines().next().unwrap().to_string();
    assert!(
        first.starts_with("## rlctl report: FAIL: rule \\`global\\`: rejects"),
        "{first}"
    );
    assert!(text(&fail.stderr).contains("rlctl report: FAIL: rule `global`"));

    let none = report(&[]);
    assert_eq!(none.status.code(), Some(0));
    assert!(text(&none.stdout).starts_with("## rlctl report: PASS (no gates)"));
}

#[test]
fn a_rule_that_applies_to_no_request_says_so_in_every_format() {
    // Found by review: only stderr said so; the Markdown, JUnit and JSON of
    // a pull request showed `0 of 0, within`.
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(
        &policy,
        "[[rule]]\nname='nothing'\nroute='^/never$'\nlimit='1/1m'\n",
    )
    .unwrap();
    for format in ["markdown", "junit", "json"] {
        let mut args = vec!["--max-reject-rate", "1%", "--format", format, "--policy"];
        args.push(policy.to_str().unwrap());
        let out = report_on(&fixture(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains(
                "applied to no request, so nothing to judge against --max-reject-rate 1%"
            ),
            "{format}: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn flagged_clients_gate() {
    let out = report(&["--fail-on-flagged", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let flagged = json["analysis"]["recommendation"]["flagged_count"]
        .as_u64()
        .unwrap();
    assert_eq!(out.status.code(), Some(if flagged > 0 { 1 } else { 0 }));
    assert_eq!(json["gates"][0]["gate"], "fail_on_flagged");
    assert_eq!(json["passed"], flagged == 0);
}

#[test]
fn junit_is_valid_xml_with_a_case_per_rule() {
    let out = report(&[
        "--format",
        "junit",
        "--multiplier",
        "0.5",
        "--max-reject-rate",
        "0%",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let xml = text(&out.stdout);
    let doc = roxmltree::Document::parse(&xml).expect("valid XML");
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let json: serde_json::Value =
        serde_json::from_slice(&report(&["--format", "json"]).stdout).unwrap();
    assert_eq!(
        cases.len(),
        json["policy"]["rules"].as_array().unwrap().len()
    );
    assert_eq!(cases[0].attribute("name"), Some("global"));
    assert!(cases[0].children().any(|c| c.has_tag_name("failure")));
}

#[test]
fn outputs_are_deterministic_and_stamped_only_on_request() {
    for format in ["json", "markdown", "html", "junit"] {
        let a = report(&["--format", format]).stdout;
        let b = report(&["--format", format]).stdout;
        assert_eq!(a, b, "{format} differs between runs");
    }
    let stamped = report(&["--format", "json", "--stamp"]);
    let json: serde_json::Value = serde_json::from_slice(&stamped.stdout).unwrap();
    assert!(
        json["generated_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let plain: serde_json::Value =
        serde_json::from_slice(&report(&["--format", "json"]).stdout).unwrap();
    assert!(plain.get("generated_at").is_none());
}

#[test]
fn several_outputs_in_one_run_and_the_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let json = dir.path().join("r.json");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = rlctl()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["report", "-q", "--log-format", MSEC_FORMAT, "--export-html"])
        .arg(&html)
        .arg("--export-json")
        .arg(&json)
        .arg(fixture())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(text(&out.stdout).starts_with("## rlctl report"));
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    let _: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert!(
        appended.starts_with("earlier step\n## rlctl report"),
        "{appended}"
    );
    // With the report in a file, `--export-json -` takes stdout; without
    // -o it takes stdout in the report's place (stderr says so: a case file).
    let markdown = dir.path().join("r.md");
    let to_stdout = report(&["-o", markdown.to_str().unwrap(), "--export-json", "-"]);
    let _: serde_json::Value =
        serde_json::from_slice(&to_stdout.stdout).expect("`--export-json -` takes stdout");
    assert!(text(&std::fs::read(&markdown).unwrap()).starts_with("## rlctl report"));
    let in_place = report(&["--export-json", "-"]);
    let _: serde_json::Value =
        serde_json::from_slice(&in_place.stdout).expect("`--export-json -` takes stdout");
}

#[test]
fn a_policy_file_is_judged_rule_by_rule() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("p.toml");
    std::fs::write(
        &policy,
        "[[rule]]\nname = \"tight\"\nlimit = \"2/1m\"\nalgorithm = \"sliding-log\"\n",
    )
    .unwrap();
    let out = report(&[
        "--format",
        "json",
        "--policy",
        policy.to_str().unwrap(),
        "--max-reject-rate",
        "5%",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["policy"]["rules"][0]["rule"], "tight");
    assert_eq!(json["policy"]["rules"][0]["algo"], "sliding-log");
    assert_eq!(json["side_by_side"].as_array().unwrap().len(), 6);
    assert!(
        json["verdict"]
            .as_str()
            .unwrap()
            .starts_with("FAIL: rule `tight`")
    );
}

#[test]
fn a_report_that_cannot_be_written_shows_no_verdict_before_its_error() {
    // Found by review: "rlctl report: PASS" came first, then the error.
    let out = report(&["-o", "/nonexistent-dir/report.md"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot write the report"), "{stderr}");
    assert!(
        !stderr.contains("PASS") && !stderr.contains("FAIL"),
        "{stderr}"
    );
}

#[test]
fn a_path_of_a_megabyte_leaves_the_markdown_report_comment_sized() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("long.log");
    let path = format!("/{}", "a|<".repeat(300_000));
    let lines: String = (0..3)
        .map(|i| format!("1767571200.{i:03} 10.0.0.1 \"GET {path}{i} HTTP/1.1\" 200 0.001 \"-\"\n"))
        .collect();
    std::fs::write(&log, lines).unwrap();
    let out = report_on(&log, &["--format", "markdown"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let markdown = text(&out.stdout);
    assert!(markdown.len() < 65_536, "{} bytes", markdown.len());
    assert!(markdown.contains("more characters)"));

    // Found by review: a path that many clients ask for gets a rule of its
    // own, named after it, and the rule's name was whole in the burst
    // conventions' paragraph and in the verdict heading.
    let path = format!("/{}", "a".repeat(100_000));
    let lines: String = (0..1200)
        .map(|i| {
            format!(
                "{}.000 10.0.0.{} \"GET {path} HTTP/1.1\" 200 0.001 \"-\"\n",
                1_767_571_200 + (i % 60) * 60 + i / 60,
                i / 60
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    let out = report_on(&log, &["--format", "markdown", "--max-reject-rate", "0%"]);
    let markdown = text(&out.stdout);
    assert!(markdown.len() < 65_536, "{} bytes", markdown.len());
    assert!(markdown.lines().all(|l| l.chars().count() < 2_000));
}

#[test]
fn hostile_log_content_is_inert_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("evil.log");
    let paths = [
        "/<script>alert(1)</script>",
        "/a|b`c`",
        "/x\x1b[2J\x1b]8;;http://evil\x07y",
        "/=HYPERLINK(1)",
        // Hidden characters, in the charts' labels too (found by review).
        "/a\u{ad}b\u{200b}c\u{202e}d\u{2066}e",
    ];
    let lines: String = (0..50)
        .map(|i| {
            let user = ["<b>bob</b>", "=cmd|'/c calc'!A1", "eve`s", "-"][i % 4];
            format!(
                "1767571200.{:03} 10.0.0.{} \"GET {} HTTP/1.1\" 200 0.001 \"{user}\"\n",
                i * 7,
                i % 3,
                paths[i % 5]
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    let run = |format: &str| {
        let out = report_on(&log, &["--key", "ip+user", "--format", format]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(!out.stdout.contains(&0x1b), "{format} carries a raw ESC");
        text(&out.stdout)
    };
    let html = run("html");
    assert!(
        !html.contains("<script>") && !html.contains("<b>bob"),
        "raw markup in HTML"
    );
    assert!(html.contains("&lt;script&gt;"));
    let hidden = ['\u{ad}', '\u{200b}', '\u{202e}', '\u{2066}', '\u{fffd}'];
    assert!(!html.contains(hidden), "a hidden character in HTML");
    assert!(html.contains(r"/a\u{ad}b\u{200b}c\u{202e}d\u{2066}e"));
    let markdown = run("markdown");
    assert!(!markdown.contains("<script>") && !markdown.contains("<b>"));
    assert!(
        markdown
            .lines()
            .filter(|l| l.starts_with('|'))
            .all(|l| l.matches(" | ").count() == l.matches(" | ").count())
    );
    assert!(markdown.contains("/a\\|b\\`c\\`"));
    let _: serde_json::Value = serde_json::from_str(&run("json")).expect("valid JSON");
    roxmltree::Document::parse(&run("junit")).expect("valid XML");
}

#[test]
fn snapshots_of_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small.log");
    let lines: String = std::fs::read_to_string(fixture())
        .unwrap()
        .lines()
        .take(400)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&small, lines).unwrap();
    for format in ["markdown", "json", "junit"] {
        let out = rlctl()
            .current_dir(dir.path())
            .args([
                "report",
                "-q",
                "--log-format",
                MSEC_FORMAT,
                // The rendering is under test, not the arrival times
                // (`$msec − $request_time`, the default).
                "--time-of",
                "logged",
                "--multiplier",
                "0.5",
                "--max-reject-rate",
                "1%",
                "--format",
                format,
                "small.log",
            ])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(1),
            "{format}: the 1% gate fails, so report exits 1: {}",
            text(&out.stderr)
        );
        insta::assert_snapshot!(format!("report_{format}"), text(&out.stdout));
    }
}

#[test]
fn report_profiles_equal_analyzes_on_the_bundled_fixture() {
    // The combined fixture has user agents: crawlers can only be profiled by
    // reading them.
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/access.log.gz");
    let json = |command: &str| -> serde_json::Value {
        let out = rlctl()
            .env_remove("GITHUB_STEP_SUMMARY")
            .args([command, "-q", "--format", "json"])
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let analyze = json("analyze");
    let report = json("report");
    let profiles = &analyze["profiles"];
    let kinds: Vec<&str> = profiles
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["findings"].as_array().unwrap())
        .filter_map(|f| f["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"crawler"), "{kinds:?}");
    assert_eq!(&report["analysis"]["profiles"], profiles);
}

/// The rule names of the policy `analyze --write-policy` writes for `log`.
fn written_rules(log: &Path, args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    rlctl()
        .args(["analyze", "-q", "--format", "json", "--write-policy"])
        .arg(&policy)
        .args(args)
        .arg(log)
        .assert()
        .success();
    std::fs::read_to_string(&policy)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|name| name.trim_end_matches('"').to_string())
        .collect()
}

/// The rule names of the policy `report` judges for `log`.
fn judged_rules(log: &Path, args: &[&str]) -> Vec<String> {
    let out = rlctl()
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(["report", "-q", "--format", "json"])
        .args(args)
        .arg(log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    json["policy"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_recommended_policy_is_the_one_analyze_writes() {
    // On the bundled log analyze's policy has a rule for an endpoint ranked
    // 11th to 20th; a report listing its top 10 once left that rule out.
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/access.log.gz");
    let written = written_rules(&log, &[]);
    assert!(written.len() > 10, "{written:?}");
    // Whatever --top lists: 40 once added a rule for the 24th endpoint.
    for top in ["10", "40"] {
        assert_eq!(judged_rules(&log, &["--top", top]), written, "--top {top}");
    }
}

#[test]
fn the_report_discovers_endpoints_as_analyze_does_and_not_with_discover_off() {
    // Half the requests go to blog posts by 4,000 slugs, which only
    // discovery names one endpoint (`GET /blog/:id`, busy enough for a rule).
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let mut seed = 1u64;
    let mut next = |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let lines: String = (0..6000)
        .map(|i| {
            let (m, s) = (i / 10 / 60, i / 10 % 60);
            let client = format!("10.0.{}.{}", next(3), next(40));
            let path = match next(2) {
                0 => format!("/blog/post-{}-{}", next(8), next(500)),
                _ => "/".to_string(),
            };
            format!(
                "{client} - - [05/Jan/2026:00:{m:02}:{s:02} +0000] \"GET {path} HTTP/1.1\" 200 1\n"
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    for discover in ["on", "off"] {
        let args = ["--discover", discover];
        let written = written_rules(&log, &args);
        assert_eq!(
            written.contains(&"get-blog-id".to_string()),
            discover == "on",
            "{written:?}"
        );
        assert_eq!(judged_rules(&log, &args), written, "--discover {discover}");
    }
}

#[test]
fn a_reader_that_stops_early_neither_hides_a_failing_gate_nor_the_other_outputs() {
    // Found by review: `| head -c 10` made a failing report exit 0 and write
    // none of its --export files (a closed stdout ended the run quietly).
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("e.json"), dir.path().join("e.xml"));
    let script = format!(
        "'{}' report -q --log-format '{}' --multiplier 0.5 --max-reject-rate 0% --format html --export-json '{}' --export-junit '{}' '{}' | head -c 10 > /dev/null",
        crate::support::rlctl_path().display(),
        MSEC_FORMAT,
        json.display(),
        junit.display(),
        fixture().display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &format!("set -o pipefail; {script}")])
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("rlctl report: FAIL"),
        "{}",
        text(&out.stderr)
    );
    assert!(json.exists() && junit.exists());
}
