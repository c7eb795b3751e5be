//! What differs between SQL engines, behind one trait: literals, casts, epoch
//! milliseconds, regular expressions, splitting a path into segments and a
//! deterministic hash of a client key. Each engine is one small file
//! ([`super::spark`], [`super::trino`], [`super::clickhouse`],
//! [`super::bigquery`], [`super::duckdb`]); the queries themselves are written
//! once in [`super::query`].
//!
//! Regular expressions are written in the syntax common to Java (Spark, Trino)
//! and RE2 (DuckDB, ClickHouse, BigQuery): character classes, `^`, `\z`, `(?:)`.

use crate::cli::{self, TimeUnit};

/// One SQL engine's spelling of the few things the queries need.
pub trait SqlDialect {
    /// The engine's name, for comments.
    fn name(&self) -> &'static str;

    /// A string literal holding exactly `text` (standard SQL: quotes doubled).
    fn string(&self, text: &str) -> String {
        format!("'{}'", text.replace('\'', "''"))
    }

    /// The 64-bit integer type.
    fn int_type(&self) -> &'static str {
        "BIGINT"
    }

    /// The text type.
    fn text_type(&self) -> &'static str {
        "VARCHAR"
    }

    /// `expr` as a 64-bit integer.
    fn to_int(&self, expr: &str) -> String {
        format!("CAST({expr} AS {})", self.int_type())
    }

    /// `expr` as text.
    fn to_text(&self, expr: &str) -> String {
        format!("CAST({expr} AS {})", self.text_type())
    }

    /// `expr` as a 64-bit integer, NULL where it is not a number.
    fn try_int(&self, expr: &str) -> String {
        format!("TRY_CAST({expr} AS {})", self.int_type())
    }

    /// A NULL of the text type.
    fn null_text(&self) -> String {
        format!("CAST(NULL AS {})", self.text_type())
    }

    /// A NULL of the 64-bit integer type.
    fn null_int(&self) -> String {
        self.to_int("NULL")
    }

    /// Milliseconds since the epoch of a time expression in `unit`. Fractional
    /// seconds are rounded to the millisecond.
    fn epoch_ms(&self, expr: &str, unit: TimeUnit) -> String {
        match unit {
            TimeUnit::Ms => self.to_int(expr),
            TimeUnit::S => self.to_int(&format!("ROUND({expr} * 1000)")),
            TimeUnit::Timestamp => self.timestamp_ms(expr),
        }
    }

    /// Milliseconds since the epoch of a TIMESTAMP expression.
    fn timestamp_ms(&self, expr: &str) -> String;

    /// floor(expr / divisor) as an integer (epoch-aligned windows, also before 1970).
    fn floor_div(&self, expr: &str, divisor: i64) -> String {
        self.to_int(&format!("FLOOR({expr} / {divisor}.0)"))
    }

    /// True when `pattern` matches somewhere in `expr`.
    fn matches(&self, expr: &str, pattern: &str) -> String;

    /// The text of the first capture group of `pattern` in `expr` (the pattern
    /// always matches where the queries use it).
    fn group1(&self, expr: &str, pattern: &str) -> String;

    /// `expr` split at every `/`, each segment `var` replaced by `body`, joined
    /// with `/` again (empty segments kept).
    fn map_segments(&self, expr: &str, var: &str, body: &str) -> String;

    /// Length in characters.
    fn length(&self, expr: &str) -> String {
        format!("LENGTH({expr})")
    }

    /// A deterministic bucket in 0..buckets of a text key, from the engine's own hash.
    fn hash_bucket(&self, expr: &str, buckets: u32) -> String;

    /// The hash `hash_bucket` uses, in words (printed with the sample query).
    fn hash_name(&self) -> &'static str;
}

/// The dialect named on the command line.
pub fn dialect(d: cli::Dialect) -> Box<dyn SqlDialect> {
    match d {
        cli::Dialect::Spark => Box::new(super::spark::Spark),
        cli::Dialect::Trino => Box::new(super::trino::Trino),
        cli::Dialect::Clickhouse => Box::new(super::clickhouse::ClickHouse),
        cli::Dialect::Bigquery => Box::new(super::bigquery::BigQuery),
        cli::Dialect::Duckdb => Box::new(super::duckdb::DuckDb),
    }
}

/// A string literal in the C style some engines use: backslashes and quotes escaped.
pub fn backslash_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('\'');
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            other => out.push(other),
        }
    }
    out.push('\'');
    out
}
