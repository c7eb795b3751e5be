//! DuckDB (1.3 or newer, for the `lambda` syntax): RE2 regular expressions,
//! standard literals, `list_transform` over `string_split`, and DuckDB's
//! `hash` for samples.

use super::dialect::SqlDialect;

/// DuckDB.
pub struct DuckDb;

impl SqlDialect for DuckDb {
    fn name(&self) -> &'static str {
        "duckdb"
    }

    fn timestamp_ms(&self, expr: &str) -> String {
        format!("epoch_ms({expr})")
    }

    fn matches(&self, expr: &str, pattern: &str) -> String {
        format!("regexp_matches({expr}, {})", self.string(pattern))
    }

    fn group1(&self, expr: &str, pattern: &str) -> String {
        format!("regexp_extract({expr}, {}, 1)", self.string(pattern))
    }

    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String {
        format!(
            "array_to_string(list_transform(string_split({expr}, '/'), lambda {var}: {body}), '/')"
        )
    }

    fn hash_bucket(&self, expr: &str, buckets: u32) -> String {
        format!("(hash({expr}) % {buckets})")
    }

    fn hash_name(&self) -> &'static str {
        "DuckDB's hash()"
    }
}
