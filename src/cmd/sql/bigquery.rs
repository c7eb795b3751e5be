//! Google BigQuery (GoogleSQL): RE2 regular expressions, backslash-escaped
//! literals, an `ARRAY(SELECT ... FROM UNNEST(SPLIT(...)))` per path, and
//! FARM_FINGERPRINT for samples.

use super::dialect::{SqlDialect, backslash_string};

/// BigQuery.
pub struct BigQuery;

impl SqlDialect for BigQuery {
    fn name(&self) -> &'static str {
        "bigquery"
    }

    fn string(&self, text: &str) -> String {
        backslash_string(text)
    }

    fn int_type(&self) -> &'static str {
        "INT64"
    }

    fn text_type(&self) -> &'static str {
        "STRING"
    }

    fn try_int(&self, expr: &str) -> String {
        format!("SAFE_CAST({expr} AS INT64)")
    }

    fn timestamp_ms(&self, expr: &str) -> String {
        format!("UNIX_MILLIS({expr})")
    }

    fn matches(&self, expr: &str, pattern: &str) -> String {
        format!("REGEXP_CONTAINS({expr}, {})", self.string(pattern))
    }

    fn group1(&self, expr: &str, pattern: &str) -> String {
        format!("REGEXP_EXTRACT({expr}, {})", self.string(pattern))
    }

    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String {
        format!(
            "ARRAY_TO_STRING(ARRAY(SELECT {body} FROM UNNEST(SPLIT({expr}, '/')) AS {var} WITH OFFSET AS segment_no ORDER BY segment_no), '/')"
        )
    }

    fn hash_bucket(&self, expr: &str, buckets: u32) -> String {
        format!("MOD(MOD(FARM_FINGERPRINT({expr}), {buckets}) + {buckets}, {buckets})")
    }

    fn hash_name(&self) -> &'static str {
        "FARM_FINGERPRINT"
    }
}
