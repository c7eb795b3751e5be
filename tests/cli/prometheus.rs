//! A real Prometheus scrapes `rlctl watch`: started on 127.0.0.1 with a
//! temporary configuration (one job, the watch's `/metrics` every second) and
//! a temporary storage directory, its query API must return
//! `rlctl_would_reject_total` with the count worked out by hand below.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::free_port;
use crate::support::watch::{Watch, start, wait_for};
use crate::support::{Engine, require};

/// Two clients in one minute under `1/1m` fixed windows per client:
/// 10.0.0.1 sends 5 (1 admitted, 4 would be rejected), 10.0.0.2 sends 1.
const LOG: &str = "\
10.0.0.1 - - [10/Oct/2025:13:55:01 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"
10.0.0.1 - - [10/Oct/2025:13:55:02 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"
10.0.0.2 - - [10/Oct/2025:13:55:03 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\"
10.0.0.1 - - [10/Oct/2025:13:55:04 +0000] \"GET /b HTTP/1.1\" 200 1 \"-\" \"ua\"
10.0.0.1 - - [10/Oct/2025:13:55:05 +0000] \"GET /b HTTP/1.1\" 200 1 \"-\" \"ua\"
10.0.0.1 - - [10/Oct/2025:13:55:06 +0000] \"GET /b HTTP/1.1\" 200 1 \"-\" \"ua\"
";

const POLICY: &str =
    "[[rule]]\nname = \"per-ip\"\nlimit = \"1/1m\"\nalgorithm = \"fixed-window\"\n";

/// The body of `GET path` on 127.0.0.1:`port` (`None` while nothing answers).
fn get(port: u16, path: &str) -> Option<String> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        return Some(body.to_string());
    }
    // Chunked: size line, data, CRLF, until the 0-size chunk.
    let (mut out, mut rest) = (String::new(), body);
    loop {
        let (size, after) = rest.split_once("\r\n")?;
        let size = usize::from_str_radix(size.trim(), 16).ok()?;
        if size == 0 {
            return Some(out);
        }
        out.push_str(after.get(..size)?);
        rest = after.get(size + 2..)?;
    }
}

/// Kills Prometheus when the test ends.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn prometheus_scrapes_the_watch_and_its_query_api_returns_the_rejections() {
    let Some(prometheus) = require(Engine::Prometheus) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let policy = dir.path().join("policy.toml");
    fs::write(&log, LOG).unwrap();
    fs::write(&policy, POLICY).unwrap();
    let watch_port = free_port();
    let _watch: Watch = start(
        &log,
        &policy,
        &["--from-start", "--max-delay", "1s"],
        watch_port,
    );
    wait_for(watch_port, "the log replayed", |m| {
        m.get("rlctl_requests_total{rule=\"per-ip\"}") == Some(&6.0)
    });
    // promtool, which comes with Prometheus, lints the exposition.
    let promtool = prometheus.with_file_name("promtool");
    if promtool.exists() {
        let body = get(watch_port, "/metrics").unwrap();
        let mut lint = Command::new(&promtool)
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        lint.stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let out = lint.wait_with_output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "promtool check metrics: {said}\n{body}"
        );
    }

    let config = dir.path().join("prometheus.yml");
    fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: rlctl\n    scrape_interval: 1s\n    static_configs:\n      - targets: ['127.0.0.1:{watch_port}']\n"
        ),
    )
    .unwrap();
    let port = free_port();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Server(child);

    let deadline = Instant::now() + Duration::from_secs(60);
    let mut last = None;
    while Instant::now() < deadline {
        if let Some(body) = get(port, "/api/v1/query?query=rlctl_would_reject_total") {
            let answer: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let results = answer["data"]["result"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if let Some(sample) = results.first() {
                assert_eq!(answer["status"], "success", "{body}");
                assert_eq!(results.len(), 1, "{body}");
                assert_eq!(sample["metric"]["rule"], "per-ip", "{body}");
                assert_eq!(sample["metric"]["job"], "rlctl", "{body}");
                assert_eq!(sample["value"][1], "4", "{body}");
                return;
            }
            last = Some(body);
        }
        thread::sleep(Duration::from_millis(250));
    }
    panic!("Prometheus never returned rlctl_would_reject_total; last answer: {last:?}");
}
