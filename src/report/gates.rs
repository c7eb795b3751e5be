//! CI gates on the policy's simulation: reject rate and share of clients hit per
//! rule, and flagged clients. Any failing gate makes `rlctl report` exit 1.

use serde::Serialize;

use crate::recommend::Recommendation;
use crate::scenario::{RuleResult, ScenarioResult};
use crate::text::counted;

/// The CI gates; any that fails makes the run exit 1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// Largest share of a rule's requests it may reject (0 to 1).
    pub max_reject_rate: Option<f64>,
    /// Largest share of a rule's clients it may reject at least once (0 to 1).
    pub max_clients_rejected: Option<f64>,
    /// Fail when the analysis flags any client.
    pub fail_on_flagged: bool,
}

/// One gate checked on one rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GateResult {
    /// The policy rule (or `analysis` for the flagged-clients gate).
    pub rule: String,
    /// `max_reject_rate`, `max_clients_rejected` or `fail_on_flagged`.
    pub gate: &'static str,
    pub passed: bool,
    /// The measured value and the threshold it was held to.
    pub value: f64,
    pub threshold: f64,
    /// One line for people.
    pub message: String,
    /// The rule applied to no request: the gate passes with nothing to judge.
    pub unjudged: bool,
}

/// A measured share and the threshold it is held to, as percentages: the
/// threshold exactly, as the shortest decimal that reads back as it (the way
/// `parse_share` reads a percentage), and the value with two decimals, or
/// more where two would not compare with the threshold as the value does
/// (`70.8486%` within `70.849%`, not `70.85%`; `70.851%` above `70.85%`, not
/// equal to it), or else exactly too.
fn pct_beside(value: f64, threshold: f64) -> (String, String) {
    let held = exact_percent(threshold);
    let reads_as = |shown: &str| format!("{shown}e-2").parse::<f64>().ok();
    let shown = (2..=12)
        .map(|d| format!("{:.d$}", value * 100.0))
        .find(|v| {
            reads_as(v).map(|s| s.partial_cmp(&threshold)) == Some(value.partial_cmp(&threshold))
        })
        .unwrap_or_else(|| exact_percent(value));
    (format!("{shown}%"), format!("{held}%"))
}

/// `share` as a percentage written exactly: the shortest decimal that reads
/// back as `share`, its point moved two places (`0.007` is `0.7`).
fn exact_percent(share: f64) -> String {
    let decimal = format!("{share}");
    let (whole, fraction) = decimal.split_once('.').unwrap_or((&decimal, ""));
    let fraction = format!("{fraction:0<2}");
    let (hundredths, rest) = fraction.split_at(2);
    let whole = format!("{whole}{hundredths}");
    let whole = match whole.trim_start_matches('0') {
        "" => "0",
        digits => digits,
    };
    match rest {
        "" => whole.to_string(),
        rest => format!("{whole}.{rest}"),
    }
}

/// Checks every gate asked for against the policy's scenario.
pub fn evaluate(
    gates: &Gates,
    policy: &ScenarioResult,
    recommendation: Option<&Recommendation>,
) -> Vec<GateResult> {
    let mut out = Vec::new();
    for rule in &policy.rules {
        let t = &rule.summary.totals;
        if let Some(max) = gates.max_reject_rate {
            let counts = (t.reject_rate, t.rejected, t.requests);
            out.push(share_gate(rule, "max_reject_rate", "requests", counts, max));
        }
        if let Some(max) = gates.max_clients_rejected {
            let counts = (t.clients_rejected_share, t.clients_rejected, t.clients);
            out.push(share_gate(
                rule,
                "max_clients_rejected",
                "clients",
                counts,
                max,
            ));
        }
    }
    if gates.fail_on_flagged {
        let flagged = recommendation.map_or(0, |r| r.flagged_count);
        out.push(GateResult {
            rule: "analysis".into(),
            gate: "fail_on_flagged",
            passed: flagged == 0,
            value: flagged as f64,
            threshold: 0.0,
            message: format!(
                "{} flagged: peak window above the recommended limit (--fail-on-flagged)",
                counted(flagged, "client")
            ),
            unjudged: false,
        });
    }
    out
}

