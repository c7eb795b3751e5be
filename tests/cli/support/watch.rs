//! Running `rlctl watch` in a test: a [`Watch`] that is killed however the
//! test ends, a free port for its metrics, a scrape of `/metrics` as
//! `name{labels}` → value, and a wait for a condition on the scrapes.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Child;
use std::thread;
use std::time::{Duration, Instant};

/// Kills the watch when the test ends, however it ends.
pub struct Watch(pub Child);

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The samples of `/metrics` as `name{labels}` → value, or `None` when it
/// does not answer yet.
pub fn scrape(port: u16) -> Option<BTreeMap<String, f64>> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let (_, body) = text.split_once("\r\n\r\n")?;
    Some(
        body.lines()
            .filter(|l| !l.starts_with('#') && !l.is_empty())
            .filter_map(|l| {
                let (name, value) = l.rsplit_once(' ')?;
                Some((name.to_string(), value.parse().ok()?))
            })
            .collect(),
    )
}

/// Waits until `done` holds for a scrape, and returns that scrape.
pub fn wait_for(
    port: u16,
    what: &str,
    done: impl Fn(&BTreeMap<String, f64>) -> bool,
) -> BTreeMap<String, f64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = None;
    while Instant::now() < deadline {
        if let Some(m) = scrape(port) {
            if done(&m) {
                return m;
            }
            last = Some(m);
        }
        thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}; last scrape: {last:#?}");
}

/// Starts `rlctl watch FILE --policy POLICY` with `extra` flags, metrics on
/// `port`, nothing on stdout, and waits until it serves them.
pub fn start(file: &std::path::Path, policy: &std::path::Path, extra: &[&str], port: u16) -> Watch {
    let child = std::process::Command::new(crate::support::rlctl_path())
        .arg("watch")
        .arg(file)
        .arg("--policy")
        .arg(policy)
        .args(extra)
        .args(["--format", "none", "--listen", &format!("127.0.0.1:{port}")])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let watch = Watch(child);
    wait_for(port, "the watch to serve metrics", |_| true);
    watch
}
