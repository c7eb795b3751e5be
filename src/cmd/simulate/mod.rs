//! `rlctl simulate`: replay a log through rate limiters and report who would
//! have been rejected, where and when.

pub mod view;

use anyhow::Context;

use crate::Outcome;
use crate::analysis;
use crate::analysis::notes::{keyless_lines, notes, unmatched_exemptions};
use crate::cli::SimulateArgs;
use crate::discover;
use crate::events::{EventTable, Resolution};
use crate::frames;
use crate::ingest::key::KeySet;
use crate::ingest::{self, IngestReport, Ingested};
use crate::options::{self, LimitSource, SimulateSettings};
use crate::output;
use crate::policy::{CheckedRule, Exemption};
use crate::render;
use crate::scenario::{
    Comparison, ExemptMasks, Scenario, ScenarioResult, ScenarioRunner, compare, gateway, plan,
    sampling, unmatched,
};
use crate::simulate::deploy;
use crate::units::Millis;

/// Everything a simulation produced.
#[derive(Debug)]
pub struct SimulateRun {
    pub table: EventTable,
    pub report: IngestReport,
    /// Where the limits came from, in words.
    pub source: String,
    pub scenarios: Vec<Scenario>,
    /// The algorithms a side-by-side run left out, each as `name: why` (nginx's
    /// leaky bucket cannot take a rate below 1r/m).
    pub left_out: Vec<String>,
    pub replayed: Replayed,
    /// Estimates for all clients when the events are a key sample.
    pub sampling: Option<sampling::Sampling>,
    /// How the `--gateway` products take the limits
    /// ([`gateway::policy_notes`]): Kong's one plugin per request, and the
    /// products whose export refuses them.
    pub policy_notes: Vec<String>,
}

/// The events to replay: the `--events` table, or the logs; with the clients
/// a key sample took whole (see [`sampling`]).
fn read_input(settings: &SimulateSettings) -> anyhow::Result<(Ingested, Vec<bool>)> {
    match &settings.events {
        Some(path) => events_ingested(path),
        None => Ok((ingest::ingest(&settings.ingest)?, Vec::new())),
    }
}

/// An event table (`rlctl convert`, `rlctl sql --sample-keys`) as if ingested,
/// with the clients taken whole.
pub fn events_ingested(path: &std::path::Path) -> anyhow::Result<(Ingested, Vec<bool>)> {
    let frames::events::EventsFile { table, certain } = frames::events::read_events(path)?;
    let rows = table.len() as u64;
    let resolution = match table.ts.iter().any(|t| t.rem_euclid(1000) != 0) {
        true => Resolution::Millisecond,
        false => Resolution::Second,
    };
    let report = IngestReport::of_rows(path.display().to_string(), "event table", rows, resolution);
    Ok((Ingested { table, report }, certain))
}

