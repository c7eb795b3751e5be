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

/// The routes file of the round trips with `--routes`: whole parameters,
/// patterns (`app.:hash.js`), a literal sibling that wins over a parameter,
/// regex metacharacters, a non-ASCII segment, and precedence between
/// templates of the same length.
pub(super) const TEMPLATES: &str = "# routes of the round trips
/api/orders/:id
/api/orders/search
/api/users/:id/notifications
/static/js/:name.:hash.js
/static/css/main.:hash.css
/static/css/:file
/static/img/:file
/assets/app.:hash.js     # also /assets/app.:hash.js as logged
/assets/:name.:hash.js
/assets/:file
/v/:slug
/a+b/(c)
/café/:id
/x/:a/y
/x/:a/:b
/keep/:what
";

/// Writes [`TEMPLATES`] as `dir/routes.txt`.
pub(super) fn routes_file(dir: &Path) -> PathBuf {
    let path = dir.join("routes.txt");
    std::fs::write(&path, TEMPLATES).unwrap();
    path
}

/// Window and endpoint count of the raw-log round trips.
pub(super) const SHAPE: [&str; 4] = ["--window", "10s", "--endpoints", "100"];

/// A generated log in `dir` with the [`TRICKY`] requests appended, and its analysis.
pub(super) fn tricky_log(dir: &Path) -> (PathBuf, Value) {
    tricky_log_with(dir, "")
}

/// [`tricky_log`] with the lines `more` appended too.
fn tricky_log_with(dir: &Path, more: &str) -> (PathBuf, Value) {
    let log = generated_log(dir, "60", "5m", "9");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(TRICKY);
    text.push_str(more);
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
10.9.9.2 - - [05/Jan/2026:00:01:02 +0000] "- - HTTP/1.1" 400 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET http://example.com HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET http://example.com?q=/x/9 HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET HTTP://h.example/x/1 HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET ws+x.1://h/y/2 HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:03 +0000] "GET /deadbeefdeadbeef/DEADBEEFDEADBEEF0/ HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:04 +0000] "GET /u/3F2B8C1E-9D4A-4B6E-8F00-1234567890AB//x HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:04 +0000] "PURGE /api/search/x?q=1 HTTP/1.1" 200 0 "-" "-"
10.9.9.3 - - [05/Jan/2026:00:01:05 +0000] "GET /a/b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7-AbCdEf/ HTTP/1.1" 200 0 "-" "-"
10.9.9.4 - - [05/Jan/2026:00:02:00 +0000] "GET /api/orders/4f9c2a1e HTTP/1.1" 200 5 "-" "ua"
10.9.9.4 - - [05/Jan/2026:00:02:00 +0000] "GET /api/orders/search?q=shoes HTTP/1.1" 200 5 "-" "ua"
10.9.9.4 - - [05/Jan/2026:00:02:01 +0000] "GET /assets/app.1f2e3d4c.js HTTP/1.1" 200 5 "-" "ua"
10.9.9.4 - - [05/Jan/2026:00:02:01 +0000] "GET /assets/app.:hash.js HTTP/1.1" 200 5 "-" "ua"
10.9.9.4 - - [05/Jan/2026:00:02:02 +0000] "GET /assets/app.a-b.js HTTP/1.1" 200 5 "-" "ua"
10.9.9.5 - - [05/Jan/2026:00:02:02 +0000] "GET /assets/vendor.77aa.js HTTP/1.1" 200 5 "-" "ua"
10.9.9.5 - - [05/Jan/2026:00:02:03 +0000] "GET /assets/ HTTP/1.1" 200 5 "-" "ua"
10.9.9.5 - - [05/Jan/2026:00:02:03 +0000] "GET /v/dQw4w9WgXcQ HTTP/1.1" 200 5 "-" "ua"
10.9.9.5 - - [05/Jan/2026:00:02:04 +0000] "POST /a+b/(c) HTTP/1.1" 201 5 "-" "ua"
10.9.9.5 - - [05/Jan/2026:00:02:04 +0000] "POST /aab/c HTTP/1.1" 201 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:05 +0000] "GET /café/12 HTTP/1.1" 200 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:05 +0000] "GET /x/1/y HTTP/1.1" 200 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:06 +0000] "GET /x/1/z HTTP/1.1" 200 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:06 +0000] "GET /keep/me HTTP/1.1" 200 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:07 +0000] "GET /old-keep HTTP/1.1" 200 5 "-" "ua"
10.9.9.6 - - [05/Jan/2026:00:02:07 +0000] "GET /static/css/main.c81f0e55.css?v=2 HTTP/1.1" 200 5 "-" "ua"
"#;

/// Request lines with a method and no path, `(invalid request)` to rlctl
/// and to the queries of the round trips with a method column (the
/// combinations without one read their targets as paths: see matrix.rs).
const NO_PATH: &str = r#"10.9.9.2 - - [05/Jan/2026:00:01:02 +0000] "GET" 400 0 "-" "-"
10.9.9.2 - - [05/Jan/2026:00:01:02 +0000] "GET ?q=1 HTTP/1.1" 400 0 "-" "-"
"#;

#[test]
fn duckdb_over_a_raw_log_normalises_and_routes_like_rlctl() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, raw) = tricky_log_with(d, NO_PATH);
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
    // `"-"`, `get /lower`, `- - HTTP/1.1` and the two of NO_PATH.
    let invalid = (raw["endpoints"].as_array().unwrap().iter())
        .find(|e| e["endpoint"] == "(invalid request)")
        .unwrap();
    assert_eq!(invalid["requests"], 5, "{invalid}");
}

