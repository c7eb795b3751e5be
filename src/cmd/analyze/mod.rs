//! `rlctl analyze`: read logs, measure per-client traffic, recommend a limit.
//!
//! [`compute`] is the whole analysis as a library call (also used by `simulate
//! --recommended` and `report`); [`run`] adds the command's notes and outputs;
//! [`from_sql`] builds the same run from the results of `rlctl sql`.

mod findings;
pub mod from_sql;
pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::cli::AnalyzeArgs;
use crate::discover::{self, DiscoverChoice, TemplateSet, TemplateUse};
use crate::events::{EventTable, Resolution};
use crate::ingest::{self, IngestReport, Ingested};
use crate::options::{self, AnalyzeSettings};
use crate::output::{self, escape};
use crate::policy::{self, Policy, Rule};
use crate::profile::{self, ClientProfile};
use crate::recommend::{Recommendation, recommend_scopes};
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
    /// The endpoint templates applied (discovered or read), if any, and those
    /// that collapsed more than one path.
    pub templates: Option<TemplateSet>,
    pub template_uses: Vec<TemplateUse>,
    /// Separated, flagged, and otherwise notable clients, with what they are.
    pub profiles: Vec<ClientProfile>,
}

/// Ingests and analyzes; the library form of `rlctl analyze`.
pub fn compute(settings: &AnalyzeSettings) -> anyhow::Result<AnalyzeRun> {
    analyze_ingested(ingest::ingest(&settings.ingest)?, settings)
}

/// Analyzes what was ingested (an error when nothing was).
pub fn analyze_ingested(
    mut ingested: Ingested,
    settings: &AnalyzeSettings,
) -> anyhow::Result<AnalyzeRun> {
    if ingested.table.is_empty() {
        anyhow::bail!("{}", no_events_message(&ingested.report));
    }
    let routed: Vec<String> = settings
        .ingest
        .routes
        .iter()
        .map(|r| r.name.clone())
        .collect();
    let table = &mut ingested.table;
    let templates = match (&settings.recommend.routes, settings.recommend.discover) {
        (Some(set), _) => Some(set.clone()),
        (None, DiscoverChoice::On) => Some(discover::discover(table, &routed)),
        (None, DiscoverChoice::Off) => None,
    };
    let template_uses = templates
        .as_ref()
        .map(|set| discover::apply(table, set, &routed))
        .unwrap_or_default();
    let analysis = stats::analyze(&ingested.table, &settings.stats);
    let (recommendation, endpoint_recommendations) =
        recommendations(&ingested.table, &analysis, settings);
    let profiles = profiles(
        &ingested.table,
        &analysis,
        &recommendation,
        &endpoint_recommendations,
        settings,
    );
    Ok(AnalyzeRun {
        span: ingested.table.span(),
        ingested,
        analysis,
        recommendation,
        endpoint_recommendations,
        templates,
        template_uses,
        profiles,
    })
}

/// The profiles of the clients separated or flagged in any scope, and of
/// notable clients among all.
fn profiles(
    table: &EventTable,
    analysis: &Analysis,
    overall: &Option<Recommendation>,
    endpoints: &[EndpointRecommendation],
    settings: &AnalyzeSettings,
) -> Vec<ClientProfile> {
    let scopes = overall
        .iter()
        .chain(endpoints.iter().map(|e| &e.recommendation));
    let mut reviewed: Vec<crate::events::Id> = Vec::new();
    for r in scopes {
        let names = r
            .baseline
            .separated
            .iter()
            .map(|s| &s.client)
            .chain(r.flagged.iter().map(|f| &f.client));
        for name in names {
            if let Some(id) = table.clients.get(name) {
                if !reviewed.contains(&id) {
                    reviewed.push(id);
                }
            }
        }
    }
    let p99 = overall.as_ref().map_or(0, |r| r.baseline.p99);
    profile::profile_clients(
        table,
        analysis,
        settings.recommend.profile_columns,
        &reviewed,
        p99,
    )
}

/// The recommendation for all traffic and for each reported endpoint whose
/// p99.9 rests on enough samples (`table` names the clients).
pub fn recommendations(
    table: &EventTable,
    analysis: &Analysis,
    settings: &AnalyzeSettings,
) -> (Option<Recommendation>, Vec<EndpointRecommendation>) {
    let (recommendation, per_endpoint) = recommend_scopes(
        table,
        analysis,
        settings.recommend.baseline,
        settings.multiplier,
        settings.endpoints,
    );
    let endpoint_recommendations = per_endpoint
        .into_iter()
        .map(|(endpoint, recommendation)| EndpointRecommendation {
            endpoint,
            recommendation,
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
    if let (Some(path), Some(set)) = (&settings.recommend.write_routes, &run.templates) {
        output::write_atomic(path, routes_text(&run, set).as_bytes())
            .with_context(|| format!("cannot write the routes to {}", path.display()))?;
    }
    if let (Some(path), Some(rows)) = (&settings.export_counts, &run.analysis.counts) {
        let format = frames::TableFormat::of(path)?;
        let mut frame =
            frames::counts_frame(&run.ingested.table, rows, settings.stats.window, format)?;
        frames::write_frame(&mut frame, path)?;
    }
    Ok(Outcome::Success)
}

/// The templates as a routes file, each that collapsed paths with a note.
fn routes_text(run: &AnalyzeRun, set: &TemplateSet) -> String {
    let notes: Vec<String> = set
        .templates()
        .iter()
        .map(|t| {
            let text = t.to_string();
            run.template_uses
                .iter()
                .find(|u| u.template == text)
                .map(|u| format!("{} paths, e.g. {}", u.distinct_paths, u.example))
                .unwrap_or_default()
        })
        .collect();
    let lines: Vec<discover::routes_file::Line<'_>> = set
        .templates()
        .iter()
        .zip(notes)
        .map(|(template, note)| discover::routes_file::Line {
            template,
            note: (!note.is_empty()).then_some(note),
        })
        .collect();
    discover::routes_file::format(
        &[
            "Endpoint templates written by `rlctl analyze --write-routes`; read with --routes.",
            "One path template per line; the first by precedence that matches a path wins.",
        ],
        &lines,
    )
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
    let mut text = policy.to_toml(&header);
    text.push_str(&suggested_exemptions(
        run,
        &settings.ingest.keys.primary.text,
    ));
    Some(text)
}

/// The exemptions the client profiles suggest, as commented-out rules.
fn suggested_exemptions(run: &AnalyzeRun, key: &str) -> String {
    use crate::profile::Kind;
    let mut out = String::new();
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
        let toml_string = |s: &str| toml::Value::String(s.to_string()).to_string();
        let one_line = |s: &str| s.replace(['\n', '\r'], " ");
        out.push_str(&format!(
            "\n# {}: {}\n# [[rule]]\n# name = {}\n# key = {}\n# client = {}\n# exempt = true\n",
            f.kind.label(),
            one_line(&f.evidence),
            toml_string(&format!("exempt-{}", policy::rule_name(&p.client))),
            toml_string(key),
            one_line(&toml_string(&p.client)),
        ));
    }
    out
}
