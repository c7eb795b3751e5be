//! The report workflow as a library call: ingest once, analyze, replay the
//! policy to judge (a policy file, or the recommendation) as written, under
//! each of the six algorithms and, when asked, as gateways enforce it; check
//! the CI gates ([`gates`]); plus the report's charts ([`charts`]).
//!
//! `rlctl report` renders what [`compute`] returns. Nothing here prints,
//! writes files or knows about command-line options.

pub mod charts;
pub mod gates;

use crate::analysis::{self, AnalysisError, AnalysisSettings, AnalyzeRun};
use crate::ingest;
use crate::policy::{CheckedRule, Exemption, PolicyError};
use crate::scenario::{AlgoChoice, AlgoOptions, ExemptMasks, ScenarioResult, ScenarioRunner, plan};
use crate::simulate::gateway::{Gateway, GatewayError};
use crate::simulate::{AlgorithmKind, Deployment, ReplayError, SpecError};
pub use gates::{GateResult, Gates};

/// What a report judges, and how.
#[derive(Debug, Clone)]
pub struct ReportPlan {
    pub analysis: AnalysisSettings,
    /// The policy file and its rules; `None` for the recommendation.
    pub policy: Option<(String, Vec<CheckedRule>)>,
    /// The policy's exempt rules (never limited in the replay).
    pub exemptions: Vec<Exemption>,
    pub gates: Gates,
    /// How many clients and endpoints the summaries list.
    pub top: usize,
    /// The gateways to replay the policy as (`--gateway`; empty: none).
    pub gateways: Vec<Gateway>,
}

/// Why a report could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
    #[error("no traffic to recommend limits for")]
    NoTraffic,
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    /// A policy's own algorithms make exactly one scenario; this is that failing.
    #[error("a policy makes one scenario")]
    NoScenario,
}

impl From<ingest::IngestError> for ReportError {
    fn from(e: ingest::IngestError) -> Self {
        ReportError::Analysis(e.into())
    }
}

/// Everything a report shows.
#[derive(Debug)]
pub struct ReportRun {
    pub analysis: AnalyzeRun,
    /// Where the policy came from.
    pub source: String,
    pub rules: Vec<CheckedRule>,
    /// The endpoints the recommended policy has no rule for although they
    /// have a recommendation of their own (none for a policy file).
    pub unruled: Vec<String>,
    /// The policy as written (each rule with its algorithm).
    pub policy: ScenarioResult,
    /// The policy's limits under each of the six algorithms.
    pub side_by_side: Vec<ScenarioResult>,
    /// The algorithms left out of [`Self::side_by_side`], with why (one that
    /// cannot take a rule's limit).
    pub side_by_side_left_out: Vec<String>,
    /// The policy as each `--gateway` enforces it (models labelled "(model)").
    pub gateways: Vec<ScenarioResult>,
    pub gates: Vec<GateResult>,
    /// `PASS ...` or `FAIL: ...`: the first line of every output.
    pub verdict: String,
}

impl ReportRun {
    /// True when every gate passed.
    pub fn passed(&self) -> bool {
        self.gates.iter().all(|g| g.passed)
    }
}

/// Ingests once, analyzes, and replays the policy; the library form of `rlctl report`.
pub fn compute(plan: &ReportPlan) -> Result<ReportRun, ReportError> {
    let ingested = ingest::ingest(&plan.analysis.ingest)?;
    let analysis = analysis::analyze_ingested(ingested, &plan.analysis)?;
    let (source, rules, unruled) = match &plan.policy {
        Some((origin, rules)) => (format!("policy {origin}"), rules.clone(), Vec::new()),
        None => {
            let (policy, unruled) =
                analysis::recommended_policy_and_unruled(&analysis, &plan.analysis)
                    .ok_or(ReportError::NoTraffic)?;
            (
                "the recommendation of rlctl analyze".to_string(),
                policy.check("the recommendation")?,
                unruled,
            )
        }
    };
    let keys = &plan.analysis.ingest.keys;
    let table = &analysis.ingested.table;
    let readings: Vec<_> = (plan.gateways.iter())
        .map(|g| (g.key_reading(), g.name_reading()))
        .collect();
    let masks = ExemptMasks::new(table, &plan.exemptions, keys, &readings);
    let mut runner = ScenarioRunner::new(table, &table.ts, Deployment::single(), plan.top)
        .with_exemptions(masks);
    let mut replay = |algo| -> Result<Vec<ScenarioResult>, ReportError> {
        let scenarios = plan::policy(
            &AlgoOptions {
                algo,
                burst: None,
                delay: None,
            },
            keys,
            &rules,
        )?
        .scenarios;
        scenarios
            .iter()
            .map(|s| runner.run(s).map_err(Into::into))
            .collect()
    };
    let policy = replay(AlgoChoice::Default)?
        .pop()
        .ok_or(ReportError::NoScenario)?;
    // An algorithm that cannot take a rule's limit (nginx's leaky bucket
    // below 1r/m) leaves the comparison, saying why, not the whole report.
    let mut side_by_side = Vec::new();
    let mut side_by_side_left_out = Vec::new();
    for kind in AlgorithmKind::ALL {
        match replay(AlgoChoice::One(kind)) {
            Ok(results) => side_by_side.extend(results),
            Err(ReportError::Spec(refused)) => {
                side_by_side_left_out.push(format!("{}: {refused}", kind.name()))
            }
            Err(other) => return Err(other),
        }
    }
    let gateways = if plan.gateways.is_empty() {
        Vec::new()
    } else {
        let base = plan::policy(
            &AlgoOptions {
                algo: AlgoChoice::Default,
                burst: None,
                delay: None,
            },
            keys,
            &rules,
        )?
        .scenarios
        .pop()
        .ok_or(ReportError::NoScenario)?;
        crate::scenario::gateway::scenarios(&base, &plan.gateways, keys)?
            .iter()
            .map(|s| runner.run(s))
            .collect::<Result<Vec<_>, _>>()?
    };
    let gates = gates::evaluate(&plan.gates, &policy, analysis.recommendation.as_ref());
    let verdict = gates::verdict(&gates);
    Ok(ReportRun {
        analysis,
        source,
        rules,
        unruled,
        policy,
        side_by_side,
        side_by_side_left_out,
        gateways,
        gates,
        verdict,
    })
}
