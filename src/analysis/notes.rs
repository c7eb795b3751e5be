//! The notes a command prints on stderr about what it read: the format of each
//! input, skipped lines, timestamp resolution, bytes that are not UTF-8, and
//! `--exclude` names that match no client. Returned as lines (log content
//! escaped for a terminal); printing them is the caller's.

use crate::events::Resolution;
use crate::ingest::IngestReport;
use crate::stats::Analysis;
use crate::text::escape;

/// The notes on `report` (and on the `--exclude` names of `analysis`), one line
/// each, every line starting with `rlctl: `.
pub fn notes(report: &IngestReport, analysis: Option<&Analysis>) -> Vec<String> {
    let mut lines = Vec::new();
    for file in &report.files {
        lines.push(format!(
            "rlctl: {}: {} format, {} lines, {} parsed, {} skipped",
            escape::terminal(&file.name),
            escape::terminal(&file.format),
            file.lines,
            file.parsed,
            file.skipped
        ));
    }
    for example in &report.examples {
        lines.push(format!("rlctl: skipped {}", escape::terminal(example)));
    }
    if report.skipped as usize > report.examples.len() {
        lines.push(format!(
            "rlctl: ({} skipped lines in all; by reason in the report)",
            report.skipped
        ));
    }
    if report.resolution == Resolution::Second {
        lines.push(
            "rlctl: note: timestamps have whole-second resolution, so per-second and sub-second figures are coarse; logging $msec gives millisecond resolution".to_string(),
        );
    }
    if report.invalid_utf8_lines > 0 {
        lines.push(format!(
            "rlctl: note: {} lines had bytes that are not UTF-8 in the client or path (shown as U+FFFD)",
            report.invalid_utf8_lines
        ));
    }
    for name in analysis.iter().flat_map(|a| &a.excluded_unknown) {
        lines.push(format!(
            "rlctl: warning: --exclude {}: no such client in the log",
            escape::terminal(name)
        ));
    }
    lines
}
