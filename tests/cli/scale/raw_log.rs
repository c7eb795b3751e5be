//! Round trips over a log with every kind of path rlctl normalises: DuckDB
//! over the raw log (a view it parses itself, as a lake table would be) and
//! ClickHouse (in process) over its converted events, each normalising paths
//! and routing in its own SQL; and the dialects no engine here runs
//! (Trino/Athena, BigQuery), checked by an independent SQL parser: sqlglot
//! parses each query as written for its dialect and translates it to DuckDB,
//! which runs it over the raw log. Each must give `rlctl analyze`'s figures.

use super::*;

/// Route rules of the raw-log round trips.
pub(super) const ROUTES: [&str; 4] = [
    "--route",
    "^/api/search=search",
    "--route",
    r"^/static/.*\.js$=scripts",
];

/// Window and endpoint count of the raw-log round trips.
pub(super) const SHAPE: [&str; 4] = ["--window", "10s", "--endpoints", "100"];

/// A generated log in `dir` with the [`TRICKY`] requests appended, and its analysis.
pub(super) fn tricky_log(dir: &Path) -> (PathBuf, Value) {
    let log = generated_log(dir, "60", "5m", "9");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(TRICKY);
    std::fs::write(&log, text).unwrap();
    let analyze = [
        "analyze",
        "-q",
        "--format",
        "json",
        "--baseline",
        "all",
        "--discover",
        "off",
        s(&log),
    ];
    let raw = json(&[&analyze[..], &ROUTES[..], &SHAPE[..]].concat());
    (log, raw)
}

/// `rlctl sql` arguments for the raw-log view of run_queries.py (`--raw-log`).
fn raw_log_sql(dialect: &str) -> Vec<&str> {
    vec![
        "--dialect",
        dialect,
        "--table",
        "raw_log",
        "--time",
        "ts",
        "--time-unit",
        "timestamp",
        "--client",
        "ip",
        "--path",
        "target",
        "--method",
        "method",
        "--status",
        "status",
    ]
}

/// Requests whose endpoints exercise every normalisation rule.
const TRICKY: &str = r#"10.9.9.1 - - [05/Jan/2026:00:01:00 +0000] "GET /blob/deadbeefcafe0123456789 HTTP/1.1" 200 5 "-" "ua"
10.9.9.1 - - [05/Jan/2026:00:01:00 +0000] "GET /t/AbCdEfGhIjKlMnOp12345_-x?x=1 HTTP/1.1" 200 5 "-" "ua"
10.9.9.1 - - [05/Jan/2026:00:01:01 +0000] "GET /api/v1/presentations/logstash-monitorama-2013 HTTP/1.1" 200 5 "-" "ua"
10.9.9.2 - - [05/Jan/2026:00:01:01 +0000] "DELETE http://example.com:8080/a/7#frag HTTP/1.1" 204 0 "-" "ua"
10.9.9.2 - - [05/Jan/2026:00:01:02 +0000] "-" 400 0 "-" "-"
10.9.9.2 - - [05/Jan/2026:00:01:02 +0000] "get /lower HTTP/1.1" 400 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET http://example.com HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET /deadbeefdeadbeef/DEADBEEFDEADBEEF0/ HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:04 +0000] "GET /u/3F2B8C1E-9D4A-4B6E-8F00-1234567890AB//x HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:04 +0000] "PURGE /api/search/x?q=1 HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:05 +0000] "GET /a/b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7-AbCdEf/ HTTP/1.1" 200 0 "-" "-"
"#;

#[test]
fn duckdb_over_a_raw_log_normalises_and_routes_like_rlctl() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, raw) = tricky_log(d);
    let result = run_engine(
        &py,
        d,
        "raw",
        &[&raw_log_sql("duckdb")[..], &ROUTES[..], &SHAPE[..]].concat(),
        &["--raw-log", &format!("raw_log={}", s(&log))],
    );
    let from_sql = from_sql_result(&result, &SHAPE);
    assert_same_figures(&raw, &from_sql);
    let endpoints: Vec<&str> = raw["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"].as_str().unwrap())
        .collect();
    for expected in [
        "GET /blob/:id",
        "GET /t/:id",
        "GET /api/v1/presentations/logstash-monitorama-2013",
        "DELETE /a/:id",
        "(invalid request)",
        "GET /deadbeefdeadbeef/:id/",
        "GET /u/:id//x",
        "search",
        "scripts",
    ] {
        assert!(endpoints.contains(&expected), "{expected} in {endpoints:?}");
    }
}

#[test]
fn trino_and_bigquery_queries_parse_and_agree_through_duckdb() {
    let (Some(py), Some(_)) = (require(Engine::DuckDb), require(Engine::Sqlglot)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, raw) = tricky_log(d);
    let view = format!("raw_log={}", s(&log));
    for dialect in ["trino", "bigquery"] {
        let result = run_engine(
            &py,
            d,
            dialect,
            &[&raw_log_sql(dialect)[..], &ROUTES[..], &SHAPE[..]].concat(),
            &["--raw-log", &view, "--from-dialect", dialect],
        );
        let from_sql = from_sql_result(&result, &SHAPE);
        assert_same_figures(&raw, &from_sql);
    }
}

/// ClickHouse (in process, PyPI `chdb`) over the converted events of the tricky
/// log, normalising their paths and routing in its own SQL dialect, with the
/// time in milliseconds and as a DateTime64.
#[test]
fn clickhouse_normalises_and_routes_like_rlctl() {
    let Some(py) = require(Engine::ClickHouse) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, raw) = tricky_log(d);
    let events = d.join("events.parquet");
    run(&["convert", "-q", s(&log), "-o", s(&events)]);
    let view = format!("events={}", s(&events));
    for (time, unit) in [("ts_ms", "ms"), ("ts", "timestamp")] {
        let result = run_engine(
            &py,
            d,
            &format!("clickhouse-{unit}"),
            &[
                &events_sql("clickhouse", time, unit)[..],
                &ROUTES[..],
                &SHAPE[..],
            ]
            .concat(),
            &["--view", &view],
        );
        assert_same_figures(&raw, &from_sql_result(&result, &SHAPE));
    }
}
