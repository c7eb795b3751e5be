//! The analysis workflow as a library call: ingest (or take what was ingested),
//! measure per-client traffic ([`crate::stats`]), and recommend limits for all
//! traffic and for each endpoint ([`crate::recommend`]); then the recommended
//! policy ([`policy`]) and the notes a command prints about its input ([`notes`]).
//!
//! `rlctl analyze`, `simulate` (recommended limits) and `report` all call this.
//! It prints nothing and knows nothing of flags, terminals or output formats.

pub mod notes;
pub mod policy;
pub mod routes;
pub mod rule_scope;

use crate::discover::{self, DiscoverChoice, TemplateSet, TemplateUse};
use crate::events::{EventTable, Id};
use crate::ingest::{self, IngestError, Ingested};
use crate::profile::{self, ClientProfile, ProfileColumns};
use crate::recommend::{BaselineChoice, Recommendation, recommend_scopes};
use crate::simulate::AlgorithmKind;
use crate::stats::{self, Analysis, StatsSettings};
use crate::units::Millis;

pub use policy::{policy_text, recommended_policy, recommended_policy_and_unruled};
pub use routes::routes_text;

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
    /// Baseline, endpoint discovery and client profiles.
    pub recommend: RecommendOptions,
}

/// How the recommendation is formed beyond the figures.
#[derive(Debug, Clone, Default)]
pub struct RecommendOptions {
    pub baseline: BaselineChoice,
    pub discover: DiscoverChoice,
    /// Templates read from a routes file (they replace discovery).
    pub routes: Option<TemplateSet>,
    /// The extra key columns holding the user agent and the user, when ingested.
    pub profile_columns: ProfileColumns,
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
    /// When the endpoint's rule also matches other reported endpoints, those
    /// and the recommendation for all the requests it counts: the rule's.
    #[serde(skip)]
    pub rule_scope: Option<rule_scope::RuleScope>,
}

impl EndpointRecommendation {
    /// The recommendation the endpoint's rule in a policy takes.
    pub fn for_rule(&self) -> &Recommendation {
        self.rule_scope
            .as_ref()
            .map_or(&self.recommendation, |s| &s.recommendation)
    }
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
pub fn compute(settings: &AnalysisSettings) -> Result<AnalyzeRun, AnalysisError> {
    analyze_ingested(ingest::ingest(&settings.ingest)?, settings)
}

/// Analyzes what was ingested (an error when nothing was).
pub fn analyze_ingested(
    ingested: Ingested,
    settings: &AnalysisSettings,
) -> Result<AnalyzeRun, AnalysisError> {
    analyze(ingested, settings, true)
}

/// [`analyze_ingested`] without the client profiles (left empty), which the
/// recommended policy does not rest on: what `simulate` replays the
/// recommendation from.
pub fn analyze_for_policy(
    ingested: Ingested,
    settings: &AnalysisSettings,
) -> Result<AnalyzeRun, AnalysisError> {
    analyze(ingested, settings, false)
}

/// The analysis, with the client profiles when `with_profiles`.
fn analyze(
    mut ingested: Ingested,
    settings: &AnalysisSettings,
    with_profiles: bool,
) -> Result<AnalyzeRun, AnalysisError> {
    if ingested.table.is_empty() {
        return Err(AnalysisError::NoEvents(ingested.report.nothing_parsed()));
    }
    let table = &mut ingested.table;
    let mapped =
        settings.recommend.routes.is_some() || settings.recommend.discover == DiscoverChoice::On;
    // Counted before the endpoints are folded into templates, while the
    // templates are worked out (one pass over the rows, on one core).
    let (error_endpoints, plan) = rayon::join(
        || (mapped && with_profiles).then(|| profile::facts::client_error_endpoints(table)),
        || {
            discover::plan_naming(
                table,
                settings.recommend.routes.as_ref(),
                settings.recommend.discover,
                &settings.ingest.routes,
            )
        },
    );
    let (templates, template_uses) = match plan {
        Some(plan) => {
            let (set, uses) = plan.apply(table);
            (Some(set), uses)
        }
        None => (None, Vec::new()),
    };
    let analysis = stats::analyze_endpoints(&ingested.table, &settings.stats, settings.endpoints);
    let (recommendation, mut endpoint_recommendations) =
        recommendations(&ingested.table, &analysis, settings);
    rule_scope::widen(
        &mut ingested.table,
        &analysis,
        settings,
        &mut endpoint_recommendations,
    );
    let profiles = match with_profiles {
        true => profiles(
            &ingested.table,
            &analysis,
            &recommendation,
            &endpoint_recommendations,
            settings.recommend.profile_columns,
            error_endpoints.as_deref(),
        ),
        false => Vec::new(),
    };
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
    columns: ProfileColumns,
    error_endpoints: Option<&[u64]>,
) -> Vec<ClientProfile> {
    // A rule's wider scope may separate or flag a client its endpoint did not.
    let wider = endpoints.iter().filter_map(|e| e.rule_scope.as_ref());
    let scopes = (overall.iter())
        .chain(endpoints.iter().map(|e| &e.recommendation))
        .chain(wider.map(|s| &s.recommendation));
    let mut reviewed: Vec<Id> = Vec::new();
    let mut seen = rustc_hash::FxHashSet::default();
    for r in scopes {
        let names = r
            .baseline
            .separated
            .iter()
            .map(|s| &s.client)
            .chain(r.flagged.iter().map(|f| &f.client));
        for name in names {
            if let Some(id) = table.clients.get(name)
                && seen.insert(id)
            {
                reviewed.push(id);
            }
        }
    }
    let p99 = overall.as_ref().map_or(0, |r| r.baseline.p99);
    profile::profile_clients(table, analysis, columns, &reviewed, p99, error_endpoints)
}

/// The recommendation for all traffic and for each reported endpoint whose
/// p99.9 rests on enough samples (`table` names the clients).
pub fn recommendations(
    table: &EventTable,
    analysis: &Analysis,
    settings: &AnalysisSettings,
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
            rule_scope: None,
        })
        .collect();
    (recommendation, endpoint_recommendations)
}
