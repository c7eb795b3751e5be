//! Logs bigger than one machine, end to end: `rlctl convert` writes the
//! events, the queries `rlctl sql` prints run on real engines (DuckDB, Apache
//! Spark in local mode, ClickHouse in process) through
//! tests/engines/run_queries.py, and `rlctl analyze --from-sql-result` must give
//! the figures of `rlctl analyze` on the raw log, figure for figure (the JSON
//! report minus its `input` section). A key sample replayed with `simulate
//! --events --key-sample-rate` must hold the full replay's figures within its
//! stated intervals.
//!
//! The engines are Python packages (`duckdb`; `pyspark`, which needs Java;
//! `chdb`; and `sqlglot` for the dialects no engine here runs). The Python used
//! is `$RLCTL_PYTHON`, else `~/.cache/rlctl-venv/bin/python` (where `.ci/run`
//! installs them), else `python3`. Without an engine a test checks nothing,
//! which `cargo test` reports under its summary; with `RLCTL_REQUIRE_ENGINES`
//! set (CI) it fails ([`crate::support::require`]).

mod matrix;
mod raw_log;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

use crate::support::{Engine, require, rlctl};

/// Runs rlctl with `args`, asserting success; returns stdout.
fn run(args: &[&str]) -> Vec<u8> {
    let out = rlctl().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "rlctl {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn json(args: &[&str]) -> Value {
    serde_json::from_slice(&run(args)).expect("stdout is JSON")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A generated log (plain combined format) in `dir`.
fn generated_log(dir: &Path, clients: &str, duration: &str, seed: &str) -> PathBuf {
    let log = dir.join("access.log");
    run(&[
        "generate",
        "--clients",
        clients,
        "--duration",
        duration,
        "--seed",
        seed,
        "-o",
        s(&log),
    ]);
    log
}

/// Prints the queries of `rlctl sql` as JSON into `dir/name.json` and runs them
/// with the engine of the dialect (Spark, ClickHouse, else DuckDB); `extra` goes
/// to run_queries.py (views, --csv, --from-dialect).
fn run_engine(py: &Path, dir: &Path, name: &str, sql_args: &[&str], extra: &[&str]) -> PathBuf {
    let queries = dir.join(format!("{name}.json"));
    let mut args = vec!["sql", "--format", "json"];
    args.extend(sql_args);
    std::fs::write(&queries, run(&args)).unwrap();
    let out = dir.join(name);
    // The dialect names the engine; DuckDB also runs translated Trino and BigQuery.
    let engine = match sql_args.iter().position(|&a| a == "--dialect") {
        Some(i) if matches!(sql_args[i + 1], "spark" | "clickhouse") => sql_args[i + 1],
        _ => "duckdb",
    };
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/engines/run_queries.py");
    let result = Process::new(py)
        .args([script, "--engine", engine, "--queries", s(&queries)])
        .args(["--out", s(&out)])
        .args(extra)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        result.status.success(),
        "{engine} failed:\n{}\n{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    print!("{}", String::from_utf8_lossy(&result.stdout));
    out
}

/// Asserts two analyze reports agree on every figure (all but `input`).
fn assert_same_figures(raw: &Value, from_sql: &Value) {
    let fields = raw.as_object().unwrap();
    assert!(fields.len() > 5, "{raw}");
    // An SQL result holds counts, not requests: no client profiles, and no
    // paths for the list of what each template collapsed.
    let compared = |f: &str| f != "input" && f != "profiles" && f != "templates";
    for (field, value) in fields.iter().filter(|(f, _)| compared(f)) {
        assert_eq!(
            Some(value),
            from_sql.get(field),
            "`{field}` differs between the raw log and the SQL result"
        );
    }
    for t in ["first_ts", "last_ts", "lines"] {
        assert_eq!(raw["input"][t], from_sql["input"][t], "input.{t}");
    }
}

/// `rlctl analyze --format json --from-sql-result RESULT`, with `extra` flags.
fn from_sql_result(result: &Path, extra: &[&str]) -> Value {
    let analyze = [
        "analyze",
        "-q",
        "--format",
        "json",
        "--from-sql-result",
        s(result),
    ];
    json(&[&analyze[..], extra].concat())
}

/// `rlctl sql` arguments for the table of `rlctl convert` (a view `events`),
/// normalising its paths in SQL, with the time in column `time` of `unit`.
fn events_sql<'a>(dialect: &'a str, time: &'a str, unit: &'a str) -> Vec<&'a str> {
    vec![
        "--dialect",
        dialect,
        "--table",
        "events",
        "--time",
        time,
        "--time-unit",
        unit,
        "--client",
        "client",
        "--path",
        "path",
        "--method",
        "method",
        "--status",
        "status",
    ]
}

