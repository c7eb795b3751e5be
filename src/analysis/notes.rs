//! The notes a command prints on stderr about what it read: the format of each
//! input, skipped lines, timestamp resolution, bytes that are not UTF-8, and
//! `--exclude` names that match no client. Returned as lines (log content
//! escaped for a terminal); printing them is the caller's.

use std::collections::BTreeSet;

use crate::events::Resolution;
use crate::ingest::IngestReport;
use crate::ingest::record::SkipReason;
use crate::ingest::report::holding;
use crate::policy::Exemption;
use crate::scenario::Unmatched;
use crate::stats::Analysis;
use crate::text::counted;
use crate::text::escape;

/// The notes on `report` (and on the `--exclude` names of `analysis`), one line
/// each, every line starting with `rlctl: `.
pub fn notes(report: &IngestReport, analysis: Option<&Analysis>) -> Vec<String> {
    let mut lines = Vec::new();
    for file in &report.files {
        lines.push(format!(
            "rlctl: {}: {} format, {}{}, {} parsed, {} skipped",
            escape::terminal(&file.name),
            escape::terminal(&file.format),
            counted(file.lines, "line"),
            holding(file.lines, file.glued),
            file.parsed,
            file.skipped
        ));
    }
    if report.glued > 0 {
        let (entries, were) = match report.glued {
            1 => ("1 entry".to_string(), "was"),
            n => (format!("{n} entries"), "were"),
        };
        lines.push(format!(
            "rlctl: note: {entries} {were} glued after another on the same line (a newline missing: a file that ends without one concatenated with the next, or a writer stopped mid-line); each entry was read on its own"
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
            "rlctl: note: {} had bytes that are not UTF-8 in a key read per client (the client, its user or user agent: shown as \\xHH) or the path (shown as U+FFFD)",
            counted(report.invalid_utf8_lines, "line")
        ));
    }
    let unknown = report.forwarded_unknown;
    if unknown.lines > 0 {
        let clients = match unknown.spellings {
            1 => "one client".to_string(),
            n => format!("{n} clients, one per spelling of it"),
        };
        lines.push(format!(
            "rlctl: note: {} {} `unknown` first in X-Forwarded-For (a proxy that does not name its client): keyed by xff they are {clients}, as nginx keying on that header counts them (HAProxy counts them by the connecting address, AWS WAF not at all); key by ip, or have the proxy name its clients, to tell them apart",
            counted(unknown.lines, "request"),
            if unknown.lines == 1 { "has" } else { "have" },
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

/// A note when lines without a value for `--key` (`key`) were skipped while
/// a rule of the policy keys by something else (`rule_keys`, each rule's
/// key): that rule never saw them, where a gateway would have counted them.
pub fn keyless_lines<'k>(
    report: &IngestReport,
    key: &str,
    rule_keys: impl Iterator<Item = &'k str>,
) -> Option<String> {
    let skipped = *report
        .skipped_by_reason
        .get(&SkipReason::NoClient.to_string())?;
    let others: BTreeSet<&str> = rule_keys.filter(|&k| k != key).collect();
    (!others.is_empty()).then(|| {
        let others: Vec<&str> = others.into_iter().collect();
        format!(
            "rlctl: note: lines without a value for --key {} ({skipped}) were not replayed, so rules keyed {} did not count them as a gateway would; replay with a --key every line has (ip) to count them",
            escape::terminal(key),
            escape::terminal(&others.join(", ")),
        )
    })
}

/// A warning per exemption whose client no request has, as the policy or
/// as some gateways read keys (see [`crate::scenario::unmatched`]).
pub fn unmatched_exemptions(unmatched: &Unmatched) -> Vec<String> {
    fn client(e: &Exemption) -> String {
        escape::terminal(e.client.as_deref().unwrap_or_default()).into_owned()
    }
    let by_policy = unmatched.by_policy.iter().map(|e| {
        format!(
            "rlctl: warning: exemption {}: no request has client {} (key {}), so it exempts nothing",
            escape::terminal(&e.name),
            client(e),
            escape::terminal(&e.key.text),
        )
    });
    let by_gateways = unmatched.by_gateways.iter().map(|(e, gateways)| {
        let names: Vec<&str> = gateways.iter().map(|g| g.name()).collect();
        let (read, replays) = match names.len() {
            1 => ("reads", "its replay exempts"),
            _ => ("read", "their replays exempt"),
        };
        format!(
            "rlctl: warning: exemption {}: as {} {read} key {}, no request has client {}, so {replays} nothing by it (the policy's does)",
            escape::terminal(&e.name),
            names.join(", "),
            escape::terminal(&e.key.text),
            client(e),
        )
    });
    by_policy.chain(by_gateways).collect()
}
