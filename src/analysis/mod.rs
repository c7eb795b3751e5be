//! The analysis workflow as a library call: ingest (or take what was ingested),
//! measure per-client traffic ([`crate::stats`]), and recommend limits for all
//! traffic and for each endpoint ([`crate::recommend`]); then the recommended
//! policy ([`policy`]) and the notes a command prints about its input ([`notes`]).
//!
//! `rlctl analyze`, `simulate` (recommended limits) and `report` all call this.
//! It prints nothing and knows nothing of flags, terminals or output formats.

pub mod notes;
pub mod policy;

use crate::events::EventTable;
use crate::ingest::{self, IngestError, IngestReport, Ingested};
use crate::recommend::{Recommendation, recommend};
use crate::simulate::AlgorithmKind;
use crate::stats::{self, Analysis, StatsSettings};
use crate::units::Millis;

pub use policy::{policy_text, recommended_policy};

/// What an analysis runs on.
#[derive(Debug, Clone)]
pub struct AnalysisSettings {
    pub ingest: ingest::Settings,
    pub stats: StatsSettings,
    /// Limits are this many times the per-window p99.9.
    pub multiplier: f64,
    /// How many endpoints to report.
    pub endpoints: usize,
    /// Algorithm written into the policy.
    pub algorithm: AlgorithmKind,
}

/// Why an analysis has no result.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// The inputs hold no request (the message counts what was read).
    #[error("{0}")]
    NoEvents(String),
}

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
pub fn compute(settings: &AnalysisSettings) -> Result<AnalyzeRun, AnalysisError> {
    analyze_ingested(ingest::ingest(&settings.ingest)?, settings)
}

/// Analyzes what was ingested (an error when nothing was).
pub fn analyze_ingested(
    ingested: Ingested,
    settings: &AnalysisSettings,
) -> Result<AnalyzeRun, AnalysisError> {
    if ingested.table.is_empty() {
        return Err(AnalysisError::NoEvents(no_events_message(&ingested.report)));
    }
    let analysis = stats::analyze(&ingested.table, &settings.stats);
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
    settings: &AnalysisSettings,
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
