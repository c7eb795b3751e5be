//! The live terminal view of a watch: one frame of plain text per refresh
//! (the command clears the screen and writes it). Client keys, rule names and
//! file names come from the log or the policy and are escaped for the terminal.

use std::fmt::Write;

use super::metrics::Snapshot;
use crate::text::escape::terminal;
use crate::text::time::format_rfc3339;

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
}

/// One frame of the view.
pub fn frame(s: &Snapshot) -> String {
    let mut out = String::new();
    let newest = s.newest_ms.map_or("-".into(), format_rfc3339);
    let lag = s.lag_seconds.map_or("-".into(), |l| format!("{l:.1} s"));
    let _ = writeln!(
        out,
        "rlctl watch (dry run)   newest log time {newest}   lag {lag}   pending {}   late {}   exempt {}\n",
        s.pending, s.late_lines, s.exempt_requests
    );
    let _ = writeln!(
        out,
        "{:<30} {:>10} {:<16} {:>10} {:>12} {:>8} {:>9} {:>9} {:>8}",
        "RULE",
        "LIMIT",
        "ALGORITHM",
        "REQUESTS",
        "WOULD-REJECT",
        "RATE",
        "CLIENTS",
        "HIT (1h)",
        "HIT %"
    );
    for r in &s.rules {
        let _ = writeln!(
            out,
            "{:<30} {:>10} {:<16} {:>10} {:>12} {:>8} {:>9} {:>9} {:>8}",
            terminal(&r.rule),
            r.limit,
            r.algorithm,
            r.requests,
            r.would_reject,
            percent(r.would_reject, r.requests),
            r.hour.clients_seen,
            r.hour.clients_hit,
            percent(r.hour.clients_hit, r.hour.clients_seen),
        );
    }
    let _ = writeln!(out, "\nTop would-be-rejected clients");
    let mut any = false;
    for r in &s.rules {
        for c in &r.top {
            any = true;
            let p = |i: usize| r.hour.quantiles.get(i).map_or(0, |q| q.1);
            let _ = writeln!(
                out,
                "  {:<24} {:<40} {:>8} would-reject   (rule: per-client window p50 {} p99 {}, limit {})",
                terminal(&r.rule),
                terminal(&c.client),
                c.would_reject,
                p(0),
                p(2),
                r.limit
            );
        }
    }
    if !any {
        let _ = writeln!(out, "  none yet");
    }
    let _ = writeln!(
        out,
        "\n{:<50} {:>10} {:>10} {:>10}  STATE",
        "FILE", "LINES", "PARSED", "SKIPPED"
    );
    for f in &s.files {
        let events: Vec<String> = f.events.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            out,
            "{:<50} {:>10} {:>10} {:>10}  {}{}",
            terminal(&f.file),
            f.lines,
            f.parsed,
            f.lines - f.parsed,
            if f.readable {
                "following"
            } else {
                "NOT READABLE"
            },
            if events.is_empty() {
                String::new()
            } else {
                format!(" ({})", events.join(", "))
            },
        );
    }
    for (reason, n) in &s.skipped {
        let _ = writeln!(out, "  skipped: {n} {}", terminal(reason));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::metrics::FileFigures;
    use crate::watch::rolling::HourFigures;
    use crate::watch::shadow::RuleFigures;
    use crate::watch::top::TopClient;

    #[test]
    fn a_frame_shows_rules_top_clients_and_files_escaped() {
        let s = Snapshot {
            rules: vec![RuleFigures {
                rule: "global".into(),
                key: "ip".into(),
                limit: "20/1m".into(),
                algorithm: "gcra".into(),
                requests: 200,
                would_reject: 5,
                states: 1,
                hour: HourFigures {
                    clients_seen: 50,
                    clients_hit: 1,
                    ..HourFigures::default()
                },
                top: vec![TopClient {
                    client: "10.0.0.1\u{1b}[2J".into(),
                    would_reject: 5,
                    error: 0,
                    profile: Vec::new(),
                    peak_window: 0,
                }],
            }],
            files: vec![FileFigures {
                file: "access.log".into(),
                lines: 210,
                parsed: 200,
                readable: true,
                events: Default::default(),
            }],
            ..Snapshot::default()
        };
        let f = frame(&s);
        assert!(f.contains("2.50%") && f.contains("2.00%"), "{f}");
        assert!(f.contains("access.log") && f.contains("following"));
        assert!(!f.contains('\u{1b}'), "{f}");
    }
}
