//! Flag checks and the shape of the printed queries; the queries' results are
//! checked on real engines (DuckDB, Spark) in tests/cli/scale.rs.

use clap::Parser;

use super::dialect::{SqlDialect, backslash_string};
use super::*;
use crate::frames::sql_result::RESULT_TABLES;

/// Every dialect, as `--dialect` names them.
const DIALECTS: [&str; 5] = ["spark", "trino", "clickhouse", "bigquery", "duckdb"];

fn args(extra: &[&str]) -> SqlArgs {
    let mut argv = vec![
        "rlctl", "sql", "--table", "events", "--time", "ts_ms", "--client", "client",
    ];
    argv.extend(extra);
    match crate::cli::Cli::try_parse_from(argv).unwrap().command {
        crate::cli::Command::Sql(a) => *a,
        _ => unreachable!(),
    }
}

#[test]
fn one_query_per_result_table_in_order() {
    for dialect in DIALECTS {
        let (qs, rate) = queries(&args(&["--dialect", dialect, "--path", "path"])).unwrap();
        let names: Vec<&str> = qs.iter().map(|q| q.name.as_str()).collect();
        let expected: Vec<&str> = RESULT_TABLES.iter().map(|t| t.0).collect();
        assert_eq!(names, expected, "{dialect}");
        assert_eq!(rate, None);
        for q in &qs {
            assert!(q.sql.starts_with("WITH src AS ("), "{dialect} {}", q.name);
            assert!(q.sql.contains("FROM events"), "{dialect}");
        }
    }
}

#[test]
fn sample_rates_are_whole_buckets() {
    let base = [
        "--dialect",
        "spark",
        "--endpoint",
        "endpoint",
        "--sample-keys",
    ];
    let rate = |r: &str| {
        let mut a: Vec<&str> = base.to_vec();
        a.push(r);
        queries(&args(&a)).map(|(qs, rate)| (qs.len(), rate))
    };
    assert_eq!(rate("1%").unwrap(), (1, Some(0.01)));
    assert_eq!(rate("0.05").unwrap(), (1, Some(0.05)));
    assert!(rate("0.001%").is_err(), "below one bucket of 10,000");
    assert!(rate("0").is_err());
    assert!(rate("0.12345").is_err());
    let (qs, _) = queries(&args(&[
        "--dialect",
        "spark",
        "--endpoint",
        "endpoint",
        "--sample-keys",
        "1%",
    ]))
    .unwrap();
    assert!(
        qs[0].sql.contains("pmod(hash(e.client), 10000) < 100"),
        "{}",
        qs[0].sql
    );
}

#[test]
fn routes_need_a_path_and_a_valid_regex() {
    assert!(
        queries(&args(&[
            "--dialect",
            "duckdb",
            "--endpoint",
            "e",
            "--route",
            "^/a=a"
        ]))
        .is_err()
    );
    assert!(
        queries(&args(&[
            "--dialect",
            "duckdb",
            "--path",
            "p",
            "--route",
            "(=a"
        ]))
        .is_err()
    );
    // `--window` is typed: clap rejects a window of the wrong shape.
    assert!(
        crate::cli::Cli::try_parse_from([
            "rlctl",
            "sql",
            "--table",
            "events",
            "--time",
            "ts_ms",
            "--client",
            "client",
            "--dialect",
            "duckdb",
            "--path",
            "p",
            "--window",
            "7x",
        ])
        .is_err()
    );
    let (qs, _) = queries(&args(&[
        "--dialect",
        "trino",
        "--path",
        "p",
        "--route",
        r"^/api/search\b=search",
    ]))
    .unwrap();
    assert!(
        qs[0]
            .sql
            .contains(r"regexp_like(route_path, '^/api/search\b') THEN 'search'")
    );
}

#[test]
fn literals_escape_what_each_engine_unescapes() {
    assert_eq!(backslash_string(r"a\z'b"), r"'a\\z\'b'");
    let duck = super::duckdb::DuckDb;
    assert_eq!(duck.string(r"a\z'b"), r"'a\z''b'");
    let spark = super::spark::Spark;
    assert_eq!(spark.matches("x", r"^[0-9]+\z"), r"(x RLIKE '^[0-9]+\\z')");
}

#[test]
fn json_format_names_the_files() {
    let a = args(&["--dialect", "duckdb", "--path", "p", "--format", "json"]);
    let (qs, rate) = queries(&a).unwrap();
    let text = sql_text(&a, &qs, rate);
    assert!(text.contains("-- result: endpoint_clients -> save as endpoint_clients.parquet"));
}

mod matrix;

#[test]
fn a_routes_file_adds_the_normalised_path_and_a_case_of_templates() {
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes.txt");
    std::fs::write(&routes, "/a/:id\n/s/app.:hash.js\n").unwrap();
    let file = routes.to_str().unwrap();
    for dialect in DIALECTS {
        let (qs, _) = queries(&args(&[
            "--dialect",
            dialect,
            "--path",
            "p",
            "--method",
            "m",
            "--routes",
            file,
        ]))
        .unwrap();
        for q in &qs {
            assert!(
                q.sql.contains("\nnormed AS (\n  SELECT req.*, "),
                "{dialect}"
            );
            assert!(q.sql.contains("  FROM normed\n)"), "{dialect}");
            let pattern = q.sql.find("THEN '/s/app.:hash.js'").unwrap();
            let whole = q.sql.find("THEN '/a/:id'").unwrap();
            assert!(pattern > whole, "{dialect}: /a/:id sorts first");
        }
    }
    let refused = |extra: &[&str]| {
        let mut a = vec!["--dialect", "duckdb", "--routes", file];
        a.extend(extra);
        queries(&args(&a)).unwrap_err().to_string()
    };
    assert!(refused(&["--endpoint", "e"]).contains("--routes applies to --path"));
    assert!(refused(&["--path", "p", "--route", "@h ^/=x"]).contains("give --host COL"));
    let (qs, _) = queries(&args(&[
        "--dialect",
        "duckdb",
        "--path",
        "p",
        "--host",
        "vh",
        "--route",
        "@H:8080 ^/=x",
    ]))
    .unwrap();
    assert!(
        qs[0]
            .sql
            .contains("WHEN host = 'h' AND regexp_matches(route_path, '^/') THEN 'x'")
    );
    assert!(
        qs[0]
            .sql
            .contains("ELSE TRIM(COALESCE(CAST(vh AS VARCHAR), '')) END) AS host")
    );
}

#[test]
fn a_method_needs_a_letter_as_ingestion_wants() {
    // `- - HTTP/1.1` (Envoy, ALB) is an invalid request in rlctl analyze; the
    // SQL must say so too. Its results are checked on DuckDB in
    // tests/cli/scale/raw_log.rs where the engine is installed.
    for dialect in DIALECTS {
        let (qs, _) = queries(&args(&[
            "--dialect",
            dialect,
            "--path",
            "p",
            "--method",
            "m",
        ]))
        .unwrap();
        let sql = &qs[0].sql;
        let arm = sql
            .find("THEN '(invalid request)'")
            .map(|end| &sql[..end])
            .and_then(|before| before.rfind("WHEN NOT (").map(|start| &before[start..]))
            .unwrap_or_else(|| panic!("{dialect}: no invalid-request arm in\n{sql}"));
        assert!(arm.contains("[A-Z_-]{1,20}"), "{dialect}: {arm}");
        assert!(
            arm.contains("AND") && arm.contains("'[A-Z]'"),
            "{dialect}: {arm}"
        );
    }
}
