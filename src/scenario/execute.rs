//! Running a scenario over the event table: which rules apply to which request,
//! the replay (with the deployment), and the summaries per rule and overall.

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::plan::{KeyRef, PlannedRule, Scenario};
use crate::events::{EventTable, Id};
use crate::simulate::{
    Deployment, NOT_APPLICABLE, Replay, ReplayError, Replayer, Rule, Summary, Totals, Traffic,
    deploy, summarize, totals,
};
use crate::units::Millis;

/// One rule's figures within a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    pub scenario: String,
    pub rule: String,
    pub key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    #[serde(flatten)]
    pub summary: Summary,
}

/// What a scenario did to all requests.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    pub scenario: String,
    #[serde(flatten)]
    pub totals: Totals,
    #[serde(skip)]
    pub rules: Vec<RuleResult>,
    /// Final decision per event.
    #[serde(skip)]
    pub allowed: Vec<bool>,
}

/// Runs scenarios over one table, sharing what they have in common: the grouping
/// of events by key (in the [`Replayer`]) and the key columns of rules that
/// apply to some requests only (the scenarios of a policy, one per algorithm,
/// have the same rules).
#[derive(Debug)]
pub struct ScenarioRunner<'a> {
    table: &'a EventTable,
    replayer: Replayer<'a>,
    deployment: Deployment,
    top: usize,
    /// Per key, method and route: the rule's key column, or `None` when the
    /// rule applies to every request (its column is the key's own).
    columns: HashMap<RuleSelection, Option<Arc<[u32]>>>,
    /// Per event, whether an exemption matches it (no rule applies to it then).
    exempt: Option<Arc<[bool]>>,
}

/// What picks a rule's requests and keys: its key, method and route regex.
type RuleSelection = (KeyRef, Option<String>, Option<String>);

impl<'a> ScenarioRunner<'a> {
    /// A runner over `table` with times `ts` (the table's, or compressed), listing
    /// the `top` most rejected clients.
    pub fn new(
        table: &'a EventTable,
        ts: &'a [Millis],
        deployment: Deployment,
        top: usize,
    ) -> Self {
        ScenarioRunner {
            table,
            replayer: Replayer::new(ts),
            deployment,
            top,
            columns: HashMap::new(),
            exempt: None,
        }
    }

    /// Exempts the events `mask` marks from every rule (see [`super::exempt`]).
    pub fn with_exemptions(mut self, mask: Option<Arc<[bool]>>) -> Self {
        self.exempt = mask;
        self.columns.clear();
        self
    }

    /// Replays one scenario.
    pub fn run(&mut self, scenario: &Scenario) -> Result<ScenarioResult, ReplayError> {
        let table = self.table;
        let owned: Vec<Option<Arc<[u32]>>> = scenario
            .rules
            .iter()
            .map(|rule| {
                let id = (
                    rule.key,
                    rule.method.clone(),
                    rule.route.as_ref().map(|r| r.as_str().to_owned()),
                );
                let exempt = self.exempt.as_deref();
                let column = self
                    .columns
                    .entry(id)
                    .or_insert_with(|| key_column(table, rule, exempt));
                column.clone()
            })
            .collect();
        let columns: Vec<&[u32]> = scenario
            .rules
            .iter()
            .zip(&owned)
            .map(|(rule, column)| column.as_deref().unwrap_or(key_ids(table, rule.key)))
            .collect();
        run_scenario(
            table,
            &mut self.replayer,
            scenario,
            &columns,
            &self.deployment,
            self.top,
        )
    }
}

/// The key id of every event for `key` ([`NO_KEY`](crate::events::NO_KEY),
/// which is [`NOT_APPLICABLE`], where it has no value).
fn key_ids(table: &EventTable, key: KeyRef) -> &[Id] {
    match key {
        KeyRef::Primary => &table.client,
        KeyRef::Extra(i) => &table.extra_keys[i].ids,
    }
}

