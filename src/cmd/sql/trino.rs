//! Trino and Presto (Athena): Java-style regular expressions, standard
//! literals, `transform` over `split`, and xxhash64 for samples.

use super::dialect::SqlDialect;

/// Trino / Presto / Athena.
pub struct Trino;

impl SqlDialect for Trino {
    fn name(&self) -> &'static str {
        "trino"
    }

    fn timestamp_ms(&self, expr: &str) -> String {
        self.to_int(&format!("round(to_unixtime({expr}) * 1000)"))
    }

    fn floor_div(&self, expr: &str, divisor: i64) -> String {
        self.to_int(&format!("floor(CAST({expr} AS DOUBLE) / {divisor})"))
    }

    fn matches(&self, expr: &str, pattern: &str) -> String {
        format!("regexp_like({expr}, {})", self.string(pattern))
    }

    fn group1(&self, expr: &str, pattern: &str) -> String {
        format!("regexp_extract({expr}, {}, 1)", self.string(pattern))
    }

    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String {
        format!("array_join(transform(split({expr}, '/'), {var} -> {body}), '/')")
    }

    fn hash_bucket(&self, expr: &str, buckets: u32) -> String {
        let h = format!("from_big_endian_64(xxhash64(to_utf8({expr})))");
        format!("((({h}) % {buckets} + {buckets}) % {buckets})")
    }

    fn hash_name(&self) -> &'static str {
        "xxhash64 of the UTF-8 key"
    }
}
