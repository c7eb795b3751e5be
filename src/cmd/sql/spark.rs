//! Apache Spark SQL (3.1 or newer; Databricks, EMR, `spark-sql`): Java regular
//! expressions, backslash-escaped literals, `transform` over `split`, and
//! Spark's murmur3 `hash` for samples. Valid with ANSI mode on or off.

use super::dialect::{SqlDialect, backslash_string};

/// Apache Spark SQL.
pub struct Spark;

impl SqlDialect for Spark {
    fn name(&self) -> &'static str {
        "spark"
    }

    fn string(&self, text: &str) -> String {
        backslash_string(text)
    }

    fn text_type(&self) -> &'static str {
        "STRING"
    }

    fn timestamp_ms(&self, expr: &str) -> String {
        format!("unix_millis({expr})")
    }

    fn matches(&self, expr: &str, pattern: &str) -> String {
        format!("({expr} RLIKE {})", self.string(pattern))
    }

    fn group1(&self, expr: &str, pattern: &str) -> String {
        format!("regexp_extract({expr}, {}, 1)", self.string(pattern))
    }

    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String {
        format!("array_join(transform(split({expr}, '/', -1), {var} -> {body}), '/')")
    }

    fn hash_bucket(&self, expr: &str, buckets: u32) -> String {
        format!("pmod(hash({expr}), {buckets})")
    }

    fn hash_name(&self) -> &'static str {
        "Spark's hash() (murmur3)"
    }
}
