//! End-to-end tests of `rlctl analyze` that data files cannot express: binary
//! input (gzip, zstd, invalid UTF-8, huge lines), files that cannot be read,
//! stdin, written side outputs, JSON snapshots; third-party logs in
//! [`realdata`].

use std::io::Write;
use std::path::{Path, PathBuf};

use predicates::str::contains;

use crate::support::{json_of_success, rlctl, rlctl_path, success};

const LINE: &str =
    "10.0.0.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\n";

fn json_of(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("stdout is JSON")
}

fn analyze_json(args: &[&str]) -> serde_json::Value {
    json_of_success(
        rlctl()
            .arg("analyze")
            .args(["-q", "--format", "json"])
            .args(args),
    )
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn gzip_zstd_and_rotated_files_in_any_order() {
    let dir = tempfile::tempdir().unwrap();
    let old = LINE.replace("00:00:00", "00:00:01");
    let gz = write(dir.path(), "access.log.2.gz", &gzip(old.as_bytes()));
    let zst = write(
        dir.path(),
        "access.log.1.zst",
        &zstd::encode_all(LINE.replace("/a", "/b").as_bytes(), 1).unwrap(),
    );
    let plain = write(dir.path(), "access.log", LINE.as_bytes());
    let json = analyze_json(&[
        plain.to_str().unwrap(),
        gz.to_str().unwrap(),
        zst.to_str().unwrap(),
    ]);
    assert_eq!(json["input"]["lines"], 3);
    assert_eq!(json["input"]["files"][1]["compression"], "gzip");
    assert_eq!(json["input"]["files"][2]["compression"], "zstd");
    assert_eq!(json["overall"]["per_second"]["max"], 2);
    assert_eq!(json["input"]["first_ts"], "2026-01-05T00:00:00.000Z");
}

#[test]
fn concatenated_gzip_members_are_all_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = gzip(LINE.as_bytes());
    bytes.extend(gzip(LINE.as_bytes()));
    let path = write(dir.path(), "two.gz", &bytes);
    assert_eq!(
        analyze_json(&[path.to_str().unwrap()])["input"]["parsed"],
        2
    );
}

#[test]
fn zero_bytes_after_the_last_gzip_member_end_the_input_and_other_bytes_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let mut padded = gzip(LINE.as_bytes());
    padded.extend(gzip(LINE.as_bytes()));
    padded.extend([0u8; 4096]);
    let path = write(dir.path(), "padded.gz", &padded);
    assert_eq!(
        analyze_json(&[path.to_str().unwrap()])["input"]["parsed"],
        2
    );
    // Anything but zeros after the members is an error that says so (not a
    // stream cut short), before the zeros or after them. Found by review: a
    // few bytes of garbage and then zeros were taken for padding.
    for (name, tail) in [
        (
            "zeros-then-garbage.gz",
            [&[0u8; 64][..], &b"garbage".repeat(10)].concat(),
        ),
        (
            "garbage-then-zeros.gz",
            [&b"garbage"[..], &[0u8; 64]].concat(),
        ),
        ("garbage.gz", b"x".to_vec()),
        // Found by review: a first byte of gzip's magic was taken for a member.
        ("magic-byte-then-garbage.gz", b"\x1f\x00garbage".to_vec()),
    ] {
        let path = write(dir.path(), name, &[gzip(LINE.as_bytes()), tail].concat());
        rlctl()
            .args(["analyze", "-q"])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(contains("after line 1: bytes after the last gzip member"))
            .stderr(contains("are not gzip"));
    }
    // A member after zeros is not read by GNU gzip either: the error says
    // to take the zeros out, not to cut the member off.
    let path = write(
        dir.path(),
        "member-after-zeros.gz",
        &[gzip(LINE.as_bytes()), vec![0; 7], gzip(LINE.as_bytes())].concat(),
    );
    rlctl()
        .args(["analyze", "-q"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(contains("a gzip member follows 7 zero bytes"));
}

#[test]
fn truncated_gzip_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..20_000)
        .map(|i| LINE.replace("/a ", &format!("/a/{} ", i * 7919 % 100_003)))
        .collect();
    let full = gzip(lines.as_bytes());
    let cut = &full[..full.len() / 2];
    let path = write(dir.path(), "cut.gz", cut);
    // The whole lines a decoder gets out of the cut file before it fails.
    let mut decoded = Vec::new();
    let failure = std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(cut), &mut decoded);
    assert!(failure.is_err());
    let whole = decoded.iter().filter(|&&b| b == b'\n').count();
    assert!(whole > 1000, "{whole}");
    // Found by review: the line counted the lines of the files before it,
    // and the lines decoded before the error were not counted at all.
    let before = write(dir.path(), "before.log", LINE.repeat(10).as_bytes());
    for inputs in [vec![&path], vec![&before, &path]] {
        rlctl()
            .arg("analyze")
            .args(inputs)
            .assert()
            .code(2)
            .stderr(contains(format!(
                "cannot read {} after line {whole} (is the compressed file truncated?): ",
                path.display()
            )));
    }
}

