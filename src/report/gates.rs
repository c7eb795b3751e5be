//! CI gates on the policy's simulation: reject rate and share of clients hit per
//! rule, and flagged clients. Any failing gate makes `rlctl report` exit 1.

use serde::Serialize;

use crate::recommend::Recommendation;
use crate::scenario::ScenarioResult;
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
}

fn pct(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
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
            let passed = t.reject_rate <= max;
            out.push(GateResult {
                rule: rule.rule.clone(),
                gate: "max_reject_rate",
                passed,
                value: t.reject_rate,
                threshold: max,
                message: format!(
                    "rule `{}`: rejects {} of its requests ({} of {}), {} --max-reject-rate {}",
                    rule.rule,
                    pct(t.reject_rate),
                    t.rejected,
                    t.requests,
                    if passed { "within" } else { "above" },
                    pct(max)
                ),
            });
        }
        if let Some(max) = gates.max_clients_rejected {
            let passed = t.clients_rejected_share <= max;
            out.push(GateResult {
                rule: rule.rule.clone(),
                gate: "max_clients_rejected",
                passed,
                value: t.clients_rejected_share,
                threshold: max,
                message: format!(
                    "rule `{}`: rejects {} of its clients ({} of {}), {} --max-clients-rejected {}",
                    rule.rule,
                    pct(t.clients_rejected_share),
                    t.clients_rejected,
                    t.clients,
                    if passed { "within" } else { "above" },
                    pct(max)
                ),
            });
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
        });
    }
    out
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
