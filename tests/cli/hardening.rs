//! End-to-end hardening: results that depend neither on the number of threads
//! nor on the run, timestamps that cannot exhaust memory, hostile log content
//! ([`hostile`]) and files that go wrong ([`files`]). Each failure is a clear
//! message and exit code 2, never a panic or a partial result.

mod files;
mod hostile;

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

use crate::support::rlctl;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// stdout of a successful run.
fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out.stdout
}

/// A failed run: exit code 2, one `rlctl: error:` line naming `needle`, nothing
/// on stdout, no panic.
fn assert_clear_failure(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rlctl: error:") && stderr.contains(needle),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "partial result on stdout");
    assert!(
        stderr.matches("(os error").count() <= 1,
        "the cause is repeated: {stderr}"
    );
}

#[test]
fn results_do_not_depend_on_threads_or_on_the_run() {
    // 40,000 lines of the bundled log: 7 MB, so two 4 MiB chunks parsed in
    // parallel, and more events than one parallel replay task takes.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let mut lines = String::new();
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(fixture("access.log.gz")).unwrap());
    for line in std::io::BufRead::lines(std::io::BufReader::new(gz)).take(40_000) {
        lines.push_str(&line.unwrap());
        lines.push('\n');
    }
    assert!(lines.len() > 4 << 20);
    std::fs::write(&log, lines).unwrap();
    let run = |threads: &str, args: &[&str]| {
        stdout_of(
            rlctl()
                .env("RAYON_NUM_THREADS", threads)
                .args(args)
                .args(["-q", "--format", "json"])
                .arg(&log),
        )
    };
    for args in [&["analyze"][..], &["simulate", "--algo", "all"][..]] {
        let one = run("1", args);
        let two = run("2", args);
        assert!(!one.is_empty());
        assert!(one == two, "{args:?}: 1 thread and 2 threads differ");
        assert!(run("2", args) == two, "{args:?}: two runs differ");
    }
}

/// The `$msec` format of `fixtures/msec.log`.
const MSEC_FORMAT: &str = r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#;

#[test]
fn a_far_future_timestamp_does_not_exhaust_memory() {
    // Found by review: the report's rejects chart had a point for every minute
    // between the first and the last request, so one line dated in the year
    // 9999 made `rlctl report` allocate hundreds of gigabytes and abort.
    // Epoch times beyond the year 9999 are bad timestamps, skipped and counted.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("far.log");
    let mut lines = String::new();
    for i in 0..30 {
        lines.push_str(&format!(
            "1767571200.{i:03} 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n"
        ));
    }
    lines.push_str("253402300000.000 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n");
    lines.push_str("9000000000000000.000 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n");
    std::fs::write(&log, lines).unwrap();
    for format in ["json", "html", "markdown"] {
        let out = rlctl()
            .args([
                "report",
                "-q",
                "--log-format",
                MSEC_FORMAT,
                "--format",
                format,
            ])
            .args(["--policy"])
            .arg(policy_file(dir.path()))
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}: {}", text(&out.stderr));
        assert!(
            out.stdout.len() < 4 << 20,
            "{format}: {} bytes",
            out.stdout.len()
        );
        if format == "json" {
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let input = &json["analysis"]["input"];
            assert_eq!(
                (&input["parsed"], &input["skipped"]),
                (&31.into(), &1.into())
            );
            assert_eq!(input["last_ts"], "9999-12-31T23:46:40.000Z");
        }
    }
}

fn policy_file(dir: &Path) -> PathBuf {
    let path = dir.join("policy.toml");
    std::fs::write(
        &path,
        "[[rule]]\nname = \"tight\"\nlimit = \"5/1m\"\nalgorithm = \"sliding-log\"\n",
    )
    .unwrap();
    path
}
