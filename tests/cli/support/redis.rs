//! A real Redis for integration tests, and a minimal RESP client.
//!
//! [`Redis::start`] runs the installed redis-server without persistence, on a
//! Unix socket in a fresh temporary directory (no TCP port); dropping the
//! handle kills it. [`Redis::pipeline`] sends commands pipelined and returns
//! their replies. When redis-server is not installed, [`Redis::start`] prints
//! a `SKIPPED` notice and returns `None`, unless `RLCTL_REQUIRE_ENGINES` is set,
//! in which case it panics.
//!
//! This module only runs Redis; it never decides what a limiter should do.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// How long redis-server may take to open its socket.
const STARTUP_DEADLINE: Duration = Duration::from_secs(10);

/// One RESP reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `:n`
    Integer(i64),
    /// `$len` bulk string or `+` simple string.
    Text(String),
    /// `$-1`
    Nil,
}

/// A running redis-server, killed when dropped.
pub struct Redis {
    child: Child,
    dir: TempDir,
}

impl Redis {
    /// Starts redis-server on a Unix socket; `None` when it is missing.
    pub fn start() -> Option<Redis> {
        let binary = super::require(super::Engine::Redis)?;
        let dir = tempfile::Builder::new()
            .prefix("rlctl-redis-")
            .tempdir()
            .expect("create a temporary directory for redis");
        let child = Command::new(&binary)
            .args(["--port", "0", "--save", "", "--appendonly", "no"])
            .arg("--unixsocket")
            .arg(dir.path().join("redis.sock"))
            .arg("--dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| panic!("cannot run {}: {err}", binary.display()));
        let mut redis = Redis { child, dir };
        let deadline = Instant::now() + STARTUP_DEADLINE;
        while UnixStream::connect(redis.socket()).is_err() {
            if let Some(status) = redis.child.try_wait().expect("poll redis") {
                panic!("redis-server exited ({status})");
            }
            assert!(Instant::now() < deadline, "redis-server did not start");
            thread::sleep(Duration::from_millis(5));
        }
        Some(redis)
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    /// Sends `commands` (each a list of arguments) pipelined on one
    /// connection, in chunks, and returns one reply per command; an error
    /// reply panics with Redis's message.
    pub fn pipeline(&self, commands: &[Vec<String>]) -> Vec<Reply> {
        let stream = UnixStream::connect(self.socket()).expect("connect to redis");
        let mut reader = BufReader::new(stream.try_clone().expect("clone the redis stream"));
        let mut writer = stream;
        let mut replies = Vec::with_capacity(commands.len());
        for chunk in commands.chunks(1000) {
            let mut out = Vec::new();
            for args in chunk {
                out.extend(format!("*{}\r\n", args.len()).bytes());
                for a in args {
                    out.extend(format!("${}\r\n{a}\r\n", a.len()).bytes());
                }
            }
            writer.write_all(&out).expect("write to redis");
            for _ in chunk {
                replies.push(read_reply(&mut reader));
            }
        }
        replies
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_reply(reader: &mut impl BufRead) -> Reply {
    let mut line = String::new();
    reader.read_line(&mut line).expect("read a redis reply");
    let line = line.trim_end_matches("\r\n");
    let (kind, rest) = line.split_at(1.min(line.len()));
    match kind {
        ":" => Reply::Integer(rest.parse().expect("an integer reply")),
        "+" => Reply::Text(rest.to_string()),
        "-" => panic!("redis error: {rest}"),
        "$" if rest == "-1" => Reply::Nil,
        "$" => {
            let len: usize = rest.parse().expect("a bulk length");
            let mut body = vec![0; len + 2];
            reader.read_exact(&mut body).expect("read a bulk reply");
            body.truncate(len);
            Reply::Text(String::from_utf8(body).expect("UTF-8 bulk reply"))
        }
        other => panic!("unexpected redis reply {other:?}{rest}"),
    }
}
