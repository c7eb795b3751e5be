//! A real nginx for integration tests, and a small HTTP client to drive it.
//!
//! [`Nginx::start`] runs the installed nginx binary in the foreground (one
//! process, no daemon) inside a fresh temporary directory, listening on a free
//! loopback port; dropping the handle kills it. [`Nginx::check_config`] runs
//! `nginx -t` on an `http {}` snippet. [`http_get`] and [`send_schedule`] send
//! plain HTTP/1.1 requests from chosen loopback source addresses, so nginx sees
//! several distinct clients. When nginx is not installed, both constructors
//! return `None` through [`super::require`] (which reports the skip, or
//! panics when `RLCTL_REQUIRE_ENGINES` is set, as `.ci/run` does in CI).
//!
//! This module only runs nginx; it never decides what a limiter should do.

use std::fs;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Socket, Type};
use tempfile::TempDir;

use super::free_port;

/// How long nginx may take to start listening.
const STARTUP_DEADLINE: Duration = Duration::from_secs(10);
/// How long nginx may take to write the access-log lines a test expects.
const LOG_DEADLINE: Duration = Duration::from_secs(5);
/// How often to look again while waiting for nginx.
const POLL_INTERVAL: Duration = Duration::from_millis(5);
/// Connect, read and write timeout for one test request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
/// How many free ports to try when another process grabs the one we picked.
const PORT_ATTEMPTS: usize = 5;
/// The largest response the client reads.
const MAX_RESPONSE_BYTES: u64 = 1 << 20;

/// A running nginx, killed when dropped.
pub struct Nginx {
    child: Child,
    dir: TempDir,
    port: u16,
}

impl Nginx {
    /// Starts nginx with `config_body` as the body of its `http {}` block.
    ///
    /// The body may use these placeholders: `{{port}}` (the free port to
    /// listen on, with `127.0.0.1`), `{{dir}}` (the temporary directory) and
    /// `{{access_log}}` (the file [`Nginx::read_access_log`] reads). Returns
    /// `None` when nginx is not installed (see [`super::require`]);
    /// panics with nginx's error log when it does not start.
    pub fn start(config_body: &str) -> Option<Nginx> {
        let binary = super::require(super::Engine::Nginx)?;
        let mut failures = Vec::new();
        for _ in 0..PORT_ATTEMPTS {
            match Self::start_on(&binary, config_body, free_port()) {
                Ok(nginx) => return Some(nginx),
                Err(failure) if failure.contains("Address already in use") => {
                    failures.push(failure)
                }
                Err(failure) => panic!("{failure}"),
            }
        }
        panic!("nginx found no free port:\n{}", failures.join("\n"))
    }

    /// Runs `nginx -t` on a minimal configuration whose `http {}` block holds
    /// `snippet`: `Ok` when nginx accepts it, `Err` with nginx's message when
    /// not. Returns `None` when nginx is missing (see [`super::require`]).
    ///
    /// `nginx -t` binds the `listen` addresses, so a `server` in the snippet
    /// should listen on `127.0.0.1:{{port}}` (the placeholders of
    /// [`Nginx::start`] apply).
    pub fn check_config(snippet: &str) -> Option<Result<(), String>> {
        Self::check_config_saying(snippet).map(|r| r.map(|_| ()))
    }

