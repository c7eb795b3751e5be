//! `rlctl analyze`: read logs, measure per-client traffic, recommend a limit.
//!
//! [`compute`] is the whole analysis as a library call (also used by `simulate
//! --recommended` and `report`); [`run`] adds the command's notes and outputs;
//! [`from_sql`] builds the same run from the results of `rlctl sql`.

pub mod from_sql;
pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::cli::AnalyzeArgs;
use crate::events::{EventTable, Resolution};
use crate::ingest::{self, IngestReport, Ingested};
use crate::options::{self, AnalyzeSettings};
use crate::output::{self, escape};
use crate::policy::{self, Policy, Rule};
use crate::recommend::{Recommendation, recommend};
use crate::stats::{self, Analysis};
use crate::units::Millis;
use crate::{frames, ingest::time::format_rfc3339};

/// A recommendation for one endpoint.
#[derive(Debug, Clone, serde::Serialize)]
pub struct EndpointRecommendation {
    pub endpoint: String,
    #[serde(flatten)]
    pub recommendation: Recommendation,
}

/// Everything an analysis produced.
#[derive(Debug)]
pub struct AnalyzeRun {
    pub ingested: Ingested,
    pub analysis: Analysis,
    /// The recommendation for all traffic (`None` without traffic).
    pub recommendation: Option<Recommendation>,
    /// Recommendations for reported endpoints whose p99.9 rests on enough samples.
    pub endpoint_recommendations: Vec<EndpointRecommendation>,
    /// Time of the first and last request.
    pub span: Option<(Millis, Millis)>,
}

/// Ingests and analyzes; the library form of `rlctl analyze`.
pub fn compute(settings: &AnalyzeSettings) -> anyhow::Result<AnalyzeRun> {
    analyze_ingested(ingest::ingest(&settings.ingest)?, settings)
}

/// Analyzes what was ingested (an error when nothing was).
pub fn analyze_ingested(
    ingested: Ingested,
    settings: &AnalyzeSettings,
) -> anyhow::Result<AnalyzeRun> {
    if ingested.table.is_empty() {
        anyhow::bail!("{}", no_events_message(&ingested.report));
    }
    let analysis = stats::analyze_endpoints(&ingested.table, &settings.stats, settings.endpoints);
    let (recommendation, endpoint_recommendations) =
        recommendations(&ingested.table, &analysis, settings);
    Ok(AnalyzeRun {
        span: ingested.table.span(),
        ingested,
        analysis,
        recommendation,
        endpoint_recommendations,
    })
}

/// The recommendation for all traffic and for each reported endpoint whose
/// p99.9 rests on enough samples (`table` names the clients).
pub fn recommendations(
    table: &EventTable,
    analysis: &Analysis,
    settings: &AnalyzeSettings,
) -> (Option<Recommendation>, Vec<EndpointRecommendation>) {
    let window = settings.stats.window;
    let recommendation = recommend(table, &analysis.overall, window, settings.multiplier);
    let endpoint_recommendations = analysis
        .endpoints
        .iter()
        .take(settings.endpoints)
        .filter(|e| !e.stats.per_window.p999_is_thin())
        .filter_map(|e| {
            let recommendation = recommend(table, &e.stats, window, settings.multiplier)?;
            Some(EndpointRecommendation {
                endpoint: e.endpoint.clone(),
                recommendation,
            })
        })
        .collect();
    (recommendation, endpoint_recommendations)
}

fn no_events_message(report: &IngestReport) -> String {
    let files: Vec<&str> = report.files.iter().map(|f| f.name.as_str()).collect();
    let mut msg = format!(
        "no requests found in {}: {} lines read, {} parsed, {} skipped",
        files.join(", "),
        report.lines,
        report.parsed,
        report.skipped
    );
    if let Some(first) = report.examples.first() {
        msg.push_str(&format!(" (first: {first}); check --log-format"));
    }
    msg
}

/// Runs `rlctl analyze`.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<Outcome> {
    let mut settings = options::analyze_settings(&args)?;
    let run = match &args.from_sql_result {
        Some(dir) => from_sql::compute(dir, &mut settings)?,
        None => compute(&settings)?,
    };
    if !settings.quiet {
        print_notes(&run.ingested.report, Some(&run.analysis));
    }
    let doc = view::document(&run, &settings);
    let json = view::json(&run, &settings);
    let bytes = output::render(settings.format, &doc, &json, settings.colour)?;
    output::write_output(settings.output.as_deref(), &bytes).with_context(|| {
        format!(
            "cannot write the report to {}",
            settings
                .output
                .as_ref()
                .map_or("stdout".into(), |p| p.display().to_string())
        )
    })?;
    if let Some(path) = &settings.write_policy {
        let text = policy_text(&run, &settings).context("no traffic to base a policy on")?;
        output::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write the policy to {}", path.display()))?;
    }
    if let (Some(path), Some(rows)) = (&settings.export_counts, &run.analysis.counts) {
        let format = frames::TableFormat::of(path)?;
        let mut frame =
            frames::counts_frame(&run.ingested.table, rows, settings.stats.window, format)?;
        frames::write_frame(&mut frame, path)?;
    }
    Ok(Outcome::Success)
}

/// Notes on stderr: the format of each input, skipped lines, timestamp resolution.
pub fn print_notes(report: &IngestReport, analysis: Option<&Analysis>) {
    for file in &report.files {
        eprintln!(
            "rlctl: {}: {} format, {} lines, {} parsed, {} skipped",
            escape::terminal(&file.name),
            escape::terminal(&file.format),
            file.lines,
            file.parsed,
            file.skipped
        );
    }
    for example in &report.examples {
        eprintln!("rlctl: skipped {}", escape::terminal(example));
    }
    if report.skipped as usize > report.examples.len() {
        eprintln!(
            "rlctl: ({} skipped lines in all; by reason in the report)",
            report.skipped
        );
    }
    if report.resolution == Resolution::Second {
        eprintln!(
            "rlctl: note: timestamps have whole-second resolution, so per-second and sub-second figures are coarse; logging $msec gives millisecond resolution"
        );
    }
    if report.invalid_utf8_lines > 0 {
        eprintln!(
            "rlctl: note: {} lines had bytes that are not UTF-8 in the client or path (shown as U+FFFD)",
            report.invalid_utf8_lines
        );
    }
    for name in analysis.iter().flat_map(|a| &a.excluded_unknown) {
        eprintln!(
            "rlctl: warning: --exclude {}: no such client in the log",
            escape::terminal(name)
        );
    }
}

/// The recommendation as a policy: a global rule, then one rule per endpoint that
/// has its own recommendation (static files aside: they rarely want a limit of their own).
pub fn recommended_policy(run: &AnalyzeRun, settings: &AnalyzeSettings) -> Option<Policy> {
    let overall = run.recommendation.as_ref()?;
    let key = settings.ingest.keys.primary.text.clone();
    let rule = |name: String, method, route, r: &Recommendation| Rule {
        name,
        method,
        route,
        key: key.clone(),
        limit: r.rate.clone(),
        burst: settings.algorithm.has_burst().then_some(r.burst),
        algorithm: settings.algorithm.to_string(),
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
pub fn policy_text(run: &AnalyzeRun, settings: &AnalyzeSettings) -> Option<String> {
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
    Some(policy.to_toml(&header))
}
