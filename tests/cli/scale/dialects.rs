//! The dialects no engine here runs (Trino/Athena, BigQuery, ClickHouse), checked
//! by an independent SQL parser: sqlglot parses each query as written for the
//! dialect; Trino's and BigQuery's are then translated to DuckDB and run over the
//! raw log, and must give `rlctl analyze`'s figures. sqlglot has no DuckDB
//! translation for ClickHouse's functions, so ClickHouse's queries are parsed only.

use super::*;

#[test]
fn trino_bigquery_and_clickhouse_queries_parse_and_trino_and_bigquery_agree() {
    let (Some(py), Some(_)) = (engine("duckdb", false), engine("sqlglot", false)) else {
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
        let from_sql = from_sql_result(&result);
        assert_same_figures(&raw, &from_sql);
    }
    run_engine(
        &py,
        d,
        "clickhouse",
        &[&raw_log_sql("clickhouse")[..], &ROUTES[..], &SHAPE[..]].concat(),
        &["--parse-only", "--from-dialect", "clickhouse"],
    );
}
