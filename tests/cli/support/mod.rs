//! Helpers shared by the integration tests: running the binary, and real engines
//! to compare against.

pub mod haproxy;
pub mod nginx;
pub mod redis;

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

/// An engine binary: the first of `places`, else `name` on the `PATH`; when
/// none exists, `None` after a visible `SKIPPED` notice, or a panic when
/// `RLCTL_REQUIRE_ENGINES` is set (as CI sets it). `hint` says how to install it.
pub fn find_engine(name: &str, places: &[&str], hint: &str) -> Option<std::path::PathBuf> {
    let fixed = places.iter().map(std::path::PathBuf::from);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(name));
    if let Some(found) = fixed.chain(on_path).find(|p| p.is_file()) {
        return Some(found);
    }
    let test = std::thread::current()
        .name()
        .filter(|name| *name != "main")
        .unwrap_or("this test")
        .to_owned();
    if std::env::var_os("RLCTL_REQUIRE_ENGINES").is_some() {
        panic!("{test}: {name} is not installed and RLCTL_REQUIRE_ENGINES is set ({hint})");
    }
    let notice = format!("SKIPPED {test}: {name} is not installed ({hint})");
    // Captured output only shows with --nocapture, so say it on both streams.
    println!("{notice}");
    eprintln!("{notice}");
    None
}
