//! End-to-end tests of `rlctl generate`: the bundled fixtures are exactly what
//! their documented commands produce.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use flate2::read::GzDecoder;

use crate::support::rlctl;

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

/// The file's bytes, decompressed when its name ends in `.gz`.
fn contents(path: &Path) -> Vec<u8> {
    let raw = fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|ext| ext == "gz") {
        let mut plain = Vec::new();
        GzDecoder::new(&raw[..]).read_to_end(&mut plain).unwrap();
        plain
    } else {
        raw
    }
}

/// Splits a shell command line on spaces, honouring single quotes.
fn shell_words(line: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut in_word = false;
    let mut quoted = false;
    for c in line.chars() {
        if c == ' ' && !quoted {
            in_word = false;
            continue;
        }
        if !in_word {
            words.push(String::new());
            in_word = true;
        }
        if c == '\'' {
            quoted = !quoted;
        } else {
            words.last_mut().expect("a word was started").push(c);
        }
    }
    words
}

/// Runs the `rlctl generate ... -o fixtures/NAME` command that fixtures/README.md
/// documents for NAME, writing to a temporary file instead, and checks that the
/// output equals the committed fixture.
fn assert_fixture_reproduces(name: &str) {
    let readme = fs::read_to_string(repo_path("fixtures/README.md")).unwrap();
    let target = format!("fixtures/{name}");
    let line = readme
        .lines()
        .find(|l| l.starts_with("rlctl generate ") && l.ends_with(&format!("-o {target}")))
        .unwrap_or_else(|| panic!("fixtures/README.md has no command for {target}"));
    let mut args = shell_words(line);
    assert_eq!(args.drain(..1).collect::<Vec<_>>(), ["rlctl"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(name);
    *args.last_mut().unwrap() = out.to_string_lossy().into_owned();
    rlctl().args(&args).assert().success();
    let (fresh, committed) = (contents(&out), contents(&repo_path(&target)));
    assert!(!committed.is_empty());
    assert!(
        fresh == committed,
        "{target} differs from `{line}` ({} vs {} bytes): regenerate it",
        committed.len(),
        fresh.len()
    );
}

#[test]
fn generate_reproduces_bundled_fixture() {
    assert_fixture_reproduces("access.log.gz");
}

#[test]
fn generate_reproduces_json_fixture() {
    assert_fixture_reproduces("access.json.log");
}

#[test]
fn generate_reproduces_msec_fixture() {
    assert_fixture_reproduces("msec.log");
}

#[test]
fn generate_writes_exactly_the_requested_lines_to_stdout() {
    let output = rlctl()
        .args([
            "generate",
            "--clients",
            "30",
            "--lines",
            "2500",
            "--seed",
            "9",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 2500);
    assert!(
        text.lines()
            .all(|l| l.contains(" [05/Jan/2026:") && l.contains(" HTTP/1.1\" "))
    );
}

#[test]
fn generate_json_lines_parse_and_are_time_ordered() {
    let output = rlctl()
        .args([
            "generate",
            "--clients",
            "8",
            "--duration",
            "2m",
            "--format",
            "json",
        ])
        .args(["--start", "2025-12-31T23:59:00Z"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let times: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["status"].is_u64() && v["http_x_forwarded_for"].is_string());
            v["time"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(times.len() > 100);
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(times[0].starts_with("2025-12-31T23:59:") && times[0].ends_with('Z'));
    assert!(times.last().unwrap().starts_with("2026-01-01T00:00:"));
}

#[test]
fn generate_rejects_bad_flags_with_usage_errors() {
    let cases: [(&[&str], &str); 6] = [
        (
            &["--format", "$remote_addr $upstream_addr"],
            "$upstream_addr",
        ),
        (&["--format", "common"], "unknown format"),
        (&["--clients", "3"], "at least 6"),
        (&["--start", "2026-01-05"], "YYYY-MM-DDTHH:MM:SSZ"),
        (&["--time-offset", "-5"], "+HHMM"),
        (
            &["--lines", "10", "--duration", "1m"],
            "cannot be used with",
        ),
    ];
    for (args, message) in cases {
        let output = rlctl().arg("generate").args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn generate_shape_flags_are_reproducible_and_opt_in() {
    let run = |args: &[&str]| {
        let output = rlctl()
            .args(["generate", "--lines", "3000", "--clients", "30"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}");
        output.stdout
    };
    let plain = run(&[]);
    let shaped: &[&str] = &[
        "--distinct-paths",
        "500",
        "--scanners",
        "2",
        "--shuffle",
        "--servers",
        "3",
    ];
    let first = run(shaped);
    assert_eq!(first, run(shaped));
    assert_ne!(first, plain);
    assert_eq!(first.iter().filter(|&&b| b == b'\n').count(), 3000);
    for bad in [&["--distinct-paths", "0"][..], &["--servers", "0"]] {
        let output = rlctl().arg("generate").args(bad).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{bad:?}");
    }
}
