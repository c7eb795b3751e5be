//! What ingestion read, parsed and skipped, per input and in all: the
//! counts that reconcile (`lines = parsed + skipped`, or `lines + glued =
//! parsed + skipped` when entries were glued onto one line), the skip
//! reasons and their first examples.

use std::collections::BTreeMap;

use serde::Serialize;

use super::record::SkipReason;
use crate::events::Resolution;

/// Per-input counts.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub name: String,
    /// The format used (detected or given).
    pub format: String,
    pub compression: String,
    pub lines: u64,
    /// Entries glued after another on the same line (a newline missing):
    /// `lines + glued = parsed + skipped`.
    #[serde(skip_serializing_if = "is_zero")]
    pub glued: u64,
    pub parsed: u64,
    pub skipped: u64,
}

/// What ingestion read, parsed and skipped.
#[derive(Debug, Clone, Serialize)]
pub struct IngestReport {
    pub files: Vec<FileReport>,
    pub lines: u64,
    /// Entries glued after another on the same line, read on their own.
    #[serde(skip_serializing_if = "is_zero")]
    pub glued: u64,
    pub parsed: u64,
    pub skipped: u64,
    /// Skipped lines by reason.
    pub skipped_by_reason: BTreeMap<String, u64>,
    /// The first skipped lines as `file:line: reason`.
    pub examples: Vec<String>,
    pub resolution: Resolution,
    /// Parsed lines whose client key or endpoint had bytes that are not UTF-8
    /// (shown with U+FFFD).
    pub invalid_utf8_lines: u64,
    /// Parsed lines keyed by `--key xff` on the token `unknown` (any case),
    /// which proxies write for a client they do not name: one client per
    /// spelling for a gateway keying on X-Forwarded-For, as for rlctl (a
    /// note says so).
    #[serde(skip)]
    pub forwarded_unknown: ForwardedUnknown,
}

/// The requests keyed on `unknown` (see [`IngestReport::forwarded_unknown`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ForwardedUnknown {
    pub lines: u64,
    /// Clients among them: one per spelling (`unknown`, `UNKNOWN`).
    pub spellings: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl IngestReport {
    /// The report of `rows` events read whole from one source that is no
    /// log (an event table, a SQL result): each a line, parsed.
    pub fn of_rows(name: String, format: &str, rows: u64, resolution: Resolution) -> Self {
        IngestReport {
            files: vec![FileReport {
                name,
                format: format.into(),
                compression: "none".into(),
                lines: rows,
                glued: 0,
                parsed: rows,
                skipped: 0,
            }],
            lines: rows,
            glued: 0,
            parsed: rows,
            skipped: 0,
            skipped_by_reason: BTreeMap::new(),
            examples: Vec::new(),
            resolution,
            invalid_utf8_lines: 0,
            forwarded_unknown: ForwardedUnknown::default(),
        }
    }

    /// How the lines read reconcile with those parsed and skipped, in words:
    /// `4 read = 3 parsed + 1 skipped`, with the entries when some lines held
    /// more than one (`4 read holding 6 entries = 5 parsed + 1 skipped`).
    pub fn reconciled(&self) -> String {
        format!(
            "{} read{} = {} parsed + {} skipped",
            self.lines,
            holding(self.lines, self.glued),
            self.parsed,
            self.skipped
        )
    }

    /// The error when nothing was parsed: what was read, the first telling
    /// line skipped (not a header or a blank one), and what to check: the
    /// client key when that line had no value for it, else the log format.
    pub fn nothing_parsed(&self) -> String {
        let files: Vec<&str> = self.files.iter().map(|f| f.name.as_str()).collect();
        let examples: Vec<&String> = self.examples.iter().collect();
        let counts = (self.lines, self.parsed, self.skipped);
        nothing_parsed_in(&files.join(", "), counts, &examples)
    }

    /// The error when one input of several had lines but none parsed (the
    /// others did): a file in another format, or no access log, that would
    /// otherwise pass unseen among them.
    pub fn an_input_parsed_nothing(&self) -> Option<String> {
        if self.parsed == 0 {
            return None;
        }
        let file = self.files.iter().find(|f| f.lines > 0 && f.parsed == 0)?;
        let prefix = format!("{}:", file.name);
        let examples: Vec<&String> = (self.examples.iter())
            .filter(|e| e.starts_with(&prefix))
            .collect();
        let counts = (file.lines, file.parsed, file.skipped);
        Some(format!(
            "{}; the other inputs parsed: leave this one out if it holds no access log",
            nothing_parsed_in(&file.name, counts, &examples)
        ))
    }
}

/// [`IngestReport::nothing_parsed`] of the inputs `names`, with their
/// (lines, parsed, skipped) counts and their first skipped lines.
fn nothing_parsed_in(
    names: &str,
    (lines, parsed, skipped): (u64, u64, u64),
    examples: &[&String],
) -> String {
    let mut message = format!(
        "no requests found in {names}: {} read, {parsed} parsed, {skipped} skipped",
        crate::text::counted(lines, "line"),
    );
    let ordinary = [SkipReason::Directive, SkipReason::Blank].map(|r| r.to_string());
    let telling = (examples.iter())
        .find(|e| !ordinary.iter().any(|r| e.ends_with(r.as_str())))
        .or(examples.first());
    if let Some(first) = telling {
        let ends = |reason: SkipReason| first.ends_with(&reason.to_string());
        let advice = if ends(SkipReason::NoClient) {
            "check --key: the lines parse, but have no value for it"
        } else if ends(SkipReason::Envelope) {
            "then read that file"
        } else {
            "check --log-format"
        };
        message.push_str(&format!(" (first: {first}); {advice}"));
    }
    message
}

/// ` holding N entries` when `glued` entries were glued onto some of the
/// `lines`, else nothing: how counts of lines say the entries they held.
pub fn holding(lines: u64, glued: u64) -> String {
    match glued {
        0 => String::new(),
        glued => format!(" holding {} entries", lines + glued),
    }
}
