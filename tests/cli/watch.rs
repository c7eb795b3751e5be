//! `rlctl watch` end to end: a real nginx writes its access log while
//! `rlctl watch` follows it through a rename + `nginx -s reopen` rotation and a
//! copytruncate; at the end `/metrics` counts equal `rlctl simulate` on the
//! same lines, rule by rule, and no line is lost.

use std::fs;
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::free_port;
use crate::support::json_of_success;
use crate::support::nginx::{Nginx, http_get};
use crate::support::rlctl;
use crate::support::watch::{Watch, wait_for};

const FORMAT: &str = r#"$msec $remote_addr "$request" $status"#;

const CONFIG: &str = r#"
    log_format rl '$msec $remote_addr "$request" $status';
    server {
        listen 127.0.0.1:{{port}};
        access_log {{access_log}} rl;
        location / {
            return 200 "ok\n";
        }
    }
"#;

const POLICY: &str = r#"
[[rule]]
name = "global"
limit = "4/1m"
burst = 4
algorithm = "token-bucket"

[[rule]]
name = "api"
route = "^/api/"
limit = "1/10s"
algorithm = "fixed-window"
"#;

/// Sends `n` requests from each of 127.0.0.2..=6, alternating `/api/x` and `/`.
fn traffic(nginx: &Nginx, n: usize) {
    for client in 2..=6u8 {
        for i in 0..n {
            let path = if i % 2 == 0 { "/api/x" } else { "/" };
            let status = http_get(nginx.addr(), Ipv4Addr::new(127, 0, 0, client), path).unwrap();
            assert_eq!(status, 200);
        }
    }
}

fn lines(path: &Path) -> f64 {
    fs::read_to_string(path).unwrap_or_default().lines().count() as f64
}

/// Waits until nginx has written `expected` lines into `paths` together.
fn wait_lines(paths: &[&Path], expected: f64) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let count = || paths.iter().map(|p| lines(p)).sum::<f64>();
    while count() < expected && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(count(), expected, "lines nginx wrote into {paths:?}");
}

#[test]
fn watch_follows_nginx_through_rotations_and_agrees_with_simulate() {
    let Some(nginx) = Nginx::start(CONFIG) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    fs::write(&policy, POLICY).unwrap();
    let log = nginx.access_log_path();
    let rotated = log.with_extension("log.1");
    let copied = log.with_extension("log.2");
    let port = free_port();
    let child = Command::new(crate::support::rlctl_path())
        .arg("watch")
        .arg(&log)
        .arg("--policy")
        .arg(&policy)
        .args([
            "--log-format",
            FORMAT,
            "--max-delay",
            "1s",
            "--format",
            "none",
        ])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _watch = Watch(child);
    let file_key = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
    wait_for(port, "the watch to start", |m| m.contains_key(&file_key));

    traffic(&nginx, 6);
    // Rotation 1: rename, nginx keeps writing to the renamed file, then reopens.
    fs::rename(&log, &rotated).unwrap();
    traffic(&nginx, 2);
    nginx.reopen_logs();
    traffic(&nginx, 6);
    wait_lines(&[&rotated, &log], 70.0);
    wait_for(port, "every line before the copytruncate", |m| {
        m[&file_key] == 70.0
    });
    // Rotation 2: copytruncate (nothing is written between copy and truncate).
    fs::copy(&log, &copied).unwrap();
    fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(0)
        .unwrap();
    traffic(&nginx, 4);

    let total = 5.0 * (6.0 + 2.0 + 6.0 + 4.0);
    wait_lines(&[&rotated, &copied, &log], total);
    let m = wait_for(port, "every request replayed", |m| {
        m[&file_key] == total && m.get("rlctl_requests_total{rule=\"global\"}") == Some(&total)
    });

    let simulated = json_of_success(
        rlctl()
            .arg("simulate")
            .arg(&rotated)
            .arg(&copied)
            .arg(&log)
            .arg("--policy")
            .arg(&policy)
            .args(["--log-format", FORMAT, "--format", "json"]),
    );
    let results = simulated["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        let rule = r["rule"].as_str().unwrap();
        let requests = m[&format!("rlctl_requests_total{{rule=\"{rule}\"}}")];
        let rejected = m[&format!("rlctl_would_reject_total{{rule=\"{rule}\"}}")];
        assert_eq!(requests, r["requests"].as_f64().unwrap(), "{rule} requests");
        assert_eq!(rejected, r["rejected"].as_f64().unwrap(), "{rule} rejected");
        assert!(rejected > 0.0, "{rule}: the policy should reject something");
    }
    let event = |name: &str| {
        m.get(&format!(
            "rlctl_file_events_total{{file=\"{}\",event=\"{name}\"}}",
            log.display()
        ))
    };
    assert_eq!(event("replaced"), Some(&1.0));
    assert_eq!(event("truncated"), Some(&1.0));
    assert_eq!(m["rlctl_lines_late_total"], 0.0);
    assert_eq!(
        m.get("rlctl_clients_seen{rule=\"global\",window=\"1h\"}"),
        Some(&5.0)
    );
}