/// Ingests, plans and replays; the library form of `rlctl simulate`.
pub fn compute(settings: &SimulateSettings) -> anyhow::Result<SimulateRun> {
    let keys = &settings.ingest.keys;
    let mut certain = Vec::new();
    // With the recommendation, the analysis names endpoints by the routes.
    let recommended = matches!(settings.source, LimitSource::Recommended(_));
    let mut load = || -> anyhow::Result<Ingested> {
        let (mut ingested, whole) = read_input(settings)?;
        certain = whole;
        // With the recommendation, the analysis names endpoints itself.
        if !recommended {
            let table = &ingested.table;
            let routes = settings.routes.as_ref();
            if let Some(plan) =
                discover::plan_naming(table, routes, settings.discover, &settings.ingest.routes)
            {
                plan.apply(&mut ingested.table);
            }
        }
        Ok(ingested)
    };
    let policy_notes;
    let (ingested, planned, source) = match &settings.source {
        LimitSource::Recommended(analyze_settings) => {
            let run = analysis::analyze_for_policy(load()?, analyze_settings)?;
            let policy = analysis::recommended_policy(&run, analyze_settings)
                .context("no traffic to recommend limits for")?;
            let rules = policy.check("the recommendation")?;
            policy_notes = gateway::policy_notes(&rules, &[], &settings.gateways);
            let names: Vec<String> = rules
                .iter()
                .map(|r| format!("{} {}", r.name, r.spec.limit))
                .collect();
            let planned = plan::policy(&settings.algos, keys, &rules)?;
            // --burst tries every recommended rule with another burst, as
            // --algo tries it with another algorithm: said where the limits are.
            let burst = (settings.algos.burst)
                .map(|b| format!("; every rule's burst {b} (--burst)"))
                .unwrap_or_default();
            (
                run.ingested,
                planned,
                format!("recommended by rlctl analyze: {}{burst}", names.join(", ")),
            )
        }
        LimitSource::Single { limit } => {
            let planned = plan::single(&settings.algos, &keys.primary.text, *limit)?;
            policy_notes = single_limit_notes(&planned.scenarios, keys, &settings.gateways);
            (
                load()?,
                planned,
                format!("--limit {limit} per {}", keys.primary.text),
            )
        }
        LimitSource::Policy {
            origin,
            rules,
            exemptions,
        } => {
            policy_notes = gateway::policy_notes(rules, exemptions, &settings.gateways);
            let planned = plan::policy(&settings.algos, keys, rules)?;
            (load()?, planned, format!("policy {origin}"))
        }
    };
    let scenarios = with_gateways(planned.scenarios, &settings.gateways, keys)?;
    if ingested.table.is_empty() {
        anyhow::bail!(ingested.report.nothing_parsed());
    }
    let replayed = replay_scenarios(&ingested.table, &scenarios, settings)?;
    let sampling = settings
        .key_sample_rate
        .map(|rate| sampling::sampling(&ingested.table, &replayed.results, rate, &certain));
    Ok(SimulateRun {
        table: ingested.table,
        report: ingested.report,
        source,
        scenarios,
        left_out: planned.left_out,
        replayed,
        sampling,
        policy_notes,
    })
}

/// The planned scenario as each `--gateway` enforces it (after the policy's
/// own with `--gateway all`), each rule counting by its key as the gateway
/// reads it among `keys`; the scenarios unchanged without `--gateway`.
fn with_gateways(
    scenarios: Vec<Scenario>,
    gateways: &[crate::simulate::gateway::Gateway],
    keys: &KeySet,
) -> anyhow::Result<Vec<Scenario>> {
    if gateways.is_empty() {
        return Ok(scenarios);
    }
    let mut out = Vec::new();
    for base in scenarios {
        let replayed_as = gateway::scenarios(&base, gateways, keys)?;
        if gateways.len() > 1 {
            out.push(base);
        }
        out.extend(replayed_as);
    }
    Ok(out)
}

/// What replaying scenarios over a table produced.
#[derive(Debug)]
pub struct Replayed {
    pub results: Vec<ScenarioResult>,
    pub comparisons: Vec<Comparison>,
    /// The times the limiters saw, when `--what-if-scale` compressed them.
    pub scaled_ts: Option<Vec<Millis>>,
}

impl Replayed {
    /// The times the limiters saw: the table's, or the compressed ones.
    pub fn times<'a>(&'a self, table: &'a EventTable) -> &'a [Millis] {
        self.scaled_ts.as_deref().unwrap_or(&table.ts)
    }
}

/// Replays every scenario over `table` with the deployment and scale of `settings`.
pub fn replay_scenarios(
    table: &EventTable,
    scenarios: &[Scenario],
    settings: &SimulateSettings,
) -> anyhow::Result<Replayed> {
    let scaled_ts = settings
        .scale
        .map(|x| deploy::compress_time(&table.ts, x))
        .transpose()?;
    let ts = scaled_ts.as_deref().unwrap_or(&table.ts);
    let exemptions = exemptions(settings);
    let readings: Vec<_> = (settings.gateways.iter())
        .map(|g| (g.key_reading(), g.name_reading()))
        .collect();
    let masks = ExemptMasks::new(table, exemptions, &settings.ingest.keys, &readings);
    let mut runner =
        ScenarioRunner::new(table, ts, settings.deployment, settings.top).with_exemptions(masks);
    let results = scenarios
        .iter()
        .map(|s| runner.run(s))
        .collect::<Result<Vec<_>, _>>()?;
    let comparisons = if settings.compare_logged {
        results
            .iter()
            .map(|r| compare::compare(table, &r.scenario, &r.allowed))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Replayed {
        results,
        comparisons,
        scaled_ts,
    })
}