/// The check of `gate` (`max_reject_rate`, `max_clients_rejected`) on one
/// rule: the share of its `noun` it rejects, `(share, rejected, of)`, held to
/// `max`. A rule that applied to no request passes with nothing to judge,
/// and says so in every format, not on stderr alone (found by review).
fn share_gate(
    rule: &RuleResult,
    gate: &'static str,
    noun: &str,
    (share, rejected, of): (f64, u64, u64),
    max: f64,
) -> GateResult {
    let passed = share <= max;
    let (value, threshold) = pct_beside(share, max);
    let flag = format!("--{}", gate.replace('_', "-"));
    let unjudged = rule.summary.totals.requests == 0;
    let message = match unjudged {
        true => format!(
            "rule `{}`: applied to no request, so nothing to judge against {flag} {threshold}; check its method, route and key",
            rule.rule
        ),
        false => format!(
            "rule `{}`: rejects {value} of its {noun} ({rejected} of {of}), {} {flag} {threshold}",
            rule.rule,
            if passed { "within" } else { "above" },
        ),
    };
    GateResult {
        rule: rule.rule.clone(),
        gate,
        passed,
        value: share,
        threshold: max,
        message,
        unjudged,
    }
}

/// The first line of a report: `PASS`, or `FAIL` with the first failing gate.
pub fn verdict(results: &[GateResult]) -> String {
    let failed: Vec<&GateResult> = results.iter().filter(|g| !g.passed).collect();
    match failed.first() {
        None if results.is_empty() => "PASS (no gates)".into(),
        None => format!("PASS: {} gate check(s) passed", results.len()),
        Some(first) if failed.len() == 1 => format!("FAIL: {}", first.message),
        Some(first) => format!(
            "FAIL: {} (and {} more failing)",
            first.message,
            failed.len() - 1
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{exact_percent, pct_beside};
    use crate::options::parse_share;

    proptest::proptest! {
        /// A threshold as shown reads back as the very same threshold.
        #[test]
        fn a_threshold_shown_reads_back_as_itself(bits in 0u64..=1.0f64.to_bits()) {
            let share = f64::from_bits(bits);
            let shown = format!("{}%", exact_percent(share));
            proptest::prop_assert_eq!(parse_share("--x", &shown).unwrap(), share, "{}", shown);
        }
    }

    #[test]
    fn a_value_is_never_shown_equal_to_a_threshold_it_is_not() {
        let share = |text: &str| parse_share("--max-reject-rate", text).unwrap();
        let shown = |value: f64, threshold: &str| pct_beside(value, share(threshold));
        assert_eq!(
            shown(0.708496, "70.849%"),
            ("70.85%".into(), "70.849%".into())
        );
        assert_eq!(
            shown(0.708486, "70.849%"),
            ("70.8486%".into(), "70.849%".into())
        );
        assert_eq!(
            shown(0.70849001, "70.849%"),
            ("70.85%".into(), "70.849%".into())
        );
        assert_eq!(
            shown(0.70851, "70.85%"),
            ("70.851%".into(), "70.85%".into())
        );
        assert_eq!(shown(0.05, "1%"), ("5.00%".into(), "1%".into()));
        assert_eq!(shown(share("1%"), "1%"), ("1.00%".into(), "1%".into()));
        assert_eq!(shown(0.0, "0.7%"), ("0.00%".into(), "0.7%".into()));
        assert_eq!(shown(0.007, "0.007"), ("0.70%".into(), "0.7%".into()));
        assert_eq!(shown(1.0, "100%"), ("100.00%".into(), "100%".into()));
        assert_eq!(
            shown(0.5, "0.000001%"),
            ("50.00%".into(), "0.000001%".into())
        );
        // Beyond twelve decimals both sides are written exactly, so a
        // failing gate never reads as equal to its threshold.
        let held = share("50.86999999999999%");
        assert_eq!(
            shown(0.5087, "50.86999999999999%"),
            ("50.87%".into(), format!("{}%", super::exact_percent(held)))
        );
        assert_eq!(super::exact_percent(held), "50.86999999999999");
        let above = f64::from_bits(held.to_bits() + 1);
        let (value, threshold) = shown(above, "50.86999999999999%");
        assert_ne!(value, threshold);
        assert!(value.trim_end_matches('%').parse::<f64>().unwrap() > 50.86999999999999);
    }
}