#[test]
fn events_replay_like_the_log_they_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let log = generated_log(dir.path(), "40", "5m", "3");
    let events = dir.path().join("events.parquet");
    run(&["convert", "-q", s(&log), "-o", s(&events)]);
    let args = ["simulate", "-q", "--format", "json", "--limit", "60/1m"];
    let raw = json(&[&args[..], &[s(&log)]].concat());
    let replayed = json(&[&args[..], &["--events", s(&events)]].concat());
    for field in ["results", "scenarios"] {
        assert_eq!(raw[field], replayed[field], "{field}");
    }
    assert!(raw["scenarios"][0]["rejected"].as_u64().unwrap() > 0);
    let csv = dir.path().join("events.csv");
    run(&["convert", "-q", s(&log), "-o", s(&csv)]);
    let from_csv = json(&[&args[..], &["--events", s(&csv)]].concat());
    assert_eq!(raw["scenarios"], from_csv["scenarios"]);
}

#[test]
fn every_dialect_prints_the_five_queries() {
    for dialect in ["spark", "trino", "clickhouse", "bigquery", "duckdb"] {
        let out = run(&[
            "sql",
            "--dialect",
            dialect,
            "--table",
            "logs",
            "--time",
            "t",
            "--time-unit",
            "timestamp",
            "--client",
            "ip",
            "--path",
            "request_uri",
            "--method",
            "verb",
        ]);
        let text = String::from_utf8(out).unwrap();
        for name in [
            "summary",
            "histograms",
            "clients",
            "endpoints",
            "endpoint_clients",
        ] {
            assert!(
                text.contains(&format!("-- result: {name} -> save as {name}.parquet")),
                "{dialect}: {name}"
            );
        }
        assert_eq!(text.matches("WITH src AS (").count(), 5, "{dialect}");
    }
}

#[test]
fn a_missing_result_table_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    rlctl()
        .args(["analyze", "--from-sql-result", s(dir.path())])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no `summary` table"));
}

#[test]
fn a_routes_file_goes_to_the_query_not_to_its_result() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--routes", "--write-routes"] {
        rlctl()
            .args(["analyze", "--from-sql-result", s(dir.path()), flag, "r.txt"])
            .assert()
            .code(2)
            .stderr(predicates::str::contains("cannot be used with"));
    }
}

#[test]
fn duckdb_over_converted_events_gives_the_same_report() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = generated_log(d, "120", "10m", "5");
    let events = d.join("events.parquet");
    run(&["convert", "-q", s(&log), "-o", s(&events)]);
    let view = format!("events={}", s(&events));
    let raw = json(&[
        "analyze",
        "-q",
        "--format",
        "json",
        "--baseline",
        "all",
        "--discover",
        "off",
        s(&log),
    ]);
    // Endpoints normalised in SQL from the path, results as Parquet.
    let table = [
        "--dialect",
        "duckdb",
        "--table",
        "events",
        "--time",
        "ts_ms",
        "--client",
        "client",
        "--status",
        "status",
    ];
    let normalised = run_engine(
        &py,
        d,
        "normalised",
        &[&table[..], &["--path", "path", "--method", "method"]].concat(),
        &["--view", &view],
    );
    let from_sql = from_sql_result(&normalised, &[]);
    assert_same_figures(&raw, &from_sql);
    // rlctl's own endpoint column, results as CSV.
    let given = run_engine(
        &py,
        d,
        "given",
        &[&table[..], &["--endpoint", "endpoint"]].concat(),
        &["--view", &view, "--csv"],
    );
    let from_csv = from_sql_result(&given, &[]);
    assert_same_figures(&raw, &from_csv);
    assert!(given.join("clients.csv").is_file());
    // All five tables as one, from one query.
    let combined = run_engine(
        &py,
        d,
        "combined",
        &[&table[..], &["--endpoint", "endpoint", "--combined"]].concat(),
        &["--view", &view],
    );
    let file = combined.join("combined.parquet");
    let from_file = from_sql_result(&file, &[]);
    assert_same_figures(&raw, &from_file);
}

