//! What `rlctl report` shows: one document for Markdown and HTML, the JSON
//! contract, and JUnit XML. The verdict is the first line of every text output.

use serde::Serialize;

use crate::options::ReportSettings;
use crate::output::document::{Document, Table};
use crate::output::junit;
use crate::render::analysis::{self as analyze_view, AnalyzeJson};
use crate::render::scenarios as simulate_view;
use crate::report::{GateResult, ReportRun, charts};
use crate::scenario::gateway::{policy_notes, prefix_note};
use crate::scenario::{RuleResult, ScenarioResult};
use crate::text::counted;
use crate::text::time::format_rfc3339;

/// The current time, for `--stamp`.
pub fn now_rfc3339() -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    format_rfc3339(ms)
}

/// The JSON contract of `rlctl report` (documented in the README).
#[derive(Debug, Serialize)]
pub struct ReportJson<'a> {
    /// `PASS ...` or `FAIL: ...`.
    pub verdict: &'a str,
    pub passed: bool,
    pub gates: &'a [GateResult],
    /// Where the judged policy came from.
    pub policy_source: &'a str,
    /// The endpoints the recommended policy has no rule for although they
    /// have a limit of their own in the analysis (absent when none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub unruled_endpoints: &'a [String],
    /// The policy's simulation: one entry per rule, then all rules together.
    pub policy: PolicyJson<'a>,
    /// The policy's limits under each algorithm, all rules together.
    pub side_by_side: &'a [ScenarioResult],
    /// The algorithms left out of `side_by_side`, each with why (absent when
    /// none is).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub side_by_side_left_out: &'a [String],
    /// The policy as each `--gateway` enforces it, all rules together (absent
    /// without `--gateway`; the documented models are named "... (model)").
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub gateways: &'a [ScenarioResult],
    /// How the `--gateway` products take the policy: the rules Kong merges
    /// or leaves out, the products whose export refuses it (absent when
    /// none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gateway_notes: Vec<String>,
    /// The traffic analysis, as `rlctl analyze --format json` writes it.
    pub analysis: AnalyzeJson<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated_at: Option<&'a str>,
}

/// The policy's simulation.
#[derive(Debug, Serialize)]
pub struct PolicyJson<'a> {
    pub rules: &'a [RuleResult],
    pub overall: &'a ScenarioResult,
}

/// The JSON form.
pub fn json<'a>(
    run: &'a ReportRun,
    settings: &'a ReportSettings,
    stamp: Option<&'a str>,
) -> ReportJson<'a> {
    ReportJson {
        verdict: &run.verdict,
        passed: run.passed(),
        gates: &run.gates,
        policy_source: &run.source,
        unruled_endpoints: &run.unruled,
        policy: PolicyJson {
            rules: &run.policy.rules,
            overall: &run.policy,
        },
        side_by_side: &run.side_by_side,
        side_by_side_left_out: &run.side_by_side_left_out,
        gateways: &run.gateways,
        gateway_notes: policy_notes(
            &run.rules,
            &settings.plan.exemptions,
            &settings.plan.gateways,
        ),
        analysis: analyze_view::json(&run.analysis, &settings.plan.analysis),
        generated_at: stamp,
    }
}

/// The gate of `--fail-on-flagged`.
const FLAGGED_GATE: &str = "fail_on_flagged";

/// JUnit XML: a test case per policy rule with its gates, and one for flagged clients.
pub fn junit(run: &ReportRun) -> String {
    let mut cases: Vec<junit::Case> = run
        .policy
        .rules
        .iter()
        .map(|r| junit::Case {
            name: r.rule.clone(),
            checks: run
                .gates
                .iter()
                .filter(|g| g.rule == r.rule && g.gate != FLAGGED_GATE)
                .map(|g| (g.passed, g.message.clone()))
                .collect(),
        })
        .collect();
    // By the gate, not its `rule` (`analysis`), which a policy rule may be called.
    let analysis: Vec<(bool, String)> = run
        .gates
        .iter()
        .filter(|g| g.gate == FLAGGED_GATE)
        .map(|g| (g.passed, g.message.clone()))
        .collect();
    if !analysis.is_empty() {
        cases.push(junit::Case {
            name: "flagged-clients".into(),
            checks: analysis,
        });
    }
    junit::render("rlctl report", &cases)
}