/// [`gateway::policy_notes`] for a single `--limit`: the one rule as each
/// planned algorithm gives it, keyed by `--key` (an export may refuse the key).
fn single_limit_notes(
    scenarios: &[Scenario],
    keys: &KeySet,
    gateways: &[crate::simulate::gateway::Gateway],
) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for planned in scenarios.iter().flat_map(|s| &s.rules) {
        let rule = CheckedRule {
            name: planned.name.clone(),
            method: None,
            route: None,
            key: keys.primary.clone(),
            spec: planned.spec,
        };
        for note in gateway::policy_notes(&[rule], &[], gateways) {
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
    }
    notes
}

/// The policy's exemptions (none for a single `--limit`).
fn exemptions(settings: &SimulateSettings) -> &[Exemption] {
    match &settings.source {
        LimitSource::Policy { exemptions, .. } => exemptions,
        _ => &[],
    }
}

/// The rules that applied to no request in any scenario (in the order of
/// the policy).
fn idle_rules(results: &[ScenarioResult]) -> Vec<&str> {
    let rules = || results.iter().flat_map(|r| &r.rules);
    let mut idle: Vec<&str> = Vec::new();
    for rule in rules() {
        let name = rule.rule.as_str();
        if !idle.contains(&name)
            && rules().all(|r| r.rule != name || r.summary.totals.requests == 0)
        {
            idle.push(name);
        }
    }
    idle
}

/// Runs `rlctl simulate`.
pub fn run(args: SimulateArgs) -> anyhow::Result<Outcome> {
    let settings = options::simulate_settings(&args)?;
    let run = compute(&settings)?;
    if !settings.quiet {
        for line in notes(&run.report, None) {
            eprintln!("{line}");
        }
        eprintln!(
            "rlctl: limits: {}",
            crate::text::escape::terminal(&run.source)
        );
        for left_out in &run.left_out {
            eprintln!("rlctl: note: not replayed: {left_out}; the others are replayed");
        }
        let rule_keys = (run.scenarios.iter())
            .flat_map(|s| &s.rules)
            .map(|r| r.key_text.as_str());
        let key = &settings.ingest.keys.primary.text;
        if let Some(note) = keyless_lines(&run.report, key, rule_keys) {
            eprintln!("{note}");
        }
        // A key sample may leave an exempt client out.
        if run.sampling.is_none() {
            let keys = &settings.ingest.keys;
            let missed = unmatched(&run.table, exemptions(&settings), keys, &settings.gateways);
            for line in unmatched_exemptions(&missed) {
                eprintln!("{line}");
            }
        }
        let instances = settings.deployment.instances();
        let shared: Vec<&str> = (run.scenarios.iter())
            .filter(|s| !s.per_instance)
            .map(|s| s.name.as_str())
            .collect();
        if instances > 1 && !shared.is_empty() {
            eprintln!(
                "rlctl: note: {} replayed as one instance whatever --instances {instances} says: the product's counters are shared (a Redis, or the vendor's service), so every instance sees the same counts",
                shared.join(", ")
            );
        }
        for note in &run.policy_notes {
            eprintln!("rlctl: note: {}", crate::text::escape::terminal(note));
        }
        for rule in idle_rules(&run.replayed.results) {
            // Kong's plugin for a rule meets only what the routes Kong
            // takes first leave it.
            let taken = (run.scenarios.iter().flat_map(|s| &s.rules))
                .any(|r| r.name == rule && !r.unless.is_empty());
            let hint = match taken {
                true => {
                    "the routes Kong takes first (with a method, or listed earlier) may have taken its requests; else check its method, route and key"
                }
                false => "check its method, route and key",
            };
            eprintln!(
                "rlctl: note: rule {} applied to no request; {hint}",
                crate::text::escape::terminal(rule)
            );
        }
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
    if let Some(path) = &settings.decisions {
        render::decisions::write(
            path,
            &run.table,
            run.replayed.times(&run.table),
            &run.replayed.results,
        )
        .with_context(|| format!("cannot write decisions to {}", path.display()))?;
    }
    Ok(Outcome::Success)
}
