//! Helpers shared by the integration tests: the one way to start the binary
//! ([`rlctl`], or [`rlctl_path`] for a shell pipeline), and the one way to
//! find a real engine to compare against ([`require`]).
//!
//! A test that needs an engine (nginx, haproxy, chromium, the Python SQL
//! engines, a tmpfs, the third-party logs) starts with
//! `let Some(nginx) = support::require(Engine::Nginx) else { return };`.
//! Where the engine is missing the test passes having checked nothing, so
//! `require` records it and, when the test binary exits, prints under
//! `cargo test`'s `test result:` line which engines were missing and which
//! tests they left unchecked (captured output would hide a notice printed
//! inside the test). With `RLCTL_REQUIRE_ENGINES` set, as in CI, a missing
//! engine fails the test instead. See [`engines`].

pub mod engines;
pub mod haproxy;
pub mod nginx;
pub mod redis;
pub mod watch;

use std::net::{Ipv4Addr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use assert_cmd::Command;

pub use engines::{Engine, realdata, require};

/// The `rlctl` binary, with colour off.
pub fn rlctl() -> Command {
    let mut cmd = Command::new(rlctl_path());
    cmd.env("NO_COLOR", "1");
    cmd
}

/// Where the `rlctl` binary is, for tests that run it from a shell (pipes,
/// closed standard input, redirections).
pub fn rlctl_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_rlctl"))
}

/// A loopback port free a moment ago that no other test of this run was
/// given. A port the kernel picks (`bind` to port 0) and then releases may be
/// picked again for another test before the first one's server binds it;
/// HAProxy binds with `SO_REUSEPORT`, so two of them then share the port and
/// a test's requests reach the other test's configuration. These ports come
/// from one counter instead, below the kernel's own range (32768 and up), so
/// the servers the tests start never draw the same one.
pub fn free_port() -> u16 {
    const FIRST: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static NEXT: AtomicU32 = AtomicU32::new(0);
    // Runs at the same time (another checkout's tests) start apart.
    let start = std::process::id() * 7919 % SPAN;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = (FIRST + (start + n) % SPAN) as u16;
        if TcpListener::bind((Ipv4Addr::LOCALHOST, port)).is_ok() {
            return port;
        }
        assert!(
            n < SPAN,
            "no free loopback port from {FIRST} to {}",
            FIRST + SPAN
        );
    }
}

/// The end of a comparison of rlctl's reading with a real engine's over
/// `total` drawn inputs: says how many the engine answered 400 (`refused`,
/// by `engine`), asserts that more than `margin` of each kind were drawn, and
/// that none differ (`wrong`, the first 40 shown).
pub fn assert_same_readings(
    engine: &str,
    total: usize,
    refused: usize,
    margin: usize,
    wrong: &[String],
) {
    println!("{total} drawn, {refused} answered 400 by {engine}");
    assert!(
        refused > margin && refused < total - margin,
        "both kinds drawn"
    );
    assert!(
        wrong.is_empty(),
        "{} of {total} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(40)].join("\n")
    );
}

/// Draws from a fixed `seed` (xorshift64, never zero): each call gives a
/// number below its `n`, the same sequence on every run.
pub fn draws(seed: u64) -> impl FnMut(usize) -> usize {
    let mut state = seed;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

/// Runs `cmd` and asserts it succeeded (showing its stderr when not).
pub fn success(cmd: &mut Command) -> std::process::Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs `cmd`, asserts it succeeded, and parses its stdout as JSON.
pub fn json_of_success(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_slice(&success(cmd).stdout).expect("stdout is JSON")
}
