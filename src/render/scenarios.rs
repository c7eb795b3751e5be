//! The results of replayed scenarios as document blocks: per rule, all rules
//! together, the clients and endpoints rejected most, when, the burst
//! conventions, and the comparison with the decisions a log records. Shared by
//! `rlctl simulate` and `rlctl report`; built from library types only.

use crate::output::document::{Document, Table};
use crate::scenario::{Comparison, RuleResult, ScenarioResult};
use crate::simulate::summary::Rejects;
use crate::text::time::format_rfc3339;

/// A share as a percentage with two decimals.
pub fn percent(x: f64) -> String {
    format!("{:.2}%", x * 100.0)
}

/// The machine-readable rows of `--format csv`: one per rule and scenario.
fn csv_table(results: &[ScenarioResult]) -> Table {
    let mut t = Table::new(&[
        "scenario",
        "rule",
        "algo",
        "limit",
        "window_s",
        "burst",
        "instant_capacity",
        "requests",
        "allowed",
        "rejected",
        "reject_rate",
        "clients",
        "clients_rejected",
        "clients_rejected_share",
        "max_admitted_in_window",
    ])
    .csv_only();
    for r in results.iter().flat_map(|s| &s.rules) {
        let (s, x) = (&r.summary, &r.summary.totals);
        t.row(vec![
            r.scenario.clone(),
            r.rule.clone(),
            s.algo.to_string(),
            s.limit.clone(),
            s.window_s.to_string(),
            s.burst.map(|b| b.to_string()).unwrap_or_default(),
            s.instant_capacity.to_string(),
            x.requests.to_string(),
            x.allowed.to_string(),
            x.rejected.to_string(),
            x.reject_rate.to_string(),
            x.clients.to_string(),
            x.clients_rejected.to_string(),
            x.clients_rejected_share.to_string(),
            s.boundary.max_admitted.to_string(),
        ]);
    }
    t
}

/// The results of replayed scenarios: per rule, all rules together, the clients
/// and endpoints rejected most, when, and the burst conventions.
pub fn result_blocks(doc: &mut Document, results: &[ScenarioResult], top: usize) {
    doc.heading("Results");
    let mut t = Table::new(&[
        "scenario",
        "rule",
        "key",
        "limit",
        "burst>",
        "at once>",
        "requests>",
        "rejected>",
        "reject rate>",
        "clients hit>",
        "most in any W>",
    ]);
    for r in results.iter().flat_map(|s| &s.rules) {
        let s = &r.summary;
        t.row(vec![
            r.scenario.clone(),
            r.rule.clone(),
            r.key.clone(),
            s.limit.clone(),
            s.burst.map_or("-".into(), |b| b.to_string()),
            s.instant_capacity.to_string(),
            s.totals.requests.to_string(),
            s.totals.rejected.to_string(),
            percent(s.totals.reject_rate),
            format!(
                "{} ({})",
                s.totals.clients_rejected,
                percent(s.totals.clients_rejected_share)
            ),
            format!("{} ({:.2}x L)", s.boundary.max_admitted, s.boundary.ratio),
        ]);
    }
    doc.table(t);
    doc.table(csv_table(results));
    if results.iter().any(|s| s.rules.len() > 1) {
        doc.heading("All rules together");
        let mut t = Table::new(&[
            "scenario",
            "requests>",
            "rejected>",
            "reject rate>",
            "clients hit>",
        ]);
        for s in results {
            let x = &s.totals;
            t.row(vec![
                s.scenario.clone(),
                x.requests.to_string(),
                x.rejected.to_string(),
                percent(x.reject_rate),
                format!(
                    "{} ({})",
                    x.clients_rejected,
                    percent(x.clients_rejected_share)
                ),
            ]);
        }
        doc.table(t);
    }
    rejected_blocks(doc, results, top);
    detail_blocks(doc, results);
}

/// The most rejected clients and endpoints (none with `--top 0`), and when
/// the rejections happened.
fn rejected_blocks(doc: &mut Document, results: &[ScenarioResult], top: usize) {
    if top > 0 {
        top_rejected_blocks(doc, results, top);
    }
    doc.heading("When rejects happened");
    let mut t = Table::new(&[
        "scenario",
        "first reject",
        "last reject",
        "busiest minute",
        "rejects then>",
        "minutes with rejects>",
    ]);
    for s in results {
        let x = &s.totals;
        let busiest =
            (x.rejects_per_minute.iter()).max_by_key(|m| (m.rejected, std::cmp::Reverse(m.minute)));
        let (Some(first), Some(last), Some(busiest)) = (x.first_reject, x.last_reject, busiest)
        else {
            t.row(vec![
                s.scenario.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "0".into(),
                "0".into(),
            ]);
            continue;
        };
        t.row(vec![
            s.scenario.clone(),
            format_rfc3339(first),
            format_rfc3339(last),
            format_rfc3339(busiest.minute),
            busiest.rejected.to_string(),
            x.rejects_per_minute.len().to_string(),
        ]);
    }
    doc.table(t);
}