/// The document Markdown and HTML render.
pub fn document(run: &ReportRun, settings: &ReportSettings, stamp: Option<&str>) -> Document {
    let mut doc = Document::new(format!("rlctl report: {}", run.verdict));
    let a = &run.analysis;
    let mut facts = vec![
        (
            "requests",
            format!(
                "{} from {}",
                a.analysis.overall.requests,
                counted(a.analysis.overall.clients, "client")
            ),
        ),
        (
            "period",
            a.ingested
                .table
                .span()
                .map(|(x, y)| format!("{} .. {}", format_rfc3339(x), format_rfc3339(y)))
                .unwrap_or_default(),
        ),
        ("policy", run.source.clone()),
    ];
    if let Some(stamp) = stamp {
        facts.push(("generated", stamp.to_string()));
    }
    doc.facts(facts);
    if !run.gates.is_empty() {
        doc.heading("Gates");
        let failed: Vec<&GateResult> = run.gates.iter().filter(|g| !g.passed).collect();
        if !failed.is_empty() {
            let mut t = Table::new(&["rule", "gate", "detail"]);
            for g in &failed {
                t.row(vec![g.rule.clone(), g.gate.into(), g.message.clone()]);
            }
            doc.table(t);
        }
        doc.paragraph(format!(
            "{} of {} gate checks passed (every check is in the JSON report).",
            run.gates.len() - failed.len(),
            run.gates.len()
        ));
        let unjudged = run.gates.iter().filter(|g| g.passed && g.unjudged);
        for g in unjudged {
            doc.paragraph(g.message.clone());
        }
    }

    doc.heading("The policy on this traffic");
    let mut t = Table::new(&[
        "rule",
        "key",
        "algorithm",
        "limit",
        "burst>",
        "requests>",
        "rejected>",
        "reject rate>",
        "clients hit>",
    ]);
    for r in &run.policy.rules {
        let s = &r.summary;
        t.row(vec![
            r.rule.clone(),
            r.key.clone(),
            s.algo.to_string(),
            s.limit.clone(),
            s.burst.map_or("-".into(), |b| b.to_string()),
            s.totals.requests.to_string(),
            s.totals.rejected.to_string(),
            format!("{:.2}%", s.totals.reject_rate * 100.0),
            format!(
                "{} ({:.2}%)",
                s.totals.clients_rejected,
                s.totals.clients_rejected_share * 100.0
            ),
        ]);
    }
    doc.table(t);
    let all = &run.policy.totals;
    doc.paragraph(format!(
        "All rules together reject {} of {} requests, from {} of {} ({:.2}%): the clients \
         this policy would hit (by the client key; --max-clients-rejected gates each rule \
         by its own). The analysis flags only clients whose peak window exceeds the overall \
         recommended limit (--fail-on-flagged); a rule for an endpoint, or the burst, can \
         reject others.",
        all.rejected,
        all.requests,
        all.clients_rejected,
        counted(all.clients, "client"),
        all.clients_rejected_share * 100.0
    ));
    if !run.unruled.is_empty() {
        doc.paragraph(format!(
            "The recommended policy has no rule for these endpoints, though the endpoints \
             table gives them a limit of their own (the global rule still covers them): a name \
             that is not a method and a path template, a route limited to a host, or a path \
             that is not UTF-8 once decoded, which no gateway's route matches as logged: {}",
            run.unruled.join(", ")
        ));
    }
    doc.chart(charts::traffic_over_time(run));

    doc.heading("All six algorithms at the policy's limits");
    let mut t = Table::new(&[
        "algorithm",
        "requests>",
        "rejected>",
        "reject rate>",
        "clients hit>",
    ]);
    for s in &run.side_by_side {
        let x = &s.totals;
        t.row(vec![
            s.scenario.clone(),
            x.requests.to_string(),
            x.rejected.to_string(),
            format!("{:.2}%", x.reject_rate * 100.0),
            format!(
                "{} ({:.2}%)",
                x.clients_rejected,
                x.clients_rejected_share * 100.0
            ),
        ]);
    }
    doc.table(t);
    for left_out in &run.side_by_side_left_out {
        doc.paragraph(format!("Not replayed: {left_out}"));
    }
    doc.chart(charts::rejects_over_time(run));
    if !run.gateways.is_empty() {
        let primary = &settings.plan.analysis.ingest.keys.primary;
        let rule_keys = run.rules.iter().map(|r| r.key.text.as_str());
        let plan = &settings.plan;
        let notes = (prefix_note(primary, rule_keys, &plan.gateways).into_iter())
            .chain(policy_notes(&run.rules, &plan.exemptions, &plan.gateways));
        gateway_section(&mut doc, run, notes);
    }

    // The traffic analysis, as `rlctl analyze` shows it, under its own headings.
    let analysis = analyze_view::document(&run.analysis, &settings.plan.analysis);
    doc.heading("Traffic");
    doc.blocks.extend(analysis.blocks);
    doc.chart(charts::per_client_distribution(run));
    doc.chart(charts::endpoints(run, settings.plan.top));

    doc.heading("The policy in detail");
    simulate_view::result_blocks(
        &mut doc,
        std::slice::from_ref(&run.policy),
        settings.plan.top,
    );
    doc
}

/// "The policy as your gateway enforces it": each `--gateway` next to the
/// policy, the models labelled.
fn gateway_section(doc: &mut Document, run: &ReportRun, notes: impl Iterator<Item = String>) {
    doc.heading("The policy as your gateway enforces it");
    doc.paragraph(
        "The policy replayed as each gateway enforces the configuration `rlctl export` writes for it: its window alignment, time resolution, arithmetic, and whether it counts rejected requests (docs/gateways.md). Scenarios marked (model) follow the vendor's approximate documentation and are not exact.".to_string(),
    );
    for note in notes {
        doc.paragraph(format!("Note: {note}."));
    }
    let mut t = Table::new(&[
        "gateway",
        "requests>",
        "rejected>",
        "vs policy>",
        "reject rate>",
        "clients hit>",
    ]);
    let policy = run.policy.totals.rejected as i64;
    for s in &run.gateways {
        let x = &s.totals;
        t.row(vec![
            s.scenario.clone(),
            x.requests.to_string(),
            x.rejected.to_string(),
            format!("{:+}", x.rejected as i64 - policy),
            format!("{:.2}%", x.reject_rate * 100.0),
            format!(
                "{} ({:.2}%)",
                x.clients_rejected,
                x.clients_rejected_share * 100.0
            ),
        ]);
    }
    doc.table(t);
}
