//! `rlctl simulate`: replay a log through rate limiters and report who would
//! have been rejected, where and when.

pub mod compare;
pub mod decisions;
pub mod execute;
pub mod plan;
pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::cli::SimulateArgs;
use crate::cmd::analyze;
use crate::events::EventTable;
use crate::ingest::{self, IngestReport};
use crate::options::{self, LimitSource, SimulateSettings};
use crate::output;
use crate::simulate::deploy;
use compare::Comparison;
use execute::ScenarioResult;
use plan::Scenario;

/// Everything a simulation produced.
#[derive(Debug)]
pub struct SimulateRun {
    pub table: EventTable,
    pub report: IngestReport,
    /// Where the limits came from, in words.
    pub source: String,
    pub scenarios: Vec<Scenario>,
    pub results: Vec<ScenarioResult>,
    pub comparisons: Vec<Comparison>,
    /// The times the limiters saw (compressed with `--what-if-scale`).
    pub ts: Vec<i64>,
}

/// Ingests, plans and replays; the library form of `rlctl simulate`.
pub fn compute(settings: &SimulateSettings) -> anyhow::Result<SimulateRun> {
    let (table, report, scenarios, source) = match &settings.source {
        LimitSource::Recommended(analyze_settings) => {
            let run = analyze::compute(analyze_settings)?;
            let policy = analyze::recommended_policy(&run, analyze_settings)
                .context("no traffic to recommend limits for")?;
            let rules = policy.check("the recommendation")?;
            let names: Vec<String> = rules
                .iter()
                .map(|r| format!("{} {}", r.name, r.spec.limit))
                .collect();
            let scenarios = plan::policy(settings, &settings.ingest.keys, &rules)?;
            let source = format!("recommended by rlctl analyze: {}", names.join(", "));
            (run.ingested.table, run.ingested.report, scenarios, source)
        }
        LimitSource::Single { limit } => {
            let ingested = ingest::ingest(&settings.ingest)?;
            let source = format!("--limit {limit} per {}", settings.ingest.keys.primary.text);
            (
                ingested.table,
                ingested.report,
                plan::single(settings, *limit)?,
                source,
            )
        }
        LimitSource::Policy { origin, rules } => {
            let ingested = ingest::ingest(&settings.ingest)?;
            let scenarios = plan::policy(settings, &settings.ingest.keys, rules)?;
            (
                ingested.table,
                ingested.report,
                scenarios,
                format!("policy {origin}"),
            )
        }
    };
    if table.is_empty() {
        anyhow::bail!(
            "no requests found: {} lines read, {} skipped; check --log-format",
            report.lines,
            report.skipped
        );
    }
    let ts = match settings.scale {
        Some(x) => deploy::compress_time(&table.ts, x)?,
        None => table.ts.clone(),
    };
    let results = scenarios
        .iter()
        .map(|s| execute::run_scenario(&table, &ts, s, &settings.deployment, settings.top))
        .collect::<Result<Vec<_>, _>>()?;
    let comparisons = if settings.compare_logged {
        results
            .iter()
            .map(|r| compare::compare(&table, &r.scenario, &r.allowed))
            .collect()
    } else {
        Vec::new()
    };
    Ok(SimulateRun {
        table,
        report,
        source,
        scenarios,
        results,
        comparisons,
        ts,
    })
}

/// Runs `rlctl simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<Outcome> {
    let settings = options::simulate_settings(&args)?;
    let run = compute(&settings)?;
    if !settings.quiet {
        analyze::print_notes(&run.report, None);
        eprintln!("rlctl: limits: {}", output::escape::terminal(&run.source));
    }
    let doc = view::document(&run, &settings);
    let json = view::json(&run, &settings);
    let bytes = output::render(settings.format, &doc, &json, settings.colour)?;
    output::write_output(settings.output.as_deref(), &bytes).context("cannot write the report")?;
    if let Some(path) = &settings.decisions {
        decisions::write(path, &run.table, &run.ts, &run.results)
            .with_context(|| format!("cannot write decisions to {}", path.display()))?;
    }
    Ok(Outcome::Success)
}
