//! The Prometheus text exposition (format 0.0.4) of a watch, with fixed
//! metric names that dashboards and tests rely on:
//!
//! | metric | labels | what |
//! |---|---|---|
//! | `rlctl_requests_total` | `rule` | requests the rule applied to and decided |
//! | `rlctl_requests_unplaced_total` | `rule` | late requests it applied to that were not decided: this rule or another that applies could not place them in their client's time order |
//! | `rlctl_would_reject_total` | `rule` | requests the rule would have rejected |
//! | `rlctl_clients_seen` | `rule`, `window="1h"` | distinct clients in the last hour |
//! | `rlctl_clients_hit` | `rule`, `window="1h"` | of those, clients with a would-reject |
//! | `rlctl_lines_total` | `file` | lines read (parsed or skipped) |
//! | `rlctl_lines_skipped_total` | `reason` | skipped lines by reason |
//! | `rlctl_lag_seconds` | | wall clock minus the newest log timestamp |
//! | `rlctl_client_window_requests` | `rule`, `quantile` | a summary of requests per client per window, last hour (with `_sum`, `_count`) |
//! | `rlctl_policy_limit` | `rule`, `window` | the rule's limit L per window (the basis beside the quantiles) |
//! | `rlctl_client_windows` | `rule` | client windows the quantiles rest on |
//!
//! and, so that a problem while following shows on a dashboard:
//! `rlctl_lines_parsed_total{file}`, `rlctl_lines_late_total`,
//! `rlctl_requests_future_total`, `rlctl_requests_exempt_total`,
//! `rlctl_file_readable{file}`, `rlctl_file_events_total{file,event}`,
//! `rlctl_limiter_states{rule}`, `rlctl_reorder_pending`.
//!
//! Label values are escaped as the exposition format requires (backslash,
//! double quote and newline).

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use super::shadow::RuleFigures;

/// One followed file's figures.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileFigures {
    pub file: String,
    pub lines: u64,
    /// Entries glued after another on the same line, read on their own
    /// (`lines + glued = parsed + skipped`).
    pub glued: u64,
    pub parsed: u64,
    /// A regular file is open at the path.
    pub readable: bool,
    /// Rotations and problems seen, by kind (`replaced`, `truncated`, `missing`, ...).
    pub events: BTreeMap<String, u64>,
}

/// Everything a watch exports at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Snapshot {
    pub rules: Vec<RuleFigures>,
    pub files: Vec<FileFigures>,
    /// Skipped lines by reason, all files.
    pub skipped: BTreeMap<String, u64>,
    /// Requests an exemption matched (admitted, counted by no rule).
    pub exempt_requests: u64,
    /// Requests older than one already released (late): decided where every rule places them.
    pub late_lines: u64,
    /// Requests not replayed: their timestamp was over an hour ahead of the wall clock.
    pub future_requests: u64,
    /// Requests waiting in the reorder buffer.
    pub pending: usize,
    /// The newest log timestamp, ms since the epoch.
    pub newest_ms: Option<i64>,
    /// Wall clock minus the newest log timestamp, in seconds.
    pub lag_seconds: Option<f64>,
}

/// Escapes a label value: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

struct Exposition(String);

impl Exposition {
    fn header(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (key, val)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{key}=\"{}\"", escape_label(val));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {value}");
    }
}

