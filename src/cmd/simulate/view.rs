//! What `rlctl simulate` shows: the JSON contract ([`json`]) and the document the
//! text formats render ([`document`]).

use serde::Serialize;

use super::SimulateRun;
use crate::options::SimulateSettings;
use crate::output::document::{Document, Table};
use crate::render::analysis::InputJson;
use crate::render::scenarios::{comparison_blocks, percent, result_blocks};
use crate::scenario::gateway::prefix_note;
use crate::scenario::{Comparison, Estimate, RuleResult, Sampling, ScenarioResult};
use crate::simulate::Balance;
use crate::text::counted;
use crate::text::time::format_rfc3339;

/// The JSON contract of `rlctl simulate` (documented in the README).
#[derive(Debug, Serialize)]
pub struct SimulateJson<'a> {
    pub input: InputJson<'a>,
    pub key: &'a str,
    /// Where the limits came from.
    pub source: &'a str,
    pub deployment: DeploymentJson,
    /// One entry per rule and scenario (an algorithm of `--algo all`, or `policy`).
    pub results: Vec<&'a RuleResult>,
    /// Per scenario: what all its rules together did.
    pub scenarios: &'a [ScenarioResult],
    /// The algorithms a side-by-side run left out, each with why (absent when
    /// none is).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub scenarios_left_out: &'a [String],
    /// How the `--gateway` products take the policy: the rules Kong merges
    /// or leaves out, the products whose export refuses it (absent when
    /// none).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub gateway_notes: &'a [String],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub comparison: &'a [Comparison],
    /// With `--key-sample-rate`: estimates for all clients with 95% intervals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<&'a Sampling>,
}

/// The simulated deployment.
#[derive(Debug, Serialize)]
pub struct DeploymentJson {
    pub instances: u32,
    pub balance: Balance,
    pub what_if_scale: Option<f64>,
}

/// The JSON form.
pub fn json<'a>(run: &'a SimulateRun, settings: &'a SimulateSettings) -> SimulateJson<'a> {
    let span = run.table.span();
    SimulateJson {
        input: InputJson {
            report: &run.report,
            first_ts: span.map(|(a, _)| format_rfc3339(a)),
            last_ts: span.map(|(_, b)| format_rfc3339(b)),
        },
        key: &settings.ingest.keys.primary.text,
        source: &run.source,
        deployment: DeploymentJson {
            instances: settings.deployment.instances(),
            balance: settings.deployment.balance(),
            what_if_scale: settings.scale,
        },
        results: run.replayed.results.iter().flat_map(|s| &s.rules).collect(),
        scenarios: &run.replayed.results,
        scenarios_left_out: &run.left_out,
        gateway_notes: &run.policy_notes,
        comparison: &run.replayed.comparisons,
        sampling: run.sampling.as_ref(),
    }
}

/// The estimates for all clients, before the exact figures of the sample.
fn sampling_blocks(doc: &mut Document, s: &Sampling) {
    doc.heading(format!(
        "Estimates for all clients (key sample {}%, 95% intervals)",
        s.key_sample_rate * 100.0
    ));
    doc.paragraph(format!("Note: {}.", s.note));
    let mut t = Table::new(&[
        "scenario",
        "sampled clients>",
        "taken whole>",
        "requests>",
        "rejected>",
        "reject rate>",
        "clients hit>",
    ]);
    let count = |e: &Estimate| format!("{:.0} ({:.0} .. {:.0})", e.estimate, e.low, e.high);
    let rate = |e: &Estimate| {
        format!(
            "{} ({} .. {})",
            percent(e.estimate),
            percent(e.low),
            percent(e.high)
        )
    };
    for e in &s.scenarios {
        t.row(vec![
            e.scenario.clone(),
            e.sampled_clients.to_string(),
            e.certain_clients.to_string(),
            count(&e.requests),
            count(&e.rejected),
            rate(&e.reject_rate),
            format!(
                "{} ({})",
                count(&e.clients_rejected),
                rate(&e.clients_rejected_share)
            ),
        ]);
    }
    doc.table(t);
    doc.paragraph("The results below are exact for the sampled clients only.");
}

/// The document the text formats render.
pub fn document(run: &SimulateRun, settings: &SimulateSettings) -> Document {
    let requests = run.table.len();
    let mut doc = Document::new(format!(
        "rlctl simulate: {} from {}",
        counted(requests, "request"),
        counted(run.table.clients.len(), "client")
    ));
    let span = run
        .table
        .span()
        .map(|(a, b)| format!("{} .. {}", format_rfc3339(a), format_rfc3339(b)))
        .unwrap_or_default();
    let d = &settings.deployment;
    let mut facts = vec![
        ("period", span),
        ("lines", run.report.reconciled()),
        ("limits", run.source.clone()),
        (
            "deployment",
            format!(
                "{}, balance {}",
                counted(d.instances(), "instance"),
                d.balance()
            ),
        ),
    ];
    if let Some(x) = settings.scale {
        facts.push(("what-if scale", format!("traffic {x} times as dense")));
    }
    let rule_keys = (run.scenarios.iter().flat_map(|s| &s.rules)).map(|r| r.key_text.as_str());
    if let Some(note) = prefix_note(&settings.ingest.keys.primary, rule_keys, &settings.gateways) {
        facts.push(("gateway keys", note));
    }
    if !run.left_out.is_empty() {
        facts.push(("not replayed", run.left_out.join("; ")));
    }
    if let Some(s) = &run.sampling {
        facts.push((
            "key sample",
            format!("{}% of client keys", s.key_sample_rate * 100.0),
        ));
    }
    doc.facts(facts);
    for note in &run.policy_notes {
        doc.paragraph(format!("Note: {note}."));
    }
    if let Some(s) = &run.sampling {
        sampling_blocks(&mut doc, s);
    }
    result_blocks(&mut doc, &run.replayed.results, settings.top);
    comparison_blocks(&mut doc, &run.replayed.comparisons);
    doc
}
