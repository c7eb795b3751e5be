//! The recommended policy: a global rule and one rule per endpoint with a
//! recommendation of its own, as a [`Policy`] or as the TOML that
//! `rlctl analyze --write-policy` writes. Writing the file is the caller's.

use super::{AnalysisSettings, AnalyzeRun};
use crate::policy::{self, Policy, Rule};
use crate::recommend::Recommendation;
use crate::text::time::format_rfc3339;

/// The recommendation as a policy: a global rule, then one rule per endpoint that
/// has its own recommendation (static files aside: they rarely want a limit of their own).
pub fn recommended_policy(run: &AnalyzeRun, settings: &AnalysisSettings) -> Option<Policy> {
    let overall = run.recommendation.as_ref()?;
    let key = settings.ingest.keys.primary.text.clone();
    let rule = |name: String, method, route, r: &Recommendation| Rule {
        name,
        method,
        route,
        client: None,
        key: key.clone(),
        limit: r.rate.clone(),
        burst: settings.algorithm.has_burst().then_some(r.burst),
        algorithm: settings.algorithm.to_string(),
        exempt: false,
    };
    let mut rules = vec![rule("global".into(), None, None, overall)];
    for e in run
        .endpoint_recommendations
        .iter()
        .filter(|e| !policy::is_static_asset(&e.endpoint))
    {
        let routed = settings.ingest.routes.iter().find(|r| r.name == e.endpoint);
        let (method, route) = match routed {
            Some(r) => (None, Some(r.pattern.as_str().to_string())),
            None => match policy::endpoint_match(&e.endpoint) {
                Some((m, r)) => (Some(m), Some(r)),
                None => continue,
            },
        };
        rules.push(rule(
            policy::rule_name(&e.endpoint),
            method,
            route,
            &e.recommendation,
        ));
    }
    Some(Policy { rules })
}

/// The recommended policy as TOML with a header saying what it rests on.
pub fn policy_text(run: &AnalyzeRun, settings: &AnalysisSettings) -> Option<String> {
    let policy = recommended_policy(run, settings)?;
    let span = run
        .span
        .map(|(a, b)| format!("{} .. {}", format_rfc3339(a), format_rfc3339(b)))
        .unwrap_or_default();
    let header = vec![
        "Rate-limit policy written by `rlctl analyze --write-policy`.".to_string(),
        format!(
            "Basis: {} requests from {} clients, {span}.",
            run.analysis.overall.requests, run.analysis.overall.clients
        ),
        format!(
            "Limits are {} x the per-window p99.9 of requests per client (window {}).",
            settings.multiplier, settings.stats.window
        ),
        "Review the flagged clients in the analysis before enforcing.".to_string(),
    ];
    let mut text = policy.to_toml(&header);
    text.push_str(&suggested_exemptions(
        run,
        &settings.ingest.keys.primary.text,
    ));
    Some(text)
}

/// The exemptions the client profiles suggest (periodic probes, heavy steady
/// clients), as commented-out rules a reviewer can enable.
pub fn suggested_exemptions(run: &AnalyzeRun, key: &str) -> String {
    use crate::profile::Kind;
    let mut out = String::new();
    let toml_string = |s: &str| toml::Value::String(s.to_string()).to_string();
    for p in &run.profiles {
        let Some(f) = p
            .findings
            .iter()
            .find(|f| matches!(f.kind, Kind::PeriodicProbe | Kind::HeavySteady))
        else {
            continue;
        };
        if out.is_empty() {
            out.push_str("\n# Exemptions the client profiles suggest: uncomment after review.\n");
        }
        out.push_str(&format!(
            "\n# {}: {}\n# [[rule]]\n# name = {}\n# key = {}\n# client = {}\n# exempt = true\n",
            f.kind.label(),
            f.evidence.replace(['\n', '\r'], " "),
            toml_string(&format!("exempt-{}", policy::rule_name(&p.client))),
            toml_string(key),
            toml_string(&p.client),
        ));
    }
    out
}