const LINE: &str =
    "10.0.0.1 - - [10/Oct/2025:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"\n";

fn append(path: &Path, data: &[u8]) {
    fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(data)
        .unwrap();
}

/// A policy of one rule and a log of one line in `dir`: (policy, log).
fn one_line_log(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let policy = dir.join("policy.toml");
    fs::write(&policy, "[[rule]]\nname = \"g\"\nlimit = \"1/1m\"\n").unwrap();
    let log = dir.join("access.log");
    append(&log, LINE.as_bytes());
    (policy, log)
}

/// `command` made a watch of `log` from its start, in the combined format,
/// with `policy`, serving metrics on `port`.
fn watching(mut command: Command, log: &Path, policy: &Path, port: u16) -> Command {
    command
        .arg("watch")
        .arg(log)
        .arg("--policy")
        .arg(policy)
        .args(["--from-start", "--log-format", "combined"])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null());
    command
}

/// rlctl made a watch as [`watching`] says.
fn rlctl_watching(log: &Path, policy: &Path, port: u16) -> Command {
    watching(
        Command::new(crate::support::rlctl_path()),
        log,
        policy,
        port,
    )
}

#[test]
fn a_compressed_log_is_refused_with_a_pointer_to_simulate() {
    // Found by review: watch read gzip's bytes as lines and reported a clean
    // dry run of nothing.
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    fs::write(&policy, "[[rule]]\nname = \"g\"\nlimit = \"1/1m\"\n").unwrap();
    let log = dir.path().join("access.log.gz");
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gzip.write_all(LINE.as_bytes()).unwrap();
    fs::write(&log, gzip.finish().unwrap()).unwrap();
    rlctl()
        .arg("watch")
        .arg(&log)
        .arg("--policy")
        .arg(&policy)
        .args(["--from-start", "--format", "none", "--no-listen"])
        .timeout(Duration::from_secs(30))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("is gzip-compressed"))
        .stderr(predicates::str::contains("rlctl simulate"));
}