#[test]
fn trino_and_bigquery_queries_parse_and_agree_through_duckdb() {
    let (Some(py), Some(_)) = (require(Engine::DuckDb), require(Engine::Sqlglot)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, raw) = tricky_log_with(d, NO_PATH);
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
    let (log, raw) = tricky_log_with(d, NO_PATH);
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

/// A route whose NAME spells an endpoint the log also has (`GET /keep/me`):
/// that endpoint keeps its name though the template `/keep/:what` matches it.
const KEEP: [&str; 2] = ["--route", "^/old-keep$=GET /keep/me"];

/// The tricky log analyzed with [`ROUTES`], [`KEEP`] and `--routes` [`TEMPLATES`]
/// (the literal baseline: what SQL results can give); the routes file's path.
fn templated_analysis(dir: &Path, log: &Path) -> (Value, PathBuf) {
    let routes = routes_file(dir);
    let analyze = [
        "analyze",
        "-q",
        "--format",
        "json",
        "--baseline",
        "all",
        s(log),
        "--routes",
        s(&routes),
    ];
    let raw = json(&[&analyze[..], &ROUTES[..], &KEEP[..], &SHAPE[..]].concat());
    (raw, routes)
}

/// The endpoints of an analyze report.
fn endpoints(report: &Value) -> Vec<&str> {
    report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"].as_str().unwrap())
        .collect()
}

#[test]
fn duckdb_over_a_raw_log_names_endpoints_by_the_routes_file_like_rlctl() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, _) = tricky_log(d);
    let (raw, routes) = templated_analysis(d, &log);
    let names = endpoints(&raw);
    for expected in [
        "GET /api/orders/:id",
        "GET /api/orders/search",
        "GET /api/users/:id/notifications",
        "GET /assets/app.:hash.js",
        "GET /assets/:name.:hash.js",
        "GET /assets/:file",
        "GET /assets/",
        "GET /v/:slug",
        "POST /a+b/(c)",
        "POST /aab/c",
        "GET /café/:id",
        "GET /x/:a/y",
        "GET /x/:a/:b",
        "GET /keep/me",
        "GET /static/css/main.:hash.css",
        "scripts",
        "search",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    for gone in ["GET /keep/:what", "GET /api/orders/4f9c2a1e"] {
        assert!(!names.contains(&gone), "{gone} in {names:?}");
    }
    let templates = raw["templates"].as_array().unwrap();
    assert!(!templates.is_empty(), "the routes collapse paths");
    let result = run_engine(
        &py,
        d,
        "templated",
        &[
            &raw_log_sql("duckdb")[..],
            &ROUTES[..],
            &KEEP[..],
            &["--routes", s(&routes)],
            &SHAPE[..],
        ]
        .concat(),
        &["--raw-log", &format!("raw_log={}", s(&log))],
    );
    assert_same_figures(&raw, &from_sql_result(&result, &SHAPE));
}

#[test]
fn trino_and_bigquery_name_endpoints_by_the_routes_file_through_duckdb() {
    let (Some(py), Some(_)) = (require(Engine::DuckDb), require(Engine::Sqlglot)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, _) = tricky_log(d);
    let (raw, routes) = templated_analysis(d, &log);
    let view = format!("raw_log={}", s(&log));
    for dialect in ["trino", "bigquery"] {
        let result = run_engine(
            &py,
            d,
            &format!("{dialect}-templated"),
            &[
                &raw_log_sql(dialect)[..],
                &ROUTES[..],
                &KEEP[..],
                &["--routes", s(&routes)],
                &SHAPE[..],
            ]
            .concat(),
            &["--raw-log", &view, "--from-dialect", dialect],
        );
        assert_same_figures(&raw, &from_sql_result(&result, &SHAPE));
    }
}

/// The tricky log as Apache `vhost_combined`: each line gets one of three
/// virtual hosts (two spellings of one, with other ports).
fn vhost_log(dir: &Path) -> PathBuf {
    let (log, _) = tricky_log(dir);
    let hosts = [
        "api.example.com:443",
        "www.example.com:80",
        "API.Example.com:8443",
    ];
    let text: String = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{} {line}\n", hosts[i % hosts.len()]))
        .collect();
    let path = dir.join("other_vhosts_access.log");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn duckdb_trino_and_bigquery_route_by_virtual_host_like_rlctl() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = vhost_log(d);
    let rules = [
        "--route",
        "@api.example.com ^/api/=api",
        "--route",
        "@www.example.com:80 ^/static/=www-static",
    ];
    let routes = routes_file(d);
    let analyze = [
        "analyze",
        "-q",
        "--format",
        "json",
        "--baseline",
        "all",
        s(&log),
        "--routes",
        s(&routes),
    ];
    let raw = json(&[&analyze[..], &rules[..], &SHAPE[..]].concat());
    let names = endpoints(&raw);
    for expected in [
        "api",
        "www-static",
        "GET /api/search",
        "GET /static/img/:file",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    let view = format!("raw_log={}", s(&log));
    // DuckDB itself, then Trino and BigQuery through sqlglot when it is here.
    let translated = require(Engine::Sqlglot).is_some();
    for dialect in ["duckdb", "trino", "bigquery"] {
        if dialect != "duckdb" && !translated {
            continue;
        }
        let mut sql = raw_log_sql(dialect);
        sql.extend(["--host", "vhost", "--routes", s(&routes)]);
        let mut extra = vec!["--raw-vhost-log", &view];
        if dialect != "duckdb" {
            extra.extend(["--from-dialect", dialect]);
        }
        let result = run_engine(
            &py,
            d,
            &format!("vhost-{dialect}"),
            &[&sql[..], &rules[..], &SHAPE[..]].concat(),
            &extra,
        );
        assert_same_figures(&raw, &from_sql_result(&result, &SHAPE));
    }
}