    /// [`Nginx::check_config`], with what nginx said (its warnings) when it
    /// accepts the configuration.
    pub fn check_config_saying(snippet: &str) -> Option<Result<String, String>> {
        let binary = super::require(super::Engine::Nginx)?;
        let dir = temp_dir();
        let snippet = fill_placeholders(snippet, dir.path(), free_port());
        let conf = dir.path().join("nginx.conf");
        fs::write(&conf, main_config(dir.path(), &snippet, false)).expect("write nginx.conf");
        let output = Command::new(&binary)
            .arg("-t")
            .arg("-q")
            .args(prefix_args(dir.path()))
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        Some(if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stderr).into_owned())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).into_owned())
        })
    }

    /// The address nginx listens on.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, self.port))
    }

    /// The access log that `{{access_log}}` names in the configuration.
    pub fn access_log_path(&self) -> PathBuf {
        self.dir.path().join("access.log")
    }

    /// The access log once it holds at least `expected_lines` lines, or
    /// whatever it holds when the deadline passes (the caller's assertions
    /// then show what is missing).
    pub fn read_access_log(&self, expected_lines: usize) -> String {
        let deadline = Instant::now() + LOG_DEADLINE;
        loop {
            let text = fs::read_to_string(self.access_log_path()).unwrap_or_default();
            if text.lines().count() >= expected_lines || Instant::now() >= deadline {
                return text;
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    /// `nginx -s reopen`: the master reopens its log files, as logrotate's
    /// `postrotate` does after renaming them.
    pub fn reopen_logs(&self) {
        let binary =
            super::require(super::Engine::Nginx).expect("nginx is running, so it was found");
        let status = Command::new(&binary)
            .args(prefix_args(self.dir.path()))
            .args(["-s", "reopen"])
            .stdin(Stdio::null())
            .status()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        assert!(
            status.success(),
            "nginx -s reopen: {status}\n{}",
            self.diagnostics()
        );
    }

    /// nginx's error log, for failure messages.
    pub fn error_log(&self) -> String {
        fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default()
    }

    fn start_on(binary: &Path, config_body: &str, port: u16) -> Result<Nginx, String> {
        let dir = temp_dir();
        let body = fill_placeholders(config_body, dir.path(), port);
        let conf = dir.path().join("nginx.conf");
        fs::write(&conf, main_config(dir.path(), &body, true)).expect("write nginx.conf");
        let stderr = fs::File::create(dir.path().join("stderr.log")).expect("create stderr.log");
        let child = Command::new(binary)
            .args(prefix_args(dir.path()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        let mut nginx = Nginx { child, dir, port };
        nginx.wait_until_listening()?;
        Ok(nginx)
    }

    /// Waits until this nginx wrote its pid file (it has bound its sockets by
    /// then) and the port accepts connections.
    fn wait_until_listening(&mut self) -> Result<(), String> {
        let pid_file = self.dir.path().join("nginx.pid");
        let own_pid = self.child.id().to_string();
        let deadline = Instant::now() + STARTUP_DEADLINE;
        loop {
            if let Some(status) = self.child.try_wait().expect("poll nginx") {
                return Err(format!("nginx exited ({status}):\n{}", self.diagnostics()));
            }
            let pid_written = fs::read_to_string(&pid_file).is_ok_and(|pid| pid.trim() == own_pid);
            if pid_written && TcpStream::connect_timeout(&self.addr(), POLL_INTERVAL).is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "nginx did not listen on {} within {STARTUP_DEADLINE:?}:\n{}",
                    self.addr(),
                    self.diagnostics()
                ));
            }
            thread::sleep(POLL_INTERVAL);
        }
    }

    fn diagnostics(&self) -> String {
        let stderr = fs::read_to_string(self.dir.path().join("stderr.log")).unwrap_or_default();
        format!("error.log:\n{}\nstderr:\n{stderr}", self.error_log())
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // master_process is off, so this is the only nginx process.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request of a schedule: when to send it, from where, and what to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduledRequest {
    /// Milliseconds after the schedule starts.
    pub offset_ms: u64,
    /// Loopback source address (127.0.0.X) the request comes from.
    pub source: Ipv4Addr,
    /// Request target, e.g. `/api/items?seq=3`.
    pub path: String,
}

/// What happened to one request of a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentRequest {
    /// When the request actually left, measured from the schedule's start.
    pub sent_at: Duration,
    /// The HTTP status nginx answered with.
    pub status: u16,
}

/// Sends `schedule` to `server` in order, each request at its offset from a
/// common start (late requests go at once; none is skipped), and returns one
/// [`SentRequest`] per scheduled request.
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
        let status = http_get(server, request.source, &request.path)?;
        sent.push(SentRequest { sent_at, status });
    }
    Ok(sent)
}

/// The statuses of `n` requests `GET path` sent one after another to `server`
/// from the loopback address 127.0.0.`client` (see [`http_get`]).
pub fn statuses_of(server: SocketAddr, client: u8, path: &str, n: usize) -> Vec<u16> {
    (0..n)
        .map(|_| http_get(server, Ipv4Addr::new(127, 0, 0, client), path).unwrap())
        .collect()
}

