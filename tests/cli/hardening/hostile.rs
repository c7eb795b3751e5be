//! Hostile log content end to end: formula prefixes, markup, backticks, pipes,
//! terminal escapes (`\x1b[2J`, OSC 8), NUL bytes and invalid UTF-8 in users,
//! paths and file names are inert in every CSV, Markdown, JSON and terminal
//! output.

use std::path::{Path, PathBuf};

use super::{MSEC_FORMAT, assert_clear_failure, rlctl, stdout_of, text};

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
fn a_path_of_thousands_of_segments_is_an_endpoint_as_logged() {
    // Found by review: discovery recursed once per segment, and 2,500
    // segments (5 KB, within nginx's request line) overflowed the stack.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("deep.log");
    let deep = "/a".repeat(20_000);
    let lines: String = (0..3)
        .map(|i| format!("1767571200.{i:03} 10.0.0.1 \"GET {deep} HTTP/1.1\" 200 0.001 \"-\"\n"))
        .chain(std::iter::once(
            "1767571201.000 10.0.0.2 \"GET /b/1 HTTP/1.1\" 200 0.001 \"-\"\n".to_string(),
        ))
        .collect();
    std::fs::write(&log, lines).unwrap();
    for command in ["analyze", "report"] {
        let out = (rlctl().env_remove("GITHUB_STEP_SUMMARY"))
            .args([
                command,
                "-q",
                "--log-format",
                MSEC_FORMAT,
                "--format",
                "json",
            ])
            .arg(&log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", text(&out.stderr));
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let analysis = if command == "report" {
            &json["analysis"]
        } else {
            &json
        };
        // The deep path as logged (compared, not printed, on failure).
        let endpoints: Vec<(bool, String, u64)> = (analysis["endpoints"].as_array().unwrap())
            .iter()
            .map(|e| {
                let name = e["endpoint"].as_str().unwrap();
                let as_logged = name == format!("GET {deep}");
                let shown = if as_logged {
                    "deep".into()
                } else {
                    name.chars().take(40).collect()
                };
                (as_logged, shown, e["requests"].as_u64().unwrap())
            })
            .collect();
        let expected = [
            (true, "deep".to_string(), 3),
            (false, "GET /b/:id".to_string(), 1),
        ];
        assert_eq!(endpoints, expected, "{command}");
    }
}
