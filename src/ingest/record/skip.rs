//! Why a line was not turned into an event: the reasons skipped lines are
//! counted by, in the words every report uses.

use std::fmt;

/// Why a line was not turned into an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// The line is empty or only white space.
    Blank,
    /// The line is longer than the limit rlctl keeps in memory.
    TooLong,
    /// The line does not have the shape of the log format.
    Malformed(&'static str),
    /// No timestamp field, or one that does not parse.
    BadTime,
    /// The status field is not a number of at most three digits (nor `-`).
    BadStatus,
    /// The fields making up the client key are all missing.
    NoClient,
    /// A field making up the client key is there but not valid UTF-8 (an
    /// address with a stray byte), so it names no client.
    ClientNotText,
    /// A JSON line that is not an object, or not valid JSON.
    BadJson,
    /// A JSON object that is not an access-log entry (no request fields).
    NotAccessEntry,
    /// A JSON object holding entries in a `records` array (Azure's envelope):
    /// entries to write one per line before reading.
    Envelope,
    /// A header or comment line (W3C `#Fields:`, `#Version:`…): not a request,
    /// and not an error for `--strict`.
    Directive,
    /// A `#Fields:` directive that names other columns than the input's first:
    /// an error, as the lines after it would be read in the wrong columns.
    ColumnsChanged,
    /// Where a parser follows headers (`watch`): a `#Fields:` directive whose
    /// columns have no time; the lines after it are read in the columns before.
    ColumnsWithoutTime,
    /// Where a parser follows headers: a `#Fields:` directive without a
    /// column that `--key field:NAME` reads; the lines after it are read in
    /// the columns before.
    ColumnsWithoutKeyField,
    /// An entry that does not parse, cut short by another glued after it on
    /// the same line (which is read on its own).
    CutShort,
    /// Where a watch detects a followed file's format: lines held for
    /// detection when it gave up on them (it tries again on the lines after).
    FormatNotDetected,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::Blank => f.write_str("blank line"),
            SkipReason::TooLong => {
                write!(f, "line longer than {} bytes", crate::ingest::lines::MAX_LINE_BYTES)
            }
            SkipReason::Malformed(what) => write!(f, "malformed line: {what}"),
            SkipReason::BadTime => f.write_str("missing or unparseable timestamp"),
            SkipReason::BadStatus => f.write_str("status is not a number of at most three digits"),
            SkipReason::NoClient => f.write_str("no value for the client key"),
            SkipReason::ClientNotText => {
                f.write_str("the client key's field is not valid UTF-8, so it names no client")
            }
            SkipReason::BadJson => f.write_str("not a JSON object, or not valid JSON"),
            SkipReason::NotAccessEntry => {
                f.write_str("JSON object without request fields (not an access entry)")
            }
            SkipReason::Envelope => f.write_str(
                "a JSON envelope of entries, Azure's {\"records\": [...]}: write one entry per line first (jq -c '.records[]')",
            ),
            SkipReason::Directive => f.write_str("header or comment line (#Fields:, #Version:, …)"),
            SkipReason::ColumnsChanged => f.write_str(
                "a #Fields: directive that names other columns than the first one of the file",
            ),
            SkipReason::ColumnsWithoutTime => f.write_str(
                "a #Fields: directive whose columns have no time (lines after it read in the columns before it)",
            ),
            SkipReason::ColumnsWithoutKeyField => f.write_str(
                "a #Fields: directive without the column a --key field: reads (lines after it read in the columns before it)",
            ),
            SkipReason::CutShort => f.write_str(
                "an entry cut short, with another glued after it on the same line (a newline missing)",
            ),
            SkipReason::FormatNotDetected => f.write_str(
                "log format not detected (watch tries again on the lines after)",
            ),
        }
    }
}
