//! Running a scenario over the event table: which rules apply to which request,
//! the replay (with the deployment), and the summaries per rule and overall.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;
use serde::Serialize;

use super::exempt::ExemptMasks;
use super::plan::{KeyRef, PlannedRule, Scenario};
use super::selection::{Selection, Subset, key_ids, key_names, shared_keys};
use crate::events::EventTable;
use crate::simulate::gateway::NameReading;
use crate::simulate::{
    AlgorithmKind, ByClient, Census, Decisions, Deployment, Limiter, PreparedKeys, ReplayError,
    Replayer, Rule, Summary, Totals, Traffic, deploy, summarize_admitted, totals,
};
use crate::units::Millis;

/// One rule's figures within a scenario.
#[derive(Debug, Clone, Serialize)]
pub struct RuleResult {
    pub scenario: String,
    pub rule: String,
    pub key: String,
    /// How a gateway's replay read the key, where that differs from the
    /// policy's `key` (`null` otherwise).
    pub key_read: Option<String>,
    /// `null` for a rule that applies to every method (or route), as
    /// `burst` is for an algorithm without one: every row has every field.
    pub method: Option<String>,
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

/// Runs scenarios over one table, sharing what they have in common (the
/// scenarios of a policy, one per algorithm, have the same rules): what each
/// rule selects (its key column, and its requests for the summary), and with
/// one instance the rules' key columns checked and combined for the replay,
/// with the grouping of events by key kept in the [`Replayer`].
#[derive(Debug)]
pub struct ScenarioRunner<'a> {
    table: &'a EventTable,
    replayer: Replayer<'a>,
    deployment: Deployment,
    top: usize,
    /// Per key, method and route: the rule's key column and requests.
    selections: HashMap<RuleSelection, Arc<Selection>>,
    /// Per list of rule selections, their key columns prepared for the replay
    /// (with one instance).
    prepared: HashMap<Vec<RuleSelection>, PreparedKeys>,
    /// Per event, whether an exemption matches it (no rule applies to it
    /// then), as the policy and each product reads keys.
    exempt: ExemptMasks,
    /// What no decision changes of all events, shared by the summaries over them.
    census: OnceLock<Census>,
}