#[test]
fn bad_input_while_following_is_counted_and_reported_never_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let (policy, log) = one_line_log(dir.path());
    let port = free_port();
    let child = rlctl_watching(&log, &policy, port)
        .args(["--max-delay", "1s", "--format", "none"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut watch = Watch(child);
    let lines = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
    let readable = format!("rlctl_file_readable{{file=\"{}\"}}", log.display());
    wait_for(port, "the first line", |m| m.get(&lines) == Some(&1.0));

    // Binary garbage, a 10 MB line, then good lines.
    append(&log, b"\x00\x01\xff\xfe garbage \x1b[2J\n");
    append(&log, &vec![b'x'; 10_000_000]);
    append(&log, format!("\n{LINE}{LINE}{LINE}").as_bytes());
    let m = wait_for(port, "every line counted", |m| m.get(&lines) == Some(&6.0));
    assert_eq!(
        m["rlctl_lines_skipped_total{reason=\"line longer than 1048576 bytes\"}"],
        1.0
    );
    let skipped: f64 = m
        .iter()
        .filter(|(k, _)| k.starts_with("rlctl_lines_skipped_total"))
        .map(|(_, v)| v)
        .sum();
    assert_eq!(skipped, 2.0, "{m:#?}");
    wait_for(port, "the good lines replayed", |m| {
        m.get("rlctl_requests_total{rule=\"g\"}") == Some(&4.0)
    });

    // The file becomes a directory: reported, not fatal.
    fs::remove_file(&log).unwrap();
    fs::create_dir(&log).unwrap();
    wait_for(port, "the directory reported", |m| {
        m.get(&readable) == Some(&0.0)
    });
    assert!(
        watch.0.try_wait().unwrap().is_none(),
        "the watch is still running"
    );

    // And a file again.
    fs::remove_dir(&log).unwrap();
    append(&log, format!("{LINE}{LINE}").as_bytes());
    let m = wait_for(port, "the new file followed", |m| {
        m.get(&lines) == Some(&8.0) && m.get(&readable) == Some(&1.0)
    });
    let event = |name: &str| {
        m.get(&format!(
            "rlctl_file_events_total{{file=\"{}\",event=\"{name}\"}}",
            log.display()
        ))
        .copied()
    };
    assert_eq!(event("not_a_file"), Some(1.0));
    assert_eq!(event("replaced"), Some(1.0));
    assert!(watch.0.try_wait().unwrap().is_none());
}

#[test]
fn permission_lost_while_following_is_reported_and_recovered() {
    use std::os::unix::fs::PermissionsExt;
    let Some(setpriv) = crate::support::require(crate::support::Engine::Unprivileged) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (policy, log) = one_line_log(dir.path());
    let port = free_port();
    // As root, file modes apply only without CAP_DAC_OVERRIDE/READ_SEARCH.
    let command = if setpriv.as_os_str().is_empty() {
        Command::new(crate::support::rlctl_path())
    } else {
        let mut c = Command::new(&setpriv);
        c.arg("--bounding-set=-dac_override,-dac_read_search")
            .arg(crate::support::rlctl_path());
        c
    };
    let child = watching(command, &log, &policy, port)
        .args(["--format", "none"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut watch = Watch(child);
    let lines = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
    let readable = format!("rlctl_file_readable{{file=\"{}\"}}", log.display());
    wait_for(port, "the first line", |m| m.get(&lines) == Some(&1.0));
    let mode = |path: &Path, mode: u32| {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap()
    };

    // The mode changes under the open file: it is still read.
    mode(&log, 0o000);
    append(&log, LINE.as_bytes());
    wait_for(port, "a line after chmod 000", |m| {
        m.get(&lines) == Some(&2.0) && m.get(&readable) == Some(&1.0)
    });
    // Rotated, and the new file cannot be opened: reported, not fatal; the
    // rotated-away file is still read to its end.
    fs::rename(&log, log.with_extension("log.1")).unwrap();
    append(&log.with_extension("log.1"), LINE.as_bytes());
    append(&log, format!("{LINE}{LINE}").as_bytes());
    mode(&log, 0o000);
    let m = wait_for(port, "the unreadable file reported", |m| {
        m.get(&readable) == Some(&0.0) && m.get(&lines) == Some(&3.0)
    });
    let unreadable = format!(
        "rlctl_file_events_total{{file=\"{}\",event=\"unreadable\"}}",
        log.display()
    );
    assert_eq!(m.get(&unreadable), Some(&1.0), "{m:#?}");
    assert!(
        watch.0.try_wait().unwrap().is_none(),
        "the watch is still running"
    );
    // Permission back: the new file is followed from its start.
    mode(&log, 0o644);
    wait_for(port, "the new file followed", |m| {
        m.get(&lines) == Some(&5.0)
            && m.get(&readable) == Some(&1.0)
            && m.get("rlctl_requests_total{rule=\"g\"}") == Some(&5.0)
    });
    assert!(watch.0.try_wait().unwrap().is_none());
}

#[test]
fn a_signal_ends_the_watch_with_its_figures_and_leaves_an_open_verdict_failed() {
    // Found by review: SIGINT and SIGTERM killed the watch (exit 130, 143)
    // with nothing written since the last interval.
    let dir = tempfile::tempdir().unwrap();
    let (policy, log) = one_line_log(dir.path());
    let start = |verdict: &[&str]| {
        let port = free_port();
        let child = rlctl_watching(&log, &policy, port)
            .args(["--max-delay", "1s", "--format", "jsonl", "--interval", "1h"])
            .args(verdict)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
        wait_for(port, "the first line", |m| m.get(&lines) == Some(&1.0));
        child
    };
    for (signal, verdict) in [
        ("-INT", &[][..]),
        ("-TERM", &["--until-clients-hit", "50%", "--for", "24h"][..]),
    ] {
        let child = start(verdict);
        let killed = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 1, "{signal}: {stdout}");
        assert!(stdout.contains("\"lines\":1"), "{stdout}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        match verdict.is_empty() {
            true => assert_eq!(out.status.code(), Some(0), "{stderr}"),
            false => {
                assert_eq!(out.status.code(), Some(2), "{stderr}");
                assert!(
                    stderr.contains("stopped (SIGINT or SIGTERM) before the verdict"),
                    "{stderr}"
                );
            }
        }
    }
}

#[test]
fn a_file_in_no_format_is_reported_on_stderr_and_still_followed() {
    // Found by review: 50 lines that told no format ended the whole watch.
    let dir = tempfile::tempdir().unwrap();
    let (policy, log) = one_line_log(dir.path());
    let noise = dir.path().join("worker.log");
    let text: String = (0..55)
        .map(|i| format!("Starting worker {i} ... ok\n"))
        .collect();
    append(&noise, text.as_bytes());
    let port = free_port();
    let child = Command::new(crate::support::rlctl_path())
        .arg("watch")
        .args([&log, &noise])
        .arg("--policy")
        .arg(&policy)
        .args(["--from-start", "--format", "jsonl", "--interval", "1h"])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let undetected = format!(
        "rlctl_file_events_total{{file=\"{}\",event=\"undetected\"}}",
        noise.display()
    );
    let lines = format!("rlctl_lines_total{{file=\"{}\"}}", log.display());
    wait_for(port, "the undetected file reported", |m| {
        m.get(&undetected) == Some(&1.0) && m.get(&lines) == Some(&1.0)
    });
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("cannot detect the log format of"),
        "{stderr}"
    );
    assert!(stderr.contains("worker.log"), "{stderr}");
    assert!(stderr.contains("; still following:"), "{stderr}");
}
