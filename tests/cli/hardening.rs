//! End-to-end hardening: results that depend neither on the number of threads
//! nor on the run; hostile log content (formula prefixes, markup, terminal
//! escapes, NUL bytes, invalid UTF-8) inert in every CSV, Markdown, JSON and
//! terminal output; and files that go wrong (a missing or unreadable input in
//! a list, stdin closed early, an output directory that does not exist, a full
//! disk), each a clear message and exit code 2, never a panic or a partial
//! result.

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;

fn rlctl() -> Command {
    let mut cmd = Command::cargo_bin("rlctl").unwrap();
    cmd.env("NO_COLOR", "1");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// stdout of a successful run.
fn stdout_of(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    out.stdout
}

/// A failed run: exit code 2, one `rlctl: error:` line naming `needle`, nothing
/// on stdout, no panic.
fn assert_clear_failure(out: &Output, needle: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("rlctl: error:") && stderr.contains(needle),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(out.stdout.is_empty(), "partial result on stdout");
    assert!(
        stderr.matches("(os error").count() <= 1,
        "the cause is repeated: {stderr}"
    );
}

#[test]
fn results_do_not_depend_on_threads_or_on_the_run() {
    // 40,000 lines of the bundled log: 7 MB, so two 4 MiB chunks parsed in
    // parallel, and more events than one parallel replay task takes.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let mut lines = String::new();
    let gz = flate2::read::GzDecoder::new(std::fs::File::open(fixture("access.log.gz")).unwrap());
    for line in std::io::BufRead::lines(std::io::BufReader::new(gz)).take(40_000) {
        lines.push_str(&line.unwrap());
        lines.push('\n');
    }
    assert!(lines.len() > 4 << 20);
    std::fs::write(&log, lines).unwrap();
    let run = |threads: &str, args: &[&str]| {
        stdout_of(
            rlctl()
                .env("RAYON_NUM_THREADS", threads)
                .args(args)
                .args(["-q", "--format", "json"])
                .arg(&log),
        )
    };
    for args in [&["analyze"][..], &["simulate", "--algo", "all"][..]] {
        let one = run("1", args);
        let two = run("2", args);
        assert!(!one.is_empty());
        assert!(one == two, "{args:?}: 1 thread and 2 threads differ");
        assert!(run("2", args) == two, "{args:?}: two runs differ");
    }
}

const MSEC_FORMAT: &str = r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#;

/// Users and paths a spreadsheet, a browser, a Markdown renderer or a terminal
/// would act on.
const HOSTILE_USERS: [&str; 6] = [
    "=cmd|'/c calc'!A1",
    "+1+1",
    "-2+3",
    "@SUM(1)",
    "<b>bob</b>",
    "eve\x1b]8;;http://evil\x07x",
];
const HOSTILE_PATHS: [&str; 5] = [
    "/<script>alert(1)</script>",
    "/a|b`c`",
    "/x\x1b[2J\x1b]8;;http://evil\x07y",
    "/=HYPERLINK(1)",
    "/nul\\x00",
];

fn hostile_log(dir: &Path) -> PathBuf {
    let mut bytes = Vec::new();
    for i in 0..60 {
        bytes.extend(
            format!(
                "1767571200.{:03} 10.0.0.{} \"GET {} HTTP/1.1\" 200 0.001 \"{}\"\n",
                i * 11,
                i % 3,
                HOSTILE_PATHS[i % HOSTILE_PATHS.len()],
                HOSTILE_USERS[i % HOSTILE_USERS.len()]
            )
            .as_bytes(),
        );
    }
    // A NUL byte and bytes that are not UTF-8 in a user name.
    bytes.extend(b"1767571201.000 10.0.0.9 \"GET /a HTTP/1.1\" 200 0.001 \"nul\x00\xff\xfeu\"\n");
    let path = dir.join("hostile.log");
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Every cell of a CSV parses, rows have the header's width, and no cell can run
/// as a formula or carry a control character.
fn assert_inert_csv(bytes: &[u8], what: &str) -> usize {
    assert!(
        !bytes.contains(&0x1b) && !bytes.contains(&0),
        "{what}: raw control byte"
    );
    let mut reader = csv::Reader::from_reader(bytes);
    let width = reader.headers().unwrap().len();
    let mut rows = 0;
    for record in reader.records() {
        let record = record.unwrap_or_else(|e| panic!("{what}: invalid CSV: {e}"));
        assert_eq!(record.len(), width, "{what}: ragged row");
        for cell in &record {
            let formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
            assert!(
                !formula || cell.parse::<f64>().is_ok(),
                "{what}: formula cell {cell:?}"
            );
        }
        rows += 1;
    }
    rows
}

#[test]
fn hostile_content_is_inert_in_every_csv() {
    let dir = tempfile::tempdir().unwrap();
    let log = hostile_log(dir.path());
    let counts = dir.path().join("counts.csv");
    let decisions = dir.path().join("decisions.csv");
    let analyze_csv = stdout_of(
        rlctl()
            .args([
                "analyze",
                "-q",
                "--key",
                "user",
                "--log-format",
                MSEC_FORMAT,
            ])
            .args(["--format", "csv", "--export-counts"])
            .arg(&counts)
            .arg(&log),
    );
    assert!(assert_inert_csv(&analyze_csv, "analyze --format csv") > 0);
    let counts_csv = std::fs::read(&counts).unwrap();
    assert!(assert_inert_csv(&counts_csv, "--export-counts") >= HOSTILE_USERS.len());
    assert!(text(&counts_csv).contains("'=cmd|'/c calc'!A1"));
    stdout_of(
        rlctl()
            .args([
                "simulate",
                "-q",
                "--key",
                "user",
                "--log-format",
                MSEC_FORMAT,
            ])
            .args(["--limit", "2/1m", "--algo", "all", "--decisions"])
            .arg(&decisions)
            .arg(&log),
    );
    let decisions_csv = std::fs::read(&decisions).unwrap();
    assert_eq!(assert_inert_csv(&decisions_csv, "--decisions"), 61 * 6);
}

#[test]
fn hostile_content_is_escaped_on_terminals_and_inert_in_markdown_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let log = hostile_log(dir.path());
    let run = |command: &str, format: &str, extra: &[&str]| {
        let out = rlctl()
            .args([command, "--key", "ip+user", "--log-format", MSEC_FORMAT])
            .args(["--format", format, "--top", "20"])
            .args(extra)
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(
                !bytes.contains(&0x1b) && !bytes.contains(&0),
                "{command} --format {format}: raw control byte on {stream}"
            );
        }
        String::from_utf8(out.stdout).expect("output is UTF-8")
    };
    for (command, extra) in [
        ("analyze", &["--endpoints", "20"][..]),
        ("simulate", &["--limit", "2/1m"][..]),
    ] {
        let table = run(command, "table", extra);
        assert!(table.contains("\\x1b"), "{command}: escapes not shown");
        let markdown = run(command, "markdown", extra);
        assert!(
            !markdown.contains("<script>") && !markdown.contains("<b>"),
            "{command}: raw markup in Markdown"
        );
        assert_markdown_tables_are_rectangular(&markdown, command);
        let json: serde_json::Value =
            serde_json::from_str(&run(command, "json", extra)).expect("valid JSON");
        assert!(json.is_object());
    }
}