#[test]
fn stdin_is_read_with_a_dash() {
    let out = rlctl()
        .args(["analyze", "-q", "--format", "json", "-"])
        .write_stdin(LINE.repeat(3))
        .output()
        .unwrap();
    assert!(out.status.success());
    let json = json_of(&out.stdout);
    assert_eq!(json["input"]["files"][0]["name"], "<stdin>");
    assert_eq!(json["input"]["parsed"], 3);
}

#[test]
fn missing_files_and_directories_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    rlctl()
        .args(["analyze", "/nonexistent/access.log"])
        .assert()
        .code(2)
        .stderr(contains("cannot open /nonexistent/access.log"));
    rlctl()
        .args(["analyze", dir.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(contains("is a directory"));
    rlctl()
        .args(["analyze"])
        .assert()
        .code(2)
        .stderr(contains("FILE"));
}

#[test]
fn invalid_utf8_and_nul_bytes_are_parsed_and_shown_safely() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes =
        b"10.0.0.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /caf\xe9\x00x HTTP/1.1\" 200 5\n"
            .to_vec();
    bytes.extend(LINE.as_bytes());
    let path = write(dir.path(), "bin.log", &bytes);
    let json = analyze_json(&[path.to_str().unwrap()]);
    assert_eq!(json["input"]["parsed"], 2);
    assert_eq!(json["input"]["invalid_utf8_lines"], 1);
    let out = rlctl()
        .args(["analyze", "-q", "--format", "table", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).expect("table output is UTF-8");
    assert!(text.contains("GET /caf\u{fffd}\\x00x"), "{text}");
}

/// Found by review: each part of the input read in parallel kept its first 5
/// skipped lines, so the report's 10 showed lines 1, 2, 3, 4, 7 and then the
/// next part's, past the first part's later ones.
#[test]
fn the_examples_are_the_first_skipped_lines_across_the_parts_read_in_parallel() {
    let dir = tempfile::tempdir().unwrap();
    let good = "192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"x\"\n";
    let mut text = String::new();
    // 12 bad lines among the first 36, then 6 MB of good lines (more than
    // one part), then more bad lines.
    for n in 1..=36 {
        text.push_str(if n % 3 == 0 { "not a log line\n" } else { good });
    }
    while text.len() < 6 << 20 {
        text.push_str(good);
    }
    for _ in 0..5 {
        text.push_str("not a log line\n");
    }
    let log = write(dir.path(), "a.log", text.as_bytes());
    let json = analyze_json(&["--log-format", "combined", log.to_str().unwrap()]);
    let lines: Vec<String> = json["input"]["examples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let e = e.as_str().unwrap();
            e.split(':').nth(1).unwrap().to_string()
        })
        .collect();
    let expected: Vec<String> = (1..=10).map(|k| (3 * k).to_string()).collect();
    assert_eq!(lines, expected);
}

#[test]
fn a_ten_megabyte_line_is_skipped_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = LINE.as_bytes().to_vec();
    bytes.extend(std::iter::repeat_n(b'x', 10 << 20));
    bytes.push(b'\n');
    bytes.extend(LINE.as_bytes());
    let path = write(dir.path(), "huge.log", &bytes);
    let json = analyze_json(&[path.to_str().unwrap()]);
    assert_eq!(
        (
            json["input"]["lines"].as_u64(),
            json["input"]["parsed"].as_u64()
        ),
        (Some(3), Some(2))
    );
    assert_eq!(
        json["input"]["skipped_by_reason"]["line longer than 1048576 bytes"],
        1
    );
}

#[test]
fn terminal_escapes_in_logs_do_not_reach_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let line = LINE.replace("/a", "/\x1b[2J\x1b]8;;http://evil\x07x");
    let path = write(dir.path(), "esc.log", line.as_bytes());
    let out = rlctl()
        .args(["analyze", "--format", "table", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        !out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b),
        "raw ESC in output"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("\\x1b[2J"));
}

