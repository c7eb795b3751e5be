//! A real HAProxy for integration tests.
//!
//! [`Haproxy::start`] runs the installed haproxy in the foreground (`-db`)
//! inside a fresh temporary directory, with a configuration made of a small
//! `global`/`defaults` head and the caller's sections, listening on a free
//! loopback port; its log goes to stdout (`log stdout format raw`), which is
//! captured in a file that [`Haproxy::read_log`] reads. Dropping the handle
//! kills it. When haproxy is not installed, [`Haproxy::start`] prints a
//! `SKIPPED` notice and returns `None`, unless `RLCTL_REQUIRE_ENGINES` is set,
//! in which case it panics.
//!
//! This module only runs HAProxy; it never decides what a limiter should do.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};
use tempfile::TempDir;

use super::free_port;

use super::nginx::{ScheduledRequest, SentRequest};

/// How long HAProxy may take to start listening.
const STARTUP_DEADLINE: Duration = Duration::from_secs(10);
/// How long HAProxy may take to write the log lines a test expects.
const LOG_DEADLINE: Duration = Duration::from_secs(5);
/// How often to look again while waiting.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// The head of every configuration: one thread (the rate counters read the
/// process-wide tick, which a second thread can move ahead of the date the
/// first one logs), logs to stdout, HTTP mode, short timeouts.
const HEAD: &str = "global
    log stdout format raw local0
    nbthread 1
defaults
    mode http
    log global
    option dontlognull
    timeout connect 5s
    timeout client 5s
    timeout server 5s
";

/// A running HAProxy, killed when dropped.
pub struct Haproxy {
    child: Child,
    dir: TempDir,
    port: u16,
}

impl Haproxy {
    /// Starts HAProxy with `sections` after the head; `{{port}}` in them is
    /// replaced by the free loopback port to bind. Returns `None` when haproxy
    /// is missing; panics with HAProxy's
    /// messages when the configuration is refused or it does not start.
    pub fn start(sections: &str) -> Option<Haproxy> {
        let binary = require_haproxy()?;
        let dir = tempfile::Builder::new()
            .prefix("rlctl-haproxy-")
            .tempdir()
            .expect("create a temporary directory for haproxy");
        let port = free_port();
        let config = format!("{HEAD}{}", sections.replace("{{port}}", &port.to_string()));
        let conf = dir.path().join("haproxy.cfg");
        fs::write(&conf, &config).expect("write haproxy.cfg");
        let check = Command::new(&binary)
            .args(["-c", "-q", "-f"])
            .arg(&conf)
            .output()
            .expect("run haproxy -c");
        assert!(
            check.status.success(),
            "haproxy refuses the configuration:\n{}{}\n{config}",
            String::from_utf8_lossy(&check.stdout),
            String::from_utf8_lossy(&check.stderr)
        );
        let log = fs::File::create(dir.path().join("haproxy.log")).expect("create haproxy.log");
        let stderr = fs::File::create(dir.path().join("stderr.log")).expect("create stderr.log");
        let child = Command::new(&binary)
            .arg("-db")
            .arg("-f")
            .arg(&conf)
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        let mut haproxy = Haproxy { child, dir, port };
        haproxy.wait_until_listening();
        Some(haproxy)
    }

    /// The address HAProxy listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The log once it holds at least `expected_lines` lines, or whatever it
    /// holds when the deadline passes.
    pub fn read_log(&self, expected_lines: usize) -> String {
        let deadline = Instant::now() + LOG_DEADLINE;
        loop {
            let text = fs::read_to_string(self.dir.path().join("haproxy.log")).unwrap_or_default();
            if text.lines().count() >= expected_lines || Instant::now() >= deadline {
                return text;
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + STARTUP_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll haproxy") {
                panic!("haproxy exited ({status}):\n{}", self.stderr());
            }
            if TcpStream::connect(self.addr()).is_ok() {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "haproxy did not listen within {STARTUP_DEADLINE:?}:\n{}",
                self.stderr()
            );
            thread::sleep(POLL_INTERVAL);
        }
    }

    fn stderr(&self) -> String {
        fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default()
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `schedule` to `server` in order, each request at its offset from a
/// common start (late requests go at once), one connection per request with
/// the request written in one segment (`TCP_NODELAY`), so a burst really is
/// back to back.
pub fn send_schedule(
    server: SocketAddr,
    schedule: &[ScheduledRequest],
) -> io::Result<Vec<SentRequest>> {
    let start = Instant::now();
    let mut sent = Vec::with_capacity(schedule.len());
    for request in schedule {
        let due = start + Duration::from_millis(request.offset_ms);
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            thread::sleep(wait);
        }
        let sent_at = start.elapsed();
        let status = get(server, request.source, &request.path)?;
        sent.push(SentRequest { sent_at, status });
    }
    Ok(sent)
}

/// `GET path` from the loopback address `source`; the response's status.
fn get(server: SocketAddr, source: Ipv4Addr, path: &str) -> io::Result<u16> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.bind(&SocketAddr::V4(SocketAddrV4::new(source, 0)).into())?;
    socket.connect_timeout(&server.into(), Duration::from_secs(5))?;
    let mut stream: TcpStream = socket.into();
    stream.set_nodelay(true)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {server}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes())?;
    let mut response = Vec::new();
    stream.take(1 << 16).read_to_end(&mut response)?;
    let head = String::from_utf8_lossy(&response);
    head.split_ascii_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("not HTTP: {head:?}")))
}

/// The haproxy binary, or `None` when it is missing (see [`super::require`]).
fn require_haproxy() -> Option<PathBuf> {
    super::require(super::Engine::Haproxy)
}
