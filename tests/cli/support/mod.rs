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

use std::path::PathBuf;

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
