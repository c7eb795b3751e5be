//! Files that go wrong: a missing, not-a-directory or unreadable input
//! anywhere in the list, stdin closed or cut mid-line, an output directory that
//! does not exist, and a full disk, which must leave previous outputs intact.

use std::path::Path;

use super::{assert_clear_failure, rlctl, text};
use crate::support::{Engine, require, rlctl_path};

const LINE: &str =
    "10.0.0.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\"\n";

#[test]
fn a_bad_input_anywhere_in_the_list_stops_with_no_partial_result() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.log");
    std::fs::write(&good, LINE.repeat(3)).unwrap();
    // Missing, below a file (ENOTDIR: what an unreadable path gives even to
    // root, for whom permission bits do not deny reading), and a file that
    // opens but fails on read (/proc/self/mem at offset 0 is unmapped: EIO).
    let missing = dir.path().join("missing.log");
    let below_a_file = good.join("x.log");
    let cases: [(&Path, &str); 3] = [
        (&missing, "cannot open"),
        (&below_a_file, "Not a directory"),
        (
            Path::new("/proc/self/mem"),
            "/proc/self/mem: Input/output error",
        ),
    ];
    for (bad, message) in cases {
        for command in ["analyze", "simulate", "report"] {
            let mut cmd = rlctl();
            cmd.args([command, "--format", "json"]);
            if command == "simulate" {
                cmd.args(["--limit", "1/1m"]);
            }
            let out = cmd.arg(&good).arg(bad).output().unwrap();
            assert_clear_failure(&out, message);
        }
    }
}

#[test]
fn stdin_closed_early_or_cut_mid_line() {
    // A writer that closes at once, and a standard input that is not even open
    // (`<&-`): an empty log or a clear error, never a panic.
    let bin = rlctl_path();
    for redirect in ["</dev/null", "<&-"] {
        let out = std::process::Command::new("bash")
            .args([
                "-c",
                &format!("'{}' analyze --format json - {redirect}", bin.display()),
            ])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{redirect}: {stderr}");
        match out.status.code() {
            Some(0) => assert!(stderr.contains("0 lines"), "{redirect}: {stderr}"),
            Some(2) => assert!(stderr.contains("<stdin>"), "{redirect}: {stderr}"),
            other => panic!("{redirect}: exit {other:?}: {stderr}"),
        }
    }
    // A writer that stops in the middle of a line: the cut line is read and
    // counted (skipped as malformed), never silently dropped.
    let cut = &LINE[..LINE.len() / 2];
    let out = rlctl()
        .args(["analyze", "-q", "--format", "json", "-"])
        .write_stdin(format!("{}{cut}", LINE.repeat(2)))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            &json["input"]["lines"],
            &json["input"]["parsed"],
            &json["input"]["skipped"]
        ),
        (&3.into(), &2.into(), &1.into())
    );
}

#[test]
fn writing_into_a_missing_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(&log, LINE.repeat(3)).unwrap();
    let missing = dir.path().join("no/such/dir");
    for (command, flag, name) in [
        ("analyze", "-o", "out.json"),
        ("analyze", "--export-counts", "out.csv"),
        ("analyze", "--write-policy", "out.toml"),
        ("simulate", "--decisions", "out.csv"),
        ("simulate", "-o", "out.json"),
        ("report", "-o", "out.md"),
        ("report", "--export-junit", "out.xml"),
    ] {
        let mut cmd = rlctl();
        cmd.args([command, "-q", flag]).arg(missing.join(name));
        if command == "simulate" {
            cmd.args(["--limit", "1/1m"]);
        }
        let out = cmd.arg(&log).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command} {flag}: {stderr}");
        assert!(
            stderr.contains("No such file or directory") && stderr.contains(name),
            "{command} {flag}: {stderr}"
        );
    }
    assert!(!dir.path().join("no").exists());
}

/// A 1 MiB tmpfs, unmounted on drop; `None` when this process cannot mount
/// one (not root, or no mount permission in a container): a skip reported by
/// [`require`], a failure when `RLCTL_REQUIRE_ENGINES` is set.
struct TinyDisk {
    dir: tempfile::TempDir,
}