/// Per event, the key a rule counts by, or [`NOT_APPLICABLE`] where the rule's
/// method or route does not match, an exemption matches (`exempt`), or the key
/// has no value; `None` when the rule applies to every request, so that its
/// column is [`key_ids`].
fn key_column(
    table: &EventTable,
    rule: &PlannedRule,
    exempt: Option<&[bool]>,
) -> Option<Arc<[u32]>> {
    let method_ok: Vec<bool> = table
        .methods
        .names()
        .map(|m| {
            rule.method
                .as_deref()
                .is_none_or(|want| want.eq_ignore_ascii_case(m))
        })
        .collect();
    let route_ok: Option<Vec<bool>> = rule
        .route
        .as_ref()
        .map(|re| table.paths.names().map(|p| re.is_match(p)).collect());
    let everywhere = |ok: &[bool]| ok.iter().all(|&ok| ok);
    if everywhere(&method_ok) && route_ok.as_deref().is_none_or(everywhere) && exempt.is_none() {
        return None;
    }
    let ids = key_ids(table, rule.key);
    let column: Vec<u32> = (0..table.len())
        .into_par_iter()
        .map(|i| {
            let route = route_ok
                .as_ref()
                .is_none_or(|ok| ok[table.path[i] as usize]);
            let exempted = exempt.is_some_and(|mask| mask[i]);
            if method_ok[table.method[i] as usize] && route && !exempted {
                ids[i] // NO_KEY is NOT_APPLICABLE
            } else {
                NOT_APPLICABLE
            }
        })
        .collect();
    Some(column.into())
}

fn key_count(table: &EventTable, key: KeyRef) -> usize {
    match key {
        KeyRef::Primary => table.clients.len(),
        KeyRef::Extra(i) => table.extra_keys[i].names.len(),
    }
}

/// Replays one scenario over `table` with its rules' key `columns`.
fn run_scenario(
    table: &EventTable,
    replayer: &mut Replayer,
    scenario: &Scenario,
    columns: &[&[u32]],
    deployment: &Deployment,
    top: usize,
) -> Result<ScenarioResult, ReplayError> {
    let rules: Vec<Rule> = scenario
        .rules
        .iter()
        .zip(columns)
        .map(|(r, keys)| Rule {
            limiter: r.limiter.clone(),
            keys,
            key_count: key_count(table, r.key),
        })
        .collect();
    let replay: Replay = deploy::replay_deployed(replayer, &rules, &table.client, deployment)?;
    let traffic = Traffic {
        ts: replayer.times(),
        by_client: replayer.grouped_by(&table.client),
        ..Traffic::of(table)
    };
    let rule_results: Vec<RuleResult> = scenario
        .rules
        .iter()
        .enumerate()
        .map(|(i, rule)| RuleResult {
            scenario: scenario.name.clone(),
            rule: rule.name.clone(),
            key: rule.key_text.clone(),
            method: rule.method.clone(),
            route: rule.route.as_ref().map(|r| r.as_str().to_string()),
            summary: rule_summary(
                rule,
                &traffic,
                columns[i],
                &replay.rule_allowed[i],
                replay.delay_ms.as_deref(),
                top,
            ),
        })
        .collect();
    // One rule deciding every request: its totals are the scenario's.
    let reuse = match (&rule_results[..], &replay.rule_allowed[..], columns) {
        ([only], [verdicts], [keys]) => (*verdicts == replay.allowed
            && !keys.contains(&NOT_APPLICABLE))
        .then(|| only.summary.totals.clone()),
        _ => None,
    };
    Ok(ScenarioResult {
        scenario: scenario.name.clone(),
        totals: reuse.unwrap_or_else(|| totals(&traffic, &replay.allowed, top)),
        rules: rule_results,
        allowed: replay.allowed,
    })
}

/// A rule's summary over the requests it applies to, from its own verdicts.
fn rule_summary(
    rule: &PlannedRule,
    traffic: &Traffic,
    keys: &[u32],
    verdicts: &[bool],
    delay_ms: Option<&[u64]>,
    top: usize,
) -> Summary {
    if keys.iter().all(|&k| k != NOT_APPLICABLE) {
        return summarize(&rule.spec, &rule.limiter, traffic, verdicts, delay_ms, top);
    }
    let rows: Vec<usize> = (0..keys.len())
        .filter(|&i| keys[i] != NOT_APPLICABLE)
        .collect();
    let pick = |col: &[u32]| rows.iter().map(|&i| col[i]).collect::<Vec<_>>();
    let ts: Vec<Millis> = rows.iter().map(|&i| traffic.ts[i]).collect();
    let (client, endpoint) = (pick(traffic.client), pick(traffic.endpoint));
    let verdicts: Vec<bool> = rows.iter().map(|&i| verdicts[i]).collect();
    let delays: Option<Vec<u64>> = delay_ms.map(|d| rows.iter().map(|&i| d[i]).collect());
    let subset = Traffic {
        ts: &ts,
        client: &client,
        endpoint: &endpoint,
        by_client: None,
        ..*traffic
    };
    summarize(
        &rule.spec,
        &rule.limiter,
        &subset,
        &verdicts,
        delays.as_deref(),
        top,
    )
}