/// What picks a rule's requests and keys: its key, method and route regex,
/// the (method, route regex) pairs it does not apply under, the place of its
/// exemption mask, and how methods and paths are read.
type RuleSelection = (
    KeyRef,
    Option<String>,
    Option<String>,
    Vec<(Option<String>, Option<String>)>,
    usize,
    NameReading,
);

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
            selections: HashMap::new(),
            prepared: HashMap::new(),
            exempt: ExemptMasks::default(),
            census: OnceLock::new(),
        }
    }

    /// Exempts the events `masks` marks from every rule, each scenario by
    /// the mask of its reading (see [`super::exempt`]).
    pub fn with_exemptions(mut self, masks: ExemptMasks) -> Self {
        self.exempt = masks;
        self.selections.clear();
        self.prepared.clear();
        self
    }

    /// Replays one scenario.
    pub fn run(&mut self, scenario: &Scenario) -> Result<ScenarioResult, ReplayError> {
        let (table, ts) = (self.table, self.replayer.times());
        let (slot, exempt) = self.exempt.of(scenario.reading, scenario.names);
        let exempt = exempt.map(|mask| &**mask);
        let mut missing: Vec<(RuleSelection, &PlannedRule)> = Vec::new();
        for rule in &scenario.rules {
            let id = selection_id(rule, slot, scenario.names);
            if !self.selections.contains_key(&id) && missing.iter().all(|(m, _)| *m != id) {
                missing.push((id, rule));
            }
        }
        let wanted: Vec<&PlannedRule> = missing.iter().map(|(_, rule)| *rule).collect();
        let built = Selection::many(table, ts, (&wanted, scenario.names), exempt);
        (self.selections).extend(
            missing
                .into_iter()
                .map(|(id, _)| id)
                .zip(built.into_iter().map(Arc::new)),
        );
        let ids: Vec<RuleSelection> = (scenario.rules.iter())
            .map(|rule| selection_id(rule, slot, scenario.names))
            .collect();
        let selections: Vec<Arc<Selection>> =
            (ids.iter()).map(|id| self.selections[id].clone()).collect();
        let replayer = &mut self.replayer;
        let replay = if self.deployment.instances() == 1 || !scenario.per_instance {
            let prepared = match self.prepared.entry(ids) {
                Entry::Occupied(prepared) => prepared.into_mut(),
                Entry::Vacant(slot) => {
                    // Without the rules' key columns where they share keys.
                    let keys: Vec<KeyRef> = scenario.rules.iter().map(|r| r.key).collect();
                    let chosen: Vec<&Selection> = selections.iter().map(|s| &**s).collect();
                    let counts = keys
                        .iter()
                        .map(|&key| key_names(table, key).len())
                        .collect();
                    // (One rule's column is borrowed when it applies everywhere.)
                    let shared = (keys.len() > 1)
                        .then(|| shared_keys(table, &keys, &chosen))
                        .flatten()
                        .and_then(|(keys, applying)| {
                            replayer.prepare_shared(keys, &applying, counts)
                        });
                    match shared {
                        Some(prepared) => slot.insert(prepared),
                        None => {
                            let columns = key_columns(table, scenario, &selections);
                            slot.insert(replayer.prepare(&rules(table, scenario, &columns))?)
                        }
                    }
                }
            };
            let limiters: Vec<Limiter> = scenario.rules.iter().map(|r| r.limiter.clone()).collect();
            replayer.replay_prepared(&limiters, prepared)
        } else {
            let columns = key_columns(table, scenario, &selections);
            let rules = rules(table, scenario, &columns);
            deploy::decide_deployed(replayer, &rules, &table.client, &self.deployment)?
        };
        let census = (self.census).get_or_init(|| Census::new(&table.client, &table.endpoint));
        Ok(summarise(
            table,
            replayer,
            census,
            scenario,
            &selections,
            replay,
            self.top,
        ))
    }
}

fn selection_id(rule: &PlannedRule, exempt_slot: usize, names: NameReading) -> RuleSelection {
    (
        rule.key,
        rule.method.clone(),
        rule.route.as_ref().map(|r| r.as_str().to_owned()),
        (rule.unless.iter())
            .map(|(m, r)| (m.clone(), r.as_ref().map(|r| r.as_str().to_owned())))
            .collect(),
        exempt_slot,
        names,
    )
}

/// Per rule of `scenario`, its key column (from its selection).
fn key_columns<'t>(
    table: &'t EventTable,
    scenario: &Scenario,
    selections: &[Arc<Selection>],
) -> Vec<Cow<'t, [u32]>> {
    (scenario.rules.iter())
        .zip(selections)
        .map(|(rule, selection)| selection.keys(table, rule.key))
        .collect()
}

/// The rules of `scenario` with their key `columns`, ready to replay.
fn rules<'k>(table: &EventTable, scenario: &Scenario, columns: &'k [Cow<[u32]>]) -> Vec<Rule<'k>> {
    (scenario.rules.iter())
        .zip(columns)
        .map(|(r, keys)| Rule {
            limiter: r.limiter.clone(),
            keys,
            key_count: key_names(table, r.key).len(),
        })
        .collect()
}