fn top_rejected_blocks(doc: &mut Document, results: &[ScenarioResult], top: usize) {
    doc.heading(format!("Most rejected clients (up to {top} per scenario)"));
    doc.table(rejects_table(results, "client", top, |s| {
        &s.totals.top_rejected_clients
    }));
    rejected_by_rule(doc, results, top);
    doc.heading(format!("Rejected per endpoint (up to {top} per scenario)"));
    doc.table(rejects_table(results, "endpoint", top, |s| {
        &s.totals.rejected_by_endpoint
    }));
}

/// The first `top` rows of each scenario's `rows`, named in column `what`.
fn rejects_table(
    results: &[ScenarioResult],
    what: &str,
    top: usize,
    rows: impl Fn(&ScenarioResult) -> &[Rejects],
) -> Table {
    let mut t = Table::new(&["scenario", what, "requests>", "rejected>"]);
    for s in results {
        for r in rows(s).iter().take(top) {
            t.row(vec![
                s.scenario.clone(),
                r.name.clone(),
                r.requests.to_string(),
                r.rejected.to_string(),
            ]);
        }
    }
    t
}

/// Each rule's own most rejected clients, by the rule's key, for the rules
/// that rejected any: whom each rule of a policy would hit, to review. Only
/// for the scenarios where that says more than the list of all rules
/// together: several rules, or one keyed otherwise than `--key` or applying
/// to some requests only.
fn rejected_by_rule(doc: &mut Document, results: &[ScenarioResult], top: usize) {
    let says_more = |s: &&ScenarioResult| {
        let all = &s.totals.top_rejected_clients;
        (s.rules.iter()).any(|r| &r.summary.totals.top_rejected_clients != all)
    };
    let shown: Vec<&ScenarioResult> = results.iter().filter(says_more).collect();
    if shown.is_empty() {
        return;
    }
    doc.heading(format!(
        "Most rejected clients per rule (up to {top} per rule)"
    ));
    let mut t = Table::new(&[
        "scenario",
        "rule",
        "key",
        "client",
        "requests>",
        "rejected>",
    ]);
    for r in shown.into_iter().flat_map(|s| &s.rules) {
        for c in r.summary.totals.top_rejected_clients.iter().take(top) {
            t.row(vec![
                r.scenario.clone(),
                r.rule.clone(),
                r.key.clone(),
                c.name.clone(),
                c.requests.to_string(),
                c.rejected.to_string(),
            ]);
        }
    }
    doc.table(t);
}

fn detail_blocks(doc: &mut Document, results: &[ScenarioResult]) {
    doc.heading("Burst conventions");
    // A paragraph each (a table would cut them to a terminal cell's width),
    // named by scenario and rule when a scenario has several rules.
    let named = results.iter().any(|s| s.rules.len() > 1);
    for r in results.iter().flat_map(|s| &s.rules) {
        let convention = format!("{}: {}", r.summary.algo, r.summary.burst_convention);
        doc.paragraph(if named {
            format!("{} / {}: {convention}", r.scenario, r.rule)
        } else {
            convention
        });
    }
    let delayed: Vec<&RuleResult> = results
        .iter()
        .flat_map(|s| &s.rules)
        .filter(|r| r.summary.delays.is_some())
        .collect();
    if !delayed.is_empty() {
        doc.heading("nginx delays of admitted requests");
        let mut t = Table::new(&[
            "scenario", "rule", "delayed>", "p50 ms>", "p99 ms>", "max ms>",
        ]);
        for r in delayed {
            let d = r.summary.delays.as_ref().expect("filtered");
            t.row(vec![
                r.scenario.clone(),
                r.rule.clone(),
                d.delayed.to_string(),
                d.p50_ms.to_string(),
                d.p99_ms.to_string(),
                d.max_ms.to_string(),
            ]);
        }
        doc.table(t);
    }
}

/// Simulated decisions against those the log records, per scenario.
pub fn comparison_blocks(doc: &mut Document, comparisons: &[Comparison]) {
    if comparisons.is_empty() {
        return;
    }
    doc.heading("Simulated against logged decisions");
    let mut t = Table::new(&[
        "scenario",
        "compared>",
        "agreement>",
        "both allow>",
        "sim allows, log rejects>",
        "sim rejects, log allows>",
        "both reject>",
    ]);
    for c in comparisons {
        t.row(vec![
            c.scenario.clone(),
            c.compared.to_string(),
            percent(c.agreement),
            c.simulated_allowed_logged_allowed.to_string(),
            c.simulated_allowed_logged_rejected.to_string(),
            c.simulated_rejected_logged_allowed.to_string(),
            c.simulated_rejected_logged_rejected.to_string(),
        ]);
    }
    doc.table(t);
    for c in comparisons.iter().filter(|c| !c.disagreements.is_empty()) {
        let mut t = Table::new(&["time", "client", "endpoint", "simulated", "logged"]);
        for d in &c.disagreements {
            let word = |ok: bool| if ok { "allowed" } else { "rejected" }.to_string();
            t.row(vec![
                d.time.clone(),
                d.client.clone(),
                d.endpoint.clone(),
                word(d.simulated_allowed),
                word(d.logged_allowed),
            ]);
        }
        doc.paragraph(format!("first disagreements ({}):", c.scenario));
        doc.table(t);
    }
}
