//! ClickHouse: RE2 regular expressions, backslash-escaped literals, `arrayMap`
//! over `splitByChar`, and cityHash64 for samples.

use super::dialect::{SqlDialect, backslash_string};

/// ClickHouse.
pub struct ClickHouse;

impl SqlDialect for ClickHouse {
    fn name(&self) -> &'static str {
        "clickhouse"
    }

    fn string(&self, text: &str) -> String {
        backslash_string(text)
    }

    fn int_type(&self) -> &'static str {
        "Int64"
    }

    fn text_type(&self) -> &'static str {
        "String"
    }

    fn to_text(&self, expr: &str) -> String {
        format!("toString({expr})")
    }

    fn try_int(&self, expr: &str) -> String {
        format!("toInt64OrNull(toString({expr}))")
    }

    fn null_text(&self) -> String {
        "CAST(NULL AS Nullable(String))".into()
    }

    /// Only a Nullable type holds a NULL: a plain `CAST(NULL AS Int64)` is an
    /// error ("Cannot convert NULL to a non-nullable type", ClickHouse issues
    /// 28114 and 64503) or, in newer versions, 0 (issue 99607).
    fn null_int(&self) -> String {
        "CAST(NULL AS Nullable(Int64))".into()
    }

    fn timestamp_ms(&self, expr: &str) -> String {
        format!("toUnixTimestamp64Milli(toDateTime64({expr}, 3))")
    }

    fn matches(&self, expr: &str, pattern: &str) -> String {
        format!("match({expr}, {})", self.string(pattern))
    }

    fn group1(&self, expr: &str, pattern: &str) -> String {
        format!("extract({expr}, {})", self.string(pattern))
    }

    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String {
        format!("arrayStringConcat(arrayMap({var} -> {body}, splitByChar('/', {expr})), '/')")
    }

    fn hash_bucket(&self, expr: &str, buckets: u32) -> String {
        format!("(cityHash64({expr}) % {buckets})")
    }

    fn hash_name(&self) -> &'static str {
        "cityHash64"
    }
}