#[test]
fn the_policy_names_the_endpoints_it_has_no_rule_for() {
    // Found by review: endpoints whose names are no path template (a space,
    // a tab) got no rule, and nothing said so.
    let dir = tempfile::tempdir().unwrap();
    let mut lines = String::new();
    for s in (0..3600).step_by(2) {
        for c in 0..20 {
            if (s * 7 + c * 13) % 10 < 5 {
                let path = ["/ok", "/a b", "/x\ty"][(s + c) % 3];
                let line = serde_json::json!({
                    "time": 1_767_571_200 + s,
                    "remote_addr": format!("10.0.0.{c}"),
                    "request_method": "GET",
                    "request_uri": path,
                    "status": 200,
                });
                lines.push_str(&format!("{line}\n"));
            }
        }
    }
    let log = write(dir.path(), "a.json", lines.as_bytes());
    let policy = dir.path().join("policy.toml");
    rlctl()
        .args(["analyze", "-q", "--write-policy", policy.to_str().unwrap()])
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&policy).unwrap();
    let rules = rlctl::policy::Policy::parse(&text, "policy.toml").unwrap();
    let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["global", "get-ok"], "{text}");
    assert!(
        text.contains("# No rule for 2 endpoint(s) with a recommendation of their own")
            && text.contains("#   GET /a b\n")
            && text.contains("#   GET /x\\ty\n"),
        "{text}"
    );
}

#[test]
fn policy_counts_and_output_files_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let log = write(dir.path(), "a.log", LINE.repeat(5).as_bytes());
    let policy = dir.path().join("policy.toml");
    let counts = dir.path().join("counts.csv");
    let parquet = dir.path().join("counts.parquet");
    let report = dir.path().join("report.json");
    rlctl()
        .args([
            "analyze",
            "-q",
            "--algo",
            "gcra",
            "--write-policy",
            policy.to_str().unwrap(),
            "--export-counts",
            counts.to_str().unwrap(),
        ])
        .args(["-o", report.to_str().unwrap(), log.to_str().unwrap()])
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("limit = \"20/1m\"")
            && text.contains("algorithm = \"gcra\"")
            && text.contains("burst = 5"),
        "{text}"
    );
    let rules = rlctl::policy::Policy::parse(&text, "policy.toml").unwrap();
    assert_eq!(rules[0].name, "global");
    assert_eq!(
        std::fs::read_to_string(&counts).unwrap(),
        "client,endpoint,window_start_ms,window_s,count\n10.0.0.1,GET /a,1767571200000,60,5\n"
    );
    assert_eq!(
        json_of(&std::fs::read(&report).unwrap())["overall"]["requests"],
        5
    );
    rlctl()
        .args([
            "analyze",
            "-q",
            "--export-counts",
            parquet.to_str().unwrap(),
            log.to_str().unwrap(),
        ])
        .assert()
        .success();
    assert!(std::fs::read(&parquet).unwrap().starts_with(b"PAR1"));
}

#[test]
fn a_closed_pipe_exits_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..5000)
        .map(|i| LINE.replace("/a", &format!("/p{i}x")))
        .collect();
    let log = write(dir.path(), "many.log", lines.as_bytes());
    let bin = rlctl_path();
    let script = format!(
        "'{}' analyze -q --format table --endpoints 5000 '{}' | head -1",
        bin.display(),
        log.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &format!("set -o pipefail; {script}")])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn json_contract_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..40)
        .map(|i| {
            let client = ["10.0.0.1", "10.0.0.2", "10.0.0.3"][i % 3];
            let path = ["/api/users/7", "/api/search?q=x", "/health"][i % 3 / 2 + i % 2];
            let status = if i % 13 == 0 { 429 } else { 200 };
            format!("{client} - - [05/Jan/2026:00:0{}:{:02} +0000] \"GET {path} HTTP/1.1\" {status} 5 \"-\" \"ua\"\n", i / 20, i % 20 * 2 / 3)
        })
        .collect();
    let log = write(dir.path(), "snap.log", lines.as_bytes());
    let out = rlctl()
        .current_dir(dir.path())
        .args(["analyze", "-q", "--format", "json", "snap.log"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    insta::assert_snapshot!(
        "analyze_json_contract",
        String::from_utf8(out.stdout).unwrap()
    );
    let _ = log;
}

#[test]
fn write_policy_suggests_the_probe_exemption_whatever_endpoints_are_reported() {
    // The bundled fixture has an ELB health check on GET /health every 10 s;
    // /health is not among the five endpoints reported, which must not hide
    // the probe (its profile reads the client's own busiest endpoint).
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/access.log.gz");
    success(
        rlctl()
            .args([
                "analyze",
                "-q",
                "--endpoints",
                "5",
                "--format",
                "json",
                "--write-policy",
            ])
            .arg(&policy)
            .arg(&log),
    );
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("# Exemptions the client profiles suggest: uncomment after review.\n"),
        "{text}"
    );
    assert!(
        text.contains("# [[rule]]\n# name = \"exempt-10-0-190-222\"\n# key = \"ip\"\n# client = \"10.0.190.222\"\n# exempt = true\n"),
        "{text}"
    );
    // Commented out: the policy as written has no exemption.
    let checked = rlctl::policy::Policy::parse_policy(&text, "policy.toml").unwrap();
    assert!(checked.exemptions.is_empty());
    // Uncommented, it is a valid exemption.
    let enabled = text.replace("# [[rule]]\n# name = \"exempt-10-0-190-222\"\n# key = \"ip\"\n# client = \"10.0.190.222\"\n# exempt = true\n", "[[rule]]\nname = \"exempt-10-0-190-222\"\nkey = \"ip\"\nclient = \"10.0.190.222\"\nexempt = true\n");
    let checked = rlctl::policy::Policy::parse_policy(&enabled, "policy.toml").unwrap();
    assert_eq!(
        checked.exemptions[0].client.as_deref(),
        Some("10.0.190.222")
    );
}

