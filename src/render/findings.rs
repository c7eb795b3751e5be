//! The parts of the analyze report that say who and what stands out: the
//! clients separated from the baseline, client profiles, and the endpoint
//! templates discovered from the paths (every text format renders them from
//! the one document; JSON carries the same data).

use crate::analysis::AnalyzeRun;
use crate::output::document::{Document, Table};
use crate::profile::{ClientProfile, PROFILES_LISTED};
use crate::recommend::{BaselineRule, Recommendation, SeparatedClient};
use crate::text::counted;

/// The baseline line of the recommendation.
pub fn baseline_fact(doc: &mut Document, r: &Recommendation) {
    let b = &r.baseline;
    let what = match b.rule {
        BaselineRule::All => "all client-windows (--baseline all)".to_string(),
        BaselineRule::FewClients => b
            .note
            .clone()
            .unwrap_or_else(|| "literal definition".into()),
        BaselineRule::Robust if b.separated_count == 0 => {
            "robust: no client separated (no population of its own)".into()
        }
        BaselineRule::Robust => format!(
            "robust: {} separated; p99 {} and p99.9 {} of the other {}",
            counted(b.separated_count, "client"),
            b.p99,
            b.p999,
            counted(b.samples, "client-window")
        ),
    };
    doc.facts(vec![("baseline", what)]);
}

/// The clients separated from the baseline, in a section of their own.
pub fn separated_blocks(doc: &mut Document, r: &Recommendation) {
    let b = &r.baseline;
    if b.separated.is_empty() {
        return;
    }
    doc.heading("Separated from the baseline (a population of their own): review");
    let mut t = Table::new(&["client", "requests>", "peak window>", "flagged", "why"]);
    for s in &b.separated {
        t.row(vec![
            s.client.clone(),
            s.requests.to_string(),
            s.peak_window.to_string(),
            if s.flagged {
                "yes".into()
            } else {
                String::new()
            },
            s.explanation.clone(),
        ]);
    }
    doc.table(t);
}

/// The clients separated from the baselines of endpoints.
pub fn endpoint_separated_blocks(doc: &mut Document, run: &AnalyzeRun) {
    let rows: Vec<(&str, &SeparatedClient)> = run
        .endpoint_recommendations
        .iter()
        .flat_map(|e| {
            e.recommendation
                .baseline
                .separated
                .iter()
                .map(move |s| (e.endpoint.as_str(), s))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    doc.heading("Separated from an endpoint's baseline: review");
    let mut t = Table::new(&["endpoint", "client", "requests>", "flagged", "why"]);
    for (endpoint, s) in rows {
        t.row(vec![
            endpoint.to_string(),
            s.client.clone(),
            s.requests.to_string(),
            if s.flagged {
                "yes".into()
            } else {
                String::new()
            },
            s.explanation.clone(),
        ]);
    }
    doc.table(t);
}

/// Client profiles: every separated or flagged client, and `top` others by
/// kind (loops, heavy clients, shared addresses and probes before crawlers and
/// scanners) and requests; the rest are counted by kind (JSON lists up to
/// [`PROFILES_LISTED`]).
pub fn profile_blocks(doc: &mut Document, run: &AnalyzeRun, top: usize) {
    if run.profiles.is_empty() {
        return;
    }
    doc.heading("Client profiles (heuristics: review; nothing is dropped for a label)");
    let mut t = Table::new(&[
        "client",
        "requests>",
        "reviewed",
        "profile",
        "evidence",
        "suggestion",
    ]);
    let (reviewed, mut others): (Vec<&ClientProfile>, Vec<&ClientProfile>) =
        run.profiles.iter().partition(|p| p.reviewed);
    // By kind in declaration order (crawlers and scanners, the long tails,
    // last), then by requests as the profiles come (a stable sort).
    others.sort_by_key(|p| p.findings.iter().map(|f| f.kind).min());
    let (listed, unlisted) = others.split_at(top.min(others.len()));
    for p in reviewed.iter().chain(listed) {
        let reviewed = if p.reviewed { "yes" } else { "" }.to_string();
        if p.findings.is_empty() {
            t.row(vec![
                p.client.clone(),
                p.requests.to_string(),
                reviewed.clone(),
                "(no profile matched)".into(),
                String::new(),
                String::new(),
            ]);
        }
        for f in &p.findings {
            t.row(vec![
                p.client.clone(),
                p.requests.to_string(),
                reviewed.clone(),
                f.kind.label().into(),
                f.evidence.clone(),
                f.suggestion.clone(),
            ]);
        }
    }
    if !t.rows.is_empty() {
        doc.table(t);
    }
    if !unlisted.is_empty() {
        doc.paragraph(format!(
            "Not listed: {} ({}); --top N lists more, --format json up to {PROFILES_LISTED}.",
            counted(unlisted.len(), "other profiled client"),
            kinds_counted(unlisted),
        ));
    }
}

/// How many of `profiles` matched each kind, most first: `crawler 30, scanner 2`.
fn kinds_counted(profiles: &[&ClientProfile]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for kind in profiles
        .iter()
        .flat_map(|p| &p.findings)
        .map(|f| f.kind.label())
    {
        match counts.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => counts.push((kind, 1)),
        }
    }
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{k} {n}")).collect();
    parts.join(", ")
}

/// How many discovered templates are listed.
const TEMPLATES_LISTED: usize = 20;

/// The templates that collapsed several paths.
pub fn template_blocks(doc: &mut Document, run: &AnalyzeRun) {
    if run.template_uses.is_empty() {
        return;
    }
    doc.heading("Endpoint templates (paths collapsed by discovery or --routes)");
    let mut t = Table::new(&["template", "requests>", "distinct paths>", "example"]);
    for u in run.template_uses.iter().take(TEMPLATES_LISTED) {
        t.row(vec![
            u.template.clone(),
            u.requests.to_string(),
            u.distinct_paths.to_string(),
            u.example.clone(),
        ]);
    }
    doc.table(t);
    if run.template_uses.len() > TEMPLATES_LISTED {
        doc.paragraph(format!(
            "... {} templates in all (--write-routes FILE saves them)",
            run.template_uses.len()
        ));
    }
}