impl TinyDisk {
    fn mount() -> Option<TinyDisk> {
        let mount = require(Engine::Tmpfs)?;
        let dir = tempfile::tempdir().unwrap();
        let out = std::process::Command::new(mount)
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        if !out.status.success() {
            let why = format!("mount -t tmpfs failed: {}", text(&out.stderr).trim());
            crate::support::engines::skip(Engine::Tmpfs, &why);
            return None;
        }
        Some(TinyDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the remaining space with a file.
    fn fill(&self) {
        use std::io::Write;
        let mut filler = std::fs::File::create(self.path().join("filler")).unwrap();
        while filler.write_all(&[b'x'; 4096]).is_ok() {}
    }
}

impl Drop for TinyDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_full_disk_leaves_the_previous_outputs_intact() {
    let Some(disk) = TinyDisk::mount() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let old_log = dir.path().join("old.log");
    std::fs::write(&old_log, LINE.repeat(3)).unwrap();
    let new_log = dir.path().join("new.log");
    let lines: String = (0..400)
        .map(|i| LINE.replace("/a", &format!("/p{i}x")))
        .collect();
    std::fs::write(&new_log, lines).unwrap();
    let outputs: [(&str, &str, &str); 6] = [
        ("analyze", "-o", "report.json"),
        ("analyze", "--export-counts", "counts.csv"),
        ("analyze", "--write-policy", "policy.toml"),
        ("simulate", "--decisions", "decisions.csv"),
        ("report", "--export-html", "report.html"),
        ("report", "-o", "report.md"),
    ];
    let run = |command: &str, flag: &str, name: &str, log: &Path| {
        let mut cmd = rlctl();
        cmd.args([command, "-q", flag]).arg(disk.path().join(name));
        if command == "simulate" {
            cmd.args(["--limit", "1/1m", "--format", "json"]);
        }
        cmd.arg(log).output().unwrap()
    };
    for (command, flag, name) in outputs {
        let out = run(command, flag, name, &old_log);
        assert!(
            out.status.success(),
            "{command} {flag}: {}",
            text(&out.stderr)
        );
    }
    let generate = |lines: &str| {
        rlctl()
            .args(["generate", "--clients", "6", "--lines", lines, "-o"])
            .arg(disk.path().join("gen.log"))
            .output()
            .unwrap()
    };
    assert!(generate("10").status.success());
    let generated = std::fs::read(disk.path().join("gen.log")).unwrap();
    let before: Vec<Vec<u8>> = outputs
        .iter()
        .map(|(_, _, name)| std::fs::read(disk.path().join(name)).unwrap())
        .collect();
    disk.fill();
    for (command, flag, name) in outputs {
        let out = run(command, flag, name, &new_log);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command} {flag}: {stderr}");
        assert!(
            stderr.contains("No space left on device") && stderr.contains(name),
            "{command} {flag}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    let out = generate("100000");
    assert_eq!(
        out.status.code(),
        Some(2),
        "generate: {}",
        text(&out.stderr)
    );
    assert!(text(&out.stderr).contains("No space left on device"));
    assert!(
        std::fs::read(disk.path().join("gen.log")).unwrap() == generated,
        "generate truncated the previous log"
    );
    for ((_, _, name), old) in outputs.iter().zip(&before) {
        assert!(
            std::fs::read(disk.path().join(name)).unwrap() == *old,
            "{name} was replaced by a partial file"
        );
    }
    let mut left: Vec<String> = std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    let mut expected: Vec<String> = outputs.iter().map(|o| o.2.to_string()).collect();
    expected.extend(["filler".into(), "gen.log".into()]);
    expected.sort();
    assert_eq!(left, expected, "temporary files left behind");
    // The report on stdout, redirected to the full disk: an error, not a panic.
    let script = format!(
        "'{}' analyze -q --format json '{}' > '{}'",
        rlctl_path().display(),
        new_log.display(),
        disk.path().join("stdout.json").display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("No space left on device"),
        "{}",
        text(&out.stderr)
    );
}