/// The results of one scenario from its `replay` over `table` (whose `census`
/// it is), with what its rules select.
fn summarise(
    table: &EventTable,
    replayer: &Replayer,
    census: &Census,
    scenario: &Scenario,
    selections: &[Arc<Selection>],
    replay: Decisions,
    top: usize,
) -> ScenarioResult {
    let traffic = Traffic {
        ts: replayer.times(),
        by_client: replayer.grouped_by(&table.client),
        census: Some(census),
        ..Traffic::of(table)
    };
    // One rule: its verdicts are the decisions, which the replay also kept in
    // the order of its grouping (the one `traffic.by_client` is, when set).
    let grouped_allowed = match &scenario.rules[..] {
        [_] => replay.grouped_allowed.as_deref(),
        _ => None,
    };
    let rule_traffic = Traffic {
        by_client: (traffic.by_client).map(|by_client| ByClient {
            allowed: grouped_allowed,
            ..by_client
        }),
        ..traffic
    };
    let rule_results: Vec<RuleResult> = (scenario.rules.par_iter())
        .zip(selections)
        .enumerate()
        .map(|(r, (rule, selection))| {
            let traffic = keyed_by(table, replayer, &rule_traffic, rule.key, grouped_allowed);
            RuleResult {
                scenario: scenario.name.clone(),
                rule: rule.name.clone(),
                key: rule.key_text.clone(),
                key_read: rule.key_read.clone(),
                method: rule.method.clone(),
                route: rule.route.as_ref().map(|r| r.as_str().to_string()),
                summary: rule_summary(rule, &traffic, selection.subset(), &replay, r, top),
            }
        })
        .collect();
    // One rule deciding every request, keyed by --key: its totals are the
    // scenario's (a rule keyed otherwise counts other clients).
    let reuse = match (&rule_results[..], selections, &scenario.rules[..]) {
        ([only], [selection], [rule]) => (rule.key == KeyRef::Primary
            && selection.subset().is_none()
            && replay.rule_allowed(0)[..] == replay.allowed[..])
            .then(|| only.summary.totals.clone()),
        _ => None,
    };
    ScenarioResult {
        scenario: scenario.name.clone(),
        totals: reuse.unwrap_or_else(|| totals(&traffic, &replay.allowed, top)),
        rules: rule_results,
        allowed: replay.allowed,
    }
}

/// `traffic` (by `--key`) with its clients counted by `key`, a rule's own:
/// a rule's figures (clients hit, the clients it rejects most, its busiest
/// span) are by the key it limits, as a gateway keeps its counters.
/// `grouped_allowed`: the decisions in the replay's grouping, when they are
/// the rule's.
fn keyed_by<'t>(
    table: &'t EventTable,
    replayer: &'t Replayer,
    traffic: &Traffic<'t>,
    key: KeyRef,
    grouped_allowed: Option<&'t [bool]>,
) -> Traffic<'t> {
    if key == KeyRef::Primary {
        return *traffic;
    }
    let ids = key_ids(table, key);
    Traffic {
        client: ids,
        client_names: key_names(table, key),
        by_client: (replayer.grouped_by(ids)).map(|by_client| ByClient {
            allowed: grouped_allowed,
            ..by_client
        }),
        census: None,
        ..*traffic
    }
}

/// Rule `r`'s summary over the requests it applies to (`subset`, or all of
/// `traffic`), from its own verdicts in `replay`; its busiest span from what
/// went through its counters: the requests the whole policy admitted (one
/// that another rule rejects changes no rule's state, so a rule's own
/// verdicts may admit it again and again).
fn rule_summary(
    rule: &PlannedRule,
    traffic: &Traffic,
    subset: Option<&Subset>,
    replay: &Decisions,
    r: usize,
    top: usize,
) -> Summary {
    // nginx holds requests for its limit_req (leaky-bucket) rules only.
    let delay_ms =
        (replay.delay_ms.as_deref()).filter(|_| rule.spec.kind == AlgorithmKind::LeakyBucket);
    let (traffic, verdicts, delays) = match subset {
        None => (
            *traffic,
            replay.rule_allowed(r),
            delay_ms.map(Cow::Borrowed),
        ),
        Some(subset) => (
            subset.traffic(traffic),
            Cow::Owned(replay.rule_allowed_at(r, Some(subset.rows()))),
            delay_ms.map(|d| Cow::Owned(subset.pick(d))),
        ),
    };
    let admitted = (replay.rules > 1).then(|| match subset {
        None => Cow::Borrowed(&replay.allowed[..]),
        Some(subset) => Cow::Owned(subset.pick(&replay.allowed)),
    });
    summarize_admitted(
        &rule.spec,
        &rule.limiter,
        &traffic,
        &verdicts,
        admitted.as_deref(),
        delays.as_deref(),
        top,
    )
}
