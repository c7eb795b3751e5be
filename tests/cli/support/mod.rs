//! Helpers shared by the integration tests: running the binary, and real engines
//! to compare against.

pub mod nginx;

use assert_cmd::Command;

/// The `rlctl` binary, with colour off.
pub fn rlctl() -> Command {
    let mut cmd = Command::cargo_bin("rlctl").unwrap();
    cmd.env("NO_COLOR", "1");
    cmd
}

/// Runs `cmd`, asserts it succeeded, and parses its stdout as JSON.
pub fn json_of_success(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}