#[test]
fn spark_gives_the_same_report() {
    let Some(py) = require(Engine::Spark) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = generated_log(d, "50", "5m", "13");
    let events = d.join("events.parquet");
    run(&["convert", "-q", s(&log), "-o", s(&events)]);
    let raw = json(&[
        "analyze",
        "-q",
        "--format",
        "json",
        "--baseline",
        "all",
        "--discover",
        "off",
        s(&log),
    ]);
    let result = run_engine(
        &py,
        d,
        "spark",
        &events_sql("spark", "ts_ms", "ms"),
        &["--view", &format!("events={}", s(&events))],
    );
    assert!(
        result.join("summary").is_dir(),
        "Spark writes part directories"
    );
    let from_sql = from_sql_result(&result, &[]);
    assert_same_figures(&raw, &from_sql);
}

#[test]
fn a_key_sample_estimates_the_full_replay_within_its_intervals() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = generated_log(d, "1000", "10m", "11");
    let events = d.join("events.parquet");
    run(&["convert", "-q", s(&log), "-o", s(&events)]);
    let sample = run_engine(
        &py,
        d,
        "sample",
        &[
            "--dialect",
            "duckdb",
            "--table",
            "events",
            "--time",
            "ts_ms",
            "--client",
            "client",
            "--endpoint",
            "endpoint",
            "--path",
            "path",
            "--method",
            "method",
            "--status",
            "status",
            "--sample-keys",
            "20%",
            "--sample-top",
            "20",
        ],
        &["--view", &format!("events={}", s(&events))],
    );
    let limits = [
        "simulate", "-q", "--format", "json", "--limit", "300/1m", "--burst", "30",
    ];
    let full = json(&[&limits[..], &[s(&log)]].concat());
    let sampled_file = sample.join("sample.parquet");
    let sampled = json(
        &[
            &limits[..],
            &["--events", s(&sampled_file), "--key-sample-rate", "20%"],
        ]
        .concat(),
    );
    let estimates = sampled["sampling"]["scenarios"].as_array().unwrap();
    let scenarios = full["scenarios"].as_array().unwrap();
    assert_eq!(estimates.len(), 6);
    let mut exact_certain = 0;
    for (truth, estimate) in scenarios.iter().zip(estimates) {
        let name = truth["scenario"].as_str().unwrap();
        assert_eq!(estimate["scenario"], truth["scenario"]);
        for figure in [
            "requests",
            "rejected",
            "reject_rate",
            "clients",
            "clients_rejected",
            "clients_rejected_share",
        ] {
            let value = truth[figure].as_f64().unwrap();
            let e = &estimate[figure];
            let (low, high) = (e["low"].as_f64().unwrap(), e["high"].as_f64().unwrap());
            assert!(
                low <= value && value <= high,
                "{name} {figure}: full replay {value} outside the stated interval {low} .. {high}"
            );
            assert!(high.is_finite(), "{name} {figure}: {e}");
        }
        let rate = &estimate["reject_rate"];
        let width = rate["high"].as_f64().unwrap() - rate["low"].as_f64().unwrap();
        assert!(
            width < 0.05,
            "{name}: an informative reject rate, not {rate}"
        );
        exact_certain += usize::from(estimate["rejected"]["low"] == estimate["rejected"]["high"]);
    }
    assert!(
        exact_certain >= 3,
        "the window algorithms reject only the heaviest clients, taken whole"
    );
    let table = String::from_utf8(run(&[
        &["simulate", "-q", "--format", "table", "--limit", "300/1m"][..],
        &["--events", s(&sampled_file), "--key-sample-rate", "0.2"],
    ]
    .concat()))
    .unwrap();
    assert!(
        table.contains("each sampled client's decisions are exact"),
        "{table}"
    );
    assert!(table.contains("Estimates for all clients (key sample 20%, 95% intervals)"));
}