/// Renders a snapshot as Prometheus text.
pub fn render(s: &Snapshot) -> String {
    let mut e = Exposition(String::new());
    let per_rule = |e: &mut Exposition, name, kind, help, value: &dyn Fn(&RuleFigures) -> u64| {
        e.header(name, kind, help);
        for r in &s.rules {
            e.sample(name, &[("rule", &r.rule)], value(r));
        }
    };
    per_rule(
        &mut e,
        "rlctl_requests_total",
        "counter",
        "Requests each rule applied to and decided.",
        &|r| r.requests,
    );
    per_rule(
        &mut e,
        "rlctl_requests_unplaced_total",
        "counter",
        "Late requests each rule applied to that were not decided: it or another rule that applies could not place them in their client's time order.",
        &|r| r.unplaced,
    );
    per_rule(
        &mut e,
        "rlctl_would_reject_total",
        "counter",
        "Requests each rule would have rejected.",
        &|r| r.would_reject,
    );
    for (name, help, value) in [
        (
            "rlctl_clients_seen",
            "Distinct clients each rule applied to in the last hour of log time.",
            (|r: &RuleFigures| r.hour.clients_seen) as fn(&RuleFigures) -> u64,
        ),
        (
            "rlctl_clients_hit",
            "Distinct clients with at least one would-reject in the last hour of log time.",
            |r: &RuleFigures| r.hour.clients_hit,
        ),
    ] {
        e.header(name, "gauge", help);
        for r in &s.rules {
            e.sample(name, &[("rule", &r.rule), ("window", "1h")], value(r));
        }
    }
    // A summary: its quantiles, then the sum and count of the windows.
    e.header(
        "rlctl_client_window_requests",
        "summary",
        "Requests per client per window of the rule (nearest-rank quantiles), windows that ended in the last hour.",
    );
    for r in &s.rules {
        for (quantile, value) in &r.hour.quantiles {
            e.sample(
                "rlctl_client_window_requests",
                &[("rule", &r.rule), ("quantile", quantile)],
                value,
            );
        }
        let rule = [("rule", r.rule.as_str())];
        e.sample("rlctl_client_window_requests_sum", &rule, r.hour.requests);
        e.sample("rlctl_client_window_requests_count", &rule, r.hour.windows);
    }
    per_rule(
        &mut e,
        "rlctl_client_windows",
        "gauge",
        "Client windows the quantiles rest on.",
        &|r| r.hour.windows,
    );
    e.header(
        "rlctl_policy_limit",
        "gauge",
        "The limit L of each rule, per its window.",
    );
    for r in &s.rules {
        let window = r.limit.split_once('/').map_or("", |(_, w)| w);
        let limit = r.limit.split_once('/').map_or("0", |(l, _)| l);
        e.sample(
            "rlctl_policy_limit",
            &[("rule", &r.rule), ("window", window)],
            limit,
        );
    }
    per_rule(
        &mut e,
        "rlctl_limiter_states",
        "gauge",
        "Client keys whose limiter state is kept (not back to empty).",
        &|r| r.states as u64,
    );
    e.header(
        "rlctl_lines_total",
        "counter",
        "Lines read from each file, parsed or skipped.",
    );
    for f in &s.files {
        e.sample("rlctl_lines_total", &[("file", &f.file)], f.lines);
    }
    e.header(
        "rlctl_entries_glued_total",
        "counter",
        "Entries found glued after another on the same line (a newline missing), each parsed or skipped on its own, per file.",
    );
    for f in &s.files {
        e.sample("rlctl_entries_glued_total", &[("file", &f.file)], f.glued);
    }
    e.header(
        "rlctl_lines_parsed_total",
        "counter",
        "Lines parsed into requests, per file.",
    );
    for f in &s.files {
        e.sample("rlctl_lines_parsed_total", &[("file", &f.file)], f.parsed);
    }
    e.header(
        "rlctl_lines_skipped_total",
        "counter",
        "Lines skipped, by reason.",
    );
    for (reason, n) in &s.skipped {
        e.sample("rlctl_lines_skipped_total", &[("reason", reason)], n);
    }
    e.header(
        "rlctl_requests_exempt_total",
        "counter",
        "Requests an exempt rule matched: admitted, counted by no rule.",
    );
    e.sample("rlctl_requests_exempt_total", &[], s.exempt_requests);
    e.header(
        "rlctl_lines_late_total",
        "counter",
        "Requests older than one already released (past --max-delay): decided in their client's own time where every rule can place them, else unplaced.",
    );
    e.sample("rlctl_lines_late_total", &[], s.late_lines);
    e.header(
        "rlctl_requests_future_total",
        "counter",
        "Requests not replayed: timestamp over an hour ahead of the wall clock.",
    );
    e.sample("rlctl_requests_future_total", &[], s.future_requests);
    e.header(
        "rlctl_file_readable",
        "gauge",
        "1 when a regular file is open at the path.",
    );
    for f in &s.files {
        e.sample(
            "rlctl_file_readable",
            &[("file", &f.file)],
            u8::from(f.readable),
        );
    }
    e.header(
        "rlctl_file_events_total",
        "counter",
        "Rotations and problems seen while following, by kind.",
    );
    for f in &s.files {
        for (event, n) in &f.events {
            e.sample(
                "rlctl_file_events_total",
                &[("file", &f.file), ("event", event)],
                n,
            );
        }
    }
    e.header(
        "rlctl_reorder_pending",
        "gauge",
        "Requests waiting in the reorder buffer.",
    );
    e.sample("rlctl_reorder_pending", &[], s.pending);
    e.header(
        "rlctl_lag_seconds",
        "gauge",
        "Wall clock minus the newest log timestamp, in seconds.",
    );
    if let Some(lag) = s.lag_seconds {
        e.sample("rlctl_lag_seconds", &[], format!("{lag:.3}"));
    }
    e.0
}

#[cfg(test)]
mod tests;
