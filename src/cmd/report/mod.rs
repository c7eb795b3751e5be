//! `rlctl report`: analyze and simulate in one pass and render one report, with
//! CI gates on the policy's simulation (exit 1 when one fails).

pub mod charts;
pub mod gates;
pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::cli::{ReportArgs, ReportFormat};
use crate::cmd::analyze::{self, AnalyzeRun};
use crate::cmd::simulate::execute::{ScenarioResult, ScenarioRunner};
use crate::cmd::simulate::plan::{self, AlgoOptions};
use crate::ingest;
use crate::options::{self, AlgoChoice, ReportSettings};
use crate::output;
use crate::text::escape;
use crate::policy::CheckedRule;
use crate::simulate::Deployment;
use gates::GateResult;

/// Everything a report shows.
#[derive(Debug)]
pub struct ReportRun {
    pub analysis: AnalyzeRun,
    /// Where the policy came from.
    pub source: String,
    pub rules: Vec<CheckedRule>,
    /// The policy as written (each rule with its algorithm).
    pub policy: ScenarioResult,
    /// The policy's limits under each of the six algorithms.
    pub side_by_side: Vec<ScenarioResult>,
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
pub fn compute(settings: &ReportSettings) -> anyhow::Result<ReportRun> {
    let ingested = ingest::ingest(&settings.analyze.ingest)?;
    let analysis = analyze::analyze_ingested(ingested, &settings.analyze)?;
    let (source, rules) = match &settings.policy {
        Some((origin, rules)) => (format!("policy {origin}"), rules.clone()),
        None => {
            let policy = analyze::recommended_policy(&analysis, &settings.analyze)
                .context("no traffic to recommend limits for")?;
            (
                "the recommendation of rlctl analyze".to_string(),
                policy.check("the recommendation")?,
            )
        }
    };
    let keys = &settings.analyze.ingest.keys;
    let table = &analysis.ingested.table;
    let mut runner = ScenarioRunner::new(table, &table.ts, Deployment::single(), settings.top);
    let mut replay = |algo| -> anyhow::Result<Vec<ScenarioResult>> {
        let scenarios = plan::policy(
            &AlgoOptions {
                algo,
                burst: None,
                delay: None,
            },
            keys,
            &rules,
        )?;
        scenarios
            .iter()
            .map(|s| runner.run(s).map_err(Into::into))
            .collect()
    };
    let policy = replay(AlgoChoice::Default)?
        .pop()
        .context("a policy makes one scenario")?;
    let side_by_side = replay(AlgoChoice::All)?;
    let gates = gates::evaluate(&settings.gates, &policy, analysis.recommendation.as_ref());
    let verdict = gates::verdict(&gates);
    Ok(ReportRun {
        analysis,
        source,
        rules,
        policy,
        side_by_side,
        gates,
        verdict,
    })
}

/// Runs `rlctl report`.
pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let settings = options::report_settings(&args)?;
    let run = compute(&settings)?;
    if !args.ingest.quiet {
        analyze::print_notes(&run.analysis.ingested.report, Some(&run.analysis.analysis));
    }
    eprintln!("rlctl report: {}", escape::terminal(&run.verdict));
    let stamp = settings.stamp.then(view::now_rfc3339);
    let doc = view::document(&run, &settings, stamp.as_deref());
    for (format, path) in &settings.outputs {
        let bytes = render(*format, &run, &settings, &doc, stamp.as_deref())?;
        output::write_output(path.as_deref(), &bytes).with_context(|| {
            format!(
                "cannot write the report to {}",
                path.as_ref()
                    .map_or("stdout".into(), |p| p.display().to_string())
            )
        })?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        use std::io::Write;
        let markdown = output::markdown::render(&doc);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .with_context(|| {
                format!(
                    "cannot append to $GITHUB_STEP_SUMMARY ({})",
                    summary.to_string_lossy()
                )
            })?;
        file.write_all(markdown.as_bytes())?;
    }
    Ok(if run.passed() {
        Outcome::Success
    } else {
        Outcome::GateFailed
    })
}

fn render(
    format: ReportFormat,
    run: &ReportRun,
    settings: &ReportSettings,
    doc: &output::document::Document,
    stamp: Option<&str>,
) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        ReportFormat::Markdown => output::markdown::render(doc).into_bytes(),
        ReportFormat::Html => output::html::render(doc).into_bytes(),
        ReportFormat::Json => output::json(&view::json(run, settings, stamp))?,
        ReportFormat::Junit => view::junit(run).into_bytes(),
    })
}