/// Sends `GET path` (HTTP/1.1, `Connection: close`) to `server` from the
/// loopback address `source`, reads the whole response and returns its
/// status code.
pub fn http_get(server: SocketAddr, source: Ipv4Addr, path: &str) -> io::Result<u16> {
    http_get_with(server, source, path, "")
}

/// [`http_get`] with more header lines (`headers`: each ending in `\r\n`).
pub fn http_get_with(
    server: SocketAddr,
    source: Ipv4Addr,
    path: &str,
    headers: &str,
) -> io::Result<u16> {
    exchange(server, source, &format!("GET {path} HTTP/1.1"), headers)
}

/// Sends `request_line` as it is (`GET` alone, say), with [`http_get`]'s
/// headers, and returns the response's status code.
pub fn status_of_request_line(
    server: SocketAddr,
    source: Ipv4Addr,
    request_line: &str,
) -> io::Result<u16> {
    exchange(server, source, request_line, "")
}

/// Sends `request_line` and the headers; the response's status code.
fn exchange(
    server: SocketAddr,
    source: Ipv4Addr,
    request_line: &str,
    headers: &str,
) -> io::Result<u16> {
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.bind(&SocketAddr::V4(SocketAddrV4::new(source, 0)).into())?;
    socket.connect_timeout(&server.into(), REQUEST_TIMEOUT)?;
    let mut stream: TcpStream = socket.into();
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    write!(
        stream,
        "{request_line}\r\nHost: {server}\r\nUser-Agent: rlctl-tests\r\n{headers}Connection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.take(MAX_RESPONSE_BYTES).read_to_end(&mut response)?;
    parse_status(&response).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "not an HTTP response: {:?}",
                String::from_utf8_lossy(&response)
            ),
        )
    })
}

/// The status code of an `HTTP/1.x NNN ...` status line.
fn parse_status(response: &[u8]) -> Option<u16> {
    let line = response.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_ascii_whitespace();
    words
        .next()
        .filter(|version| version.starts_with("HTTP/1."))?;
    words.next()?.parse().ok()
}

fn temp_dir() -> TempDir {
    tempfile::Builder::new()
        .prefix("rlctl-nginx-")
        .tempdir()
        .expect("create a temporary directory for nginx")
}

/// `-p` (prefix), `-c` (configuration) and `-e` (startup error log), all in `dir`.
fn prefix_args(dir: &Path) -> Vec<PathBuf> {
    vec![
        "-p".into(),
        dir.join(""),
        "-c".into(),
        dir.join("nginx.conf"),
        "-e".into(),
        dir.join("error.log"),
    ]
}

fn fill_placeholders(body: &str, dir: &Path, port: u16) -> String {
    let filled = body
        .replace("{{port}}", &port.to_string())
        .replace(
            "{{access_log}}",
            &dir.join("access.log").display().to_string(),
        )
        .replace("{{dir}}", &dir.display().to_string());
    assert!(
        !filled.contains("{{"),
        "unknown placeholder in nginx config (known: {{{{port}}}}, {{{{dir}}}}, {{{{access_log}}}}):\n{filled}"
    );
    filled
}

/// The whole nginx.conf: one foreground process whose every file lives in
/// `dir`, with `http_body` inside `http {}`. `foreground` adds the directives
/// only a running server needs.
fn main_config(dir: &Path, http_body: &str, foreground: bool) -> String {
    let dir = dir.display();
    let run = if foreground {
        "daemon off;\nmaster_process off;\n"
    } else {
        ""
    };
    format!(
        "{run}worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log notice;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    default_type text/plain;
    access_log {dir}/access.log combined;
{http_body}
}}
"
    )
}

#[test]
fn parse_status_reads_the_status_line() {
    assert_eq!(
        parse_status(b"HTTP/1.1 429 Too Many Requests\r\n\r\n"),
        Some(429)
    );
    assert_eq!(parse_status(b"HTTP/1.0 200 OK\r\n"), Some(200));
    assert_eq!(parse_status(b"SSH-2.0-OpenSSH\r\n"), None);
    assert_eq!(parse_status(b""), None);
}
