//! The live terminal view of a watch: one frame of plain text per refresh
//! (the command clears the screen and writes it). Client keys, rule names and
//! file names come from the log or the policy, and so do the endpoints in a
//! profile's evidence: all are escaped for the terminal.

use std::fmt::Write;

use super::metrics::Snapshot;
use super::top::TopClient;
use crate::text::escape::terminal;
use crate::text::time::format_rfc3339;

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}%", part as f64 * 100.0 / whole as f64)
    }
}

/// A top client's profile in one line: each kind with its evidence, or its
/// peak window beside the rule's `limit` when no kind matched.
fn profile_text(c: &TopClient, limit: &str) -> String {
    if c.profile.is_empty() {
        return format!(
            "no profile matched (peak {} in a window, limit {limit})",
            c.peak_window
        );
    }
    let kinds: Vec<String> = c
        .profile
        .iter()
        .map(|f| format!("{}: {}", f.kind.label(), f.evidence))
        .collect();
    kinds.join(" | ")
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
        "{:<30} {:>10} {:<16} {:>10} {:>12} {:>8} {:>9} {:>9} {:>8} {:>9}",
        "RULE",
        "LIMIT",
        "ALGORITHM",
        "REQUESTS",
        "WOULD-REJECT",
        "RATE",
        "CLIENTS",
        "HIT (1h)",
        "HIT %",
        "UNPLACED"
    );
    for r in &s.rules {
        let _ = writeln!(
            out,
            "{:<30} {:>10} {:<16} {:>10} {:>12} {:>8} {:>9} {:>9} {:>8} {:>9}",
            terminal(&r.rule),
            r.limit,
            r.algorithm,
            r.requests,
            r.would_reject,
            percent(r.would_reject, r.requests),
            r.hour.clients_seen,
            r.hour.clients_hit,
            percent(r.hour.clients_hit, r.hour.clients_seen),
            r.unplaced,
        );
    }
    let _ = writeln!(
        out,
        "\nTop would-be-rejected clients\n  {:<20} {:<20} {:>12}  PROFILE (last hour)",
        "RULE", "CLIENT", "WOULD-REJECT"
    );
    let mut any = false;
    for r in &s.rules {
        for c in &r.top {
            any = true;
            let _ = writeln!(
                out,
                "  {:<20} {:<20} {:>12}  {}",
                terminal(&r.rule),
                terminal(&c.client),
                c.would_reject,
                terminal(&profile_text(c, &r.limit)),
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
            f.lines + f.glued - f.parsed,
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
    use crate::profile::{Finding, Kind};
    use crate::watch::metrics::FileFigures;
    use crate::watch::rolling::HourFigures;
    use crate::watch::shadow::RuleFigures;

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
                unplaced: 7,
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
                glued: 2,
                parsed: 200,
                readable: true,
                events: Default::default(),
            }],
            ..Snapshot::default()
        };
        let f = frame(&s);
        assert!(
            f.contains("2.50%") && f.contains("2.00%         7\n"),
            "{f}"
        );
        assert!(f.contains("access.log") && f.contains("following"));
        // Skipped: the lines and the entries glued onto them, less those parsed.
        assert!(f.contains("210        200         12"), "{f}");
        assert!(!f.contains('\u{1b}'), "{f}");
    }

    #[test]
    fn each_top_client_shows_its_profile_escaped() {
        let client = |name: &str, profile: Vec<Finding>, peak_window| TopClient {
            client: name.into(),
            would_reject: 959,
            error: 0,
            profile,
            peak_window,
        };
        let runaway = Finding {
            kind: Kind::RunawayLoop,
            evidence: "peak 979/1m; 4 windows in a row above 5 x p99 6 = 30/1m; \
                       100% of its requests on GET /a\u{1b}[2J"
                .into(),
            suggestion: String::new(),
        };
        let s = Snapshot {
            rules: vec![RuleFigures {
                rule: "per-client".into(),
                key: "ip".into(),
                limit: "120/1m".into(),
                algorithm: "token-bucket".into(),
                requests: 5000,
                would_reject: 1000,
                unplaced: 0,
                states: 3,
                hour: HourFigures::default(),
                top: vec![
                    client("198.51.100.7", vec![runaway], 979),
                    client("192.0.2.1", Vec::new(), 130),
                ],
            }],
            ..Snapshot::default()
        };
        let f = frame(&s);
        let lines: Vec<&str> = f.lines().collect();
        let at = lines
            .iter()
            .position(|l| *l == "Top would-be-rejected clients")
            .unwrap();
        assert_eq!(
            &lines[at + 1..at + 4],
            [
                "  RULE                 CLIENT               WOULD-REJECT  PROFILE (last hour)",
                "  per-client           198.51.100.7                  959  runaway loop: \
                 peak 979/1m; 4 windows in a row above 5 x p99 6 = 30/1m; \
                 100% of its requests on GET /a\\x1b[2J",
                "  per-client           192.0.2.1                     959  \
                 no profile matched (peak 130 in a window, limit 120/1m)",
            ]
        );
    }
}