#[test]
fn a_suggested_exemption_keeps_a_client_key_with_line_breaks_in_its_comment() {
    // Found by review: a key holding line breaks (a user agent in a JSON
    // log) was written as a multi-line TOML string, whose lines after the
    // first left the comment and were read as a live rule.
    let dir = tempfile::tempdir().unwrap();
    let (log, policy) = (dir.path().join("ua.jsonl"), dir.path().join("p.toml"));
    let injected = "#\n[[rule]]\nname = \"pwn\"\nkey = \"ip\"\nlimit = \"1/1d\"\n#";
    let mut lines = Vec::new();
    for i in 0..120u64 {
        // A probe every 30 s, whose user agent is the attack; apps at random.
        let line = serde_json::json!({"time": 1_767_571_200_000u64 + i * 30_000,
            "remote_addr": "10.9.9.9", "request_method": "GET", "request_uri": "/health",
            "status": 200, "http_user_agent": injected});
        lines.push(line.to_string());
        for app in 0..3u64 {
            let line = serde_json::json!({"time": 1_767_571_200_000u64 + i * 30_000 + (i * 7 + app * 3) % 29 * 1000,
                "remote_addr": format!("192.0.2.{app}"), "request_method": "GET", "request_uri": "/x",
                "status": 200, "http_user_agent": format!("app/{app}")});
            lines.push(line.to_string());
        }
    }
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    success(
        rlctl()
            .args([
                "analyze",
                "-q",
                "--key",
                "field:http_user_agent",
                "--write-policy",
            ])
            .arg(&policy)
            .arg(&log),
    );
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(
        text.contains("# client = \"#\\u000A[[rule]]\\u000Aname = \\\"pwn\\\"\\u000A"),
        "{text}"
    );
    let checked = rlctl::policy::Policy::parse_policy(&text, "p.toml").unwrap();
    let names: Vec<&str> = checked.rules.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["global"], "{text}");
}

#[test]
fn a_scanner_at_a_steady_pace_is_no_probe_and_gets_no_exemption() {
    // Found by review: discovery folded a scanner's 21 paths into one
    // template, so it was also a periodic probe with an exemption suggested.
    let dir = tempfile::tempdir().unwrap();
    let (log, policy) = (dir.path().join("scan.log"), dir.path().join("p.toml"));
    let lines: String = (0..21)
        .map(|i| {
            format!(
                "203.0.113.66 - - [05/Jan/2026:00:00:{:02} +0000] \"GET /probe{i}.php HTTP/1.1\" 404 0 \"-\" \"Nikto\"\n",
                i * 2
            )
        })
        .collect();
    std::fs::write(&log, lines).unwrap();
    let json = json_of(
        &success(
            rlctl()
                .args(["analyze", "--format", "json", "--write-policy"])
                .arg(&policy)
                .arg(&log),
        )
        .stdout,
    );
    let kinds: Vec<&str> = json["profiles"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["scanner"]);
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(!text.contains("exempt"), "{text}");
}

mod policy_rules;
mod realdata;

#[test]
fn the_multiplier_table_stays_under_the_recommendation_when_a_client_is_separated() {
    // Found by review: the table followed the separated clients' table, in
    // their section. The bundled fixture's last 55,240 lines separate one.
    let gz = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/access.log.gz"))
        .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut text).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len() - 55_240..].join("\n") + "\n";
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "tail.log", tail.as_bytes());
    let out = rlctl()
        .args(["analyze", "-q", "--format", "markdown"])
        .arg(&path)
        .output()
        .unwrap();
    let page = String::from_utf8(out.stdout).unwrap();
    let at = |text: &str| page.find(text).unwrap_or_else(|| panic!("{text}:\n{page}"));
    assert!(at("| 4x |") < at("Separated from the baseline"), "{page}");
}