/// In each Markdown table, every row has as many unescaped `|` as its header.
fn assert_markdown_tables_are_rectangular(markdown: &str, what: &str) {
    let mut width = None;
    for line in markdown.lines() {
        if !line.starts_with('|') {
            width = None;
            continue;
        }
        let pipes = line
            .replace("\\\\", "")
            .replace("\\|", "")
            .matches('|')
            .count();
        match width {
            None => width = Some(pipes),
            Some(w) => assert_eq!(pipes, w, "{what}: a cell breaks its table: {line}"),
        }
    }
}

#[test]
fn hostile_file_names_are_escaped_in_messages() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("evil\x1b[2J\x1b]8;;http:evil\x07.log");
    std::fs::write(
        &name,
        "10.0.0.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 5\nnot a log line\x1b[31m\n",
    )
    .unwrap();
    let out = rlctl()
        .args(["analyze", "--format", "table"])
        .arg(&name)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!out.stdout.contains(&0x1b) && !out.stderr.contains(&0x1b));
    assert!(
        text(&out.stderr).contains("evil\\x1b[2J"),
        "{}",
        text(&out.stderr)
    );
    let missing = dir.path().join("gone\x1b[2J.log");
    let out = rlctl().arg("analyze").arg(&missing).output().unwrap();
    assert_clear_failure(&out, "gone\\x1b[2J.log");
    assert!(!out.stderr.contains(&0x1b));
}

#[test]
fn a_far_future_timestamp_does_not_exhaust_memory() {
    // Found by review: the report's rejects chart had a point for every minute
    // between the first and the last request, so one line dated in the year
    // 9999 made `rlctl report` allocate hundreds of gigabytes and abort.
    // Epoch times beyond the year 9999 are bad timestamps, skipped and counted.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("far.log");
    let mut lines = String::new();
    for i in 0..30 {
        lines.push_str(&format!(
            "1767571200.{i:03} 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n"
        ));
    }
    lines.push_str("253402300000.000 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n");
    lines.push_str("9000000000000000.000 10.0.0.1 \"GET /a HTTP/1.1\" 200 0.001 \"-\"\n");
    std::fs::write(&log, lines).unwrap();
    for format in ["json", "html", "markdown"] {
        let out = rlctl()
            .args([
                "report",
                "-q",
                "--log-format",
                MSEC_FORMAT,
                "--format",
                format,
            ])
            .args(["--policy"])
            .arg(policy_file(dir.path()))
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{format}: {}", text(&out.stderr));
        assert!(
            out.stdout.len() < 4 << 20,
            "{format}: {} bytes",
            out.stdout.len()
        );
        if format == "json" {
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let input = &json["analysis"]["input"];
            assert_eq!(
                (&input["parsed"], &input["skipped"]),
                (&31.into(), &1.into())
            );
            assert_eq!(input["last_ts"], "9999-12-31T23:46:40.000Z");
        }
    }
}

fn policy_file(dir: &Path) -> PathBuf {
    let path = dir.join("policy.toml");
    std::fs::write(
        &path,
        "[[rule]]\nname = \"tight\"\nlimit = \"5/1m\"\nalgorithm = \"sliding-log\"\n",
    )
    .unwrap();
    path
}

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
    let bin = assert_cmd::cargo::cargo_bin("rlctl");
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

/// A 1 MiB tmpfs, unmounted on drop; `None` (and a notice) when this process
/// cannot mount one (not root, or no mount permission in a container).
struct TinyDisk {
    dir: tempfile::TempDir,
}

impl TinyDisk {
    fn mount() -> Option<TinyDisk> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir.path())
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            eprintln!("SKIPPED full-disk test: cannot mount a tmpfs (needs root)");
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
        assert_cmd::cargo::cargo_bin("rlctl").display(),
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
