//! The dry run itself: every request through every rule of a policy, on the
//! log's own timestamps, deciding as `rlctl simulate` does on the same lines.
//!
//! The semantics are the replay loop's (`simulate::replay`): a rule applies to
//! a request when its method and route match and its key has a value; the
//! request is admitted when every rule that applies admits it, and only then
//! is it recorded in each rule's state (a rejected one goes through
//! [`Algorithm::rejected`](crate::simulate::Algorithm::rejected), which only gateway models use); each rule's own
//! verdict is what it counts as would-reject (a request two rules reject
//! counts for both). With `--gateway`, each rule decides as that gateway's
//! model (`simulate::gateway`), as `rlctl simulate --gateway` does; for Kong,
//! the plugins its configuration runs stand for the rules
//! ([`crate::scenario::kong`]). A request
//! an exemption matches ([`super::exempt`]) is admitted, counted by no rule and
//! changes no state, as in `rlctl simulate`.
//!
//! A late request (older than one already decided) is decided only where
//! every rule it applies to can place it in its key's own time order
//! ([`keyed`]); otherwise each of them counts it as unplaced.
//!
//! State stays bounded: [`Shadow::sweep`] drops every key whose state decides
//! like the empty one ([`Algorithm::is_idle`](crate::simulate::Algorithm::is_idle))
//! at the newest time (or the older time the 64 newest requests reached)
//! minus the lateness kept for, which changes no decision, and closes the
//! ended windows of the rolling figures.

mod keyed;
mod request;

use keyed::{Keyed, KeyedStates};
pub use request::Request;

use super::distinct::key_hash;
use super::exempt::{Exemptions, key_column};
use super::reached::Reached;
use super::rolling::{HourFigures, Rolling};
use super::top::{Added, TopClient, TopClients};
use super::tracked::Tracked;
use crate::ingest::key::{KeyReading, KeySet};
use crate::policy::exempt::add_key_columns;
use crate::policy::{CheckedRule, Exemption};
use crate::scenario::kong::{self, MethodRoute};
use crate::simulate::gateway::{Fidelity, Gateway, GatewayError, NameReading};
use crate::simulate::spec::with_algorithm;
use crate::simulate::{Limiter, SpecError};
use crate::units::{Limit, Millis};

/// A rule the dry run cannot replay.
#[derive(Debug, thiserror::Error)]
pub enum ShadowError {
    #[error(transparent)]
    Spec(#[from] SpecError),
    #[error("rule {rule}: {source}")]
    Gateway {
        rule: String,
        #[source]
        source: GatewayError,
    },
}

/// One rule in shadow.
#[derive(Debug)]
struct ShadowRule {
    rule: CheckedRule,
    /// The (method, route) pairs under which it does not apply: the routes
    /// Kong takes before its own ([`crate::scenario::kong`]).
    unless: Vec<MethodRoute>,
    /// 0: the primary key; i + 1: extra key i.
    key_column: usize,
    states: Box<dyn KeyedStates>,
    rolling: Rolling,
    top: TopClients,
    /// The profiles of the clients `top` holds.
    tracked: Tracked,
    requests: u64,
    would_reject: u64,
    /// Late requests it applied to that were not decided: it or another
    /// rule that applies could not place them in their key's time order.
    unplaced: u64,
}

impl ShadowRule {
    /// The clients it would reject most, each with its profile in the hour
    /// ending at `now` (T from `hour`'s baseline p99).
    fn top_profiled(&self, now: Millis, hour: &HourFigures) -> Vec<TopClient> {
        let p99 = hour.baseline_p99;
        let mut top = self.top.top(TOP_LISTED);
        for c in &mut top {
            if let Some(p) = self.tracked.profile(&c.client, now, p99) {
                c.profile = p.findings;
                c.peak_window = p.peak_window;
            }
        }
        top
    }
}

/// One rule's figures.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RuleFigures {
    pub rule: String,
    pub key: String,
    pub limit: String,
    /// The rule's algorithm, or with `--gateway` the gateway (`kong-redis`,
    /// `aws-waf (model)`).
    pub algorithm: String,
    /// Requests the rule applied to and decided.
    pub requests: u64,
    /// Requests the rule on its own would have rejected.
    pub would_reject: u64,
    /// Late requests it applied to that were not decided: it or another rule
    /// that applies could not place them in their key's time order (see
    /// [`Shadow::decide`]).
    pub unplaced: u64,
    /// Keys whose limiter state is kept (not yet back to empty).
    pub states: usize,
    /// The last hour, by log time.
    pub hour: HourFigures,
    /// The clients it would reject most (since the start).
    pub top: Vec<TopClient>,
}

/// Counters per rule for the clients it would reject most.
const TOP_COUNTERS: usize = 64;
/// How many of them the figures list.
pub const TOP_LISTED: usize = 5;

/// Every rule of a policy in shadow.
#[derive(Debug)]
pub struct Shadow {
    rules: Vec<ShadowRule>,
    exemptions: Exemptions,
    gateway: Option<Gateway>,
    /// Requests an exemption matched.
    exempt: u64,
    /// The newest time of a request decided.
    now: Option<Millis>,
    /// The newest times of the requests the rules saw, for the sweep.
    reached: Reached,
    /// How far behind the newest time decided limiter states are kept for
    /// late requests (see [`Shadow::sweep`]).
    lateness: Millis,
}

/// The rules that apply to a request with `keys`, each with its key.
fn applying<'a>(
    rules: &'a mut [ShadowRule],
    keys: &'a [Option<Box<str>>],
) -> impl Iterator<Item = (&'a mut ShadowRule, &'a str)> {
    (rules.iter_mut().zip(keys)).filter_map(|(rule, key)| Some((rule, key.as_deref()?)))
}

/// The key set ingestion must extract for `rules`: `primary` (`--key`) plus
/// every rule key that differs from it (as `rlctl simulate --policy` does).
pub fn keys_for(rules: &[CheckedRule], primary: KeySet) -> KeySet {
    keys_for_policy(rules, &[], None, primary)
}

/// [`keys_for`] with the keys of the policy's exemptions too, and each key
/// as `gateway` reads it.
pub fn keys_for_policy(
    rules: &[CheckedRule],
    exemptions: &[Exemption],
    gateway: Option<Gateway>,
    primary: KeySet,
) -> KeySet {
    let mut keys = primary;
    let readings: Vec<KeyReading> = gateway.iter().map(|g| g.key_reading()).collect();
    add_key_columns(&mut keys, rules, exemptions, &readings);
    keys
}

impl Shadow {
    /// The rules of a policy, with `keys` (from [`keys_for`]) telling which
    /// column of a parsed chunk holds each rule's key.
    pub fn new(rules: &[CheckedRule], keys: &KeySet) -> Result<Self, ShadowError> {
        Shadow::with_policy(rules, &[], None, keys)
    }

    /// The rules with their algorithms (or, with `gateway`, as that gateway's
    /// model enforces each), and the exemptions, with `keys` from
    /// [`keys_for_policy`].
    pub fn with_policy(
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        gateway: Option<Gateway>,
        keys: &KeySet,
    ) -> Result<Self, ShadowError> {
        // Kong runs one plugin per request: its plugins stand for the rules;
        // Traefik keeps a rule's buckets per router.
        let runs = kong::policy_runs(rules, gateway);
        let rules = runs
            .into_iter()
            .map(|run| {
                let limiters = (run.merged.iter())
                    .map(|&j| {
                        let rule = &rules[j];
                        match gateway {
                            Some(g) => {
                                g.limiter(&rule.spec)
                                    .map_err(|source| ShadowError::Gateway {
                                        rule: rule.name.clone(),
                                        source,
                                    })
                            }
                            None => Ok(rule.spec.limiter()?),
                        }
                    })
                    .collect::<Result<Vec<Limiter>, ShadowError>>()?;
                let limiter = match &limiters[..] {
                    [one] => one.clone(),
                    several => kong::merged_limiter(&several.iter().collect::<Vec<_>>())
                        .expect("only Kong's plugins merge rules"),
                };
                // Traefik's routers pick a rule's requests by their own
                // method and route.
                let picked = &rules[run.picked_by()];
                let rule = CheckedRule {
                    name: run.name(|j| &rules[j].name),
                    method: picked.method.clone(),
                    route: picked.route.clone(),
                    ..rules[run.merged[0]].clone()
                };
                let states = with_algorithm!(&limiter, alg => Box::new(Keyed::new(alg.clone())) as Box<dyn KeyedStates>);
                // The key as ingested (the primary one with `--cidr4/6`),
                // as the gateway reads it.
                let ingested = keys.by_text(&rule.key.text).unwrap_or(&rule.key);
                let read = gateway.and_then(|g| ingested.read_as(g.key_reading()));
                let key_column = key_column(keys, &read.as_ref().unwrap_or(ingested).text);
                Ok(ShadowRule {
                    unless: run.unless,
                    key_column,
                    states,
                    rolling: Rolling::new(rule.spec.limit.window.millis()),
                    top: TopClients::new(TOP_COUNTERS),
                    tracked: Tracked::new(rule.spec.limit.window),
                    requests: 0,
                    would_reject: 0,
                    unplaced: 0,
                    rule,
                })
            })
            .collect::<Result<Vec<_>, ShadowError>>()?;
        Ok(Shadow {
            rules,
            exemptions: Exemptions::new(
                exemptions,
                keys,
                (
                    gateway.map(|g| g.key_reading()),
                    gateway.map_or_else(NameReading::default, |g| g.name_reading()),
                ),
            ),
            gateway,
            exempt: 0,
            now: None,
            reached: Reached::default(),
            lateness: 0,
        })
    }

    /// Decides one request at `t`; returns whether every rule that applies
    /// admits it. It is decided only where every rule that applies can place
    /// it in its key's time order (see [`keyed`]); otherwise (a late request
    /// older than a key's last decision, or than the last sweep of states)
    /// each of those rules counts it as unplaced, and it changes no state and
    /// takes no part in the verdict (returns true). A rule that decided it
    /// where another cannot would record what the sorted replay might have
    /// rejected.
    pub fn decide(&mut self, t: Millis, request: &Request) -> bool {
        self.now = Some(self.now.map_or(t, |now| now.max(t)));
        if request.exempt {
            self.exempt += 1;
            return true;
        }
        self.reached.push(t);
        let keys = &request.keys;
        if !applying(&mut self.rules, keys).all(|(rule, key)| rule.states.placeable(key, t)) {
            applying(&mut self.rules, keys).for_each(|(rule, _)| rule.unplaced += 1);
            return true;
        }
        let mut allowed = true;
        for (rule, key) in applying(&mut self.rules, keys) {
            let verdict = rule.states.allows(key, t);
            allowed &= verdict;
            rule.requests += 1;
            rule.would_reject += u64::from(!verdict);
            let tracked = rule.top.contains(key);
            rule.rolling
                .observe(key, key_hash(key), t, !verdict, tracked);
            rule.tracked
                .observe(key, t, &request.endpoint, request.status);
            if verdict {
                continue;
            }
            if let Added::Entered(evicted) = rule.top.add(key) {
                if let Some(evicted) = evicted {
                    rule.tracked.forget(&evicted);
                }
                let in_window = rule.rolling.open_count(key);
                rule.tracked
                    .start(key, t, in_window, &request.endpoint, request.status);
            }
        }
        for (rule, key) in applying(&mut self.rules, keys) {
            if allowed {
                rule.states.record(key, t);
            } else {
                rule.states.rejected(key, t);
            }
        }
        allowed
    }

    /// Keeps limiter states for late requests up to `lateness` behind the
    /// newest time decided (`--max-lateness`; 0 unless set).
    pub fn with_lateness(mut self, lateness: Millis) -> Self {
        self.lateness = lateness.max(0);
        self
    }

    /// Closes the windows that ended before `t` (the newest time decided),
    /// and drops the states that decide like empty ones at `t`, or the older
    /// time the 64 newest requests the rules saw have reached, minus the
    /// lateness kept for; returns how many states are left. (A line far ahead
    /// that the reorder buffer let out, in a log paused behind the wall
    /// clock, would otherwise sweep every state its neighbours need.)
    pub fn sweep(&mut self, t: Millis) -> usize {
        let reached = self.reached.time().map_or(t, |r| r.min(t));
        let states_until = reached.saturating_sub(self.lateness);
        self.rules
            .iter_mut()
            .map(|rule| {
                let top = &rule.top;
                rule.rolling.sweep(t, |key| top.contains(key));
                rule.states.sweep(states_until)
            })
            .sum()
    }

    /// Requests an exemption matched (admitted, counted by no rule).
    pub fn exempt(&self) -> u64 {
        self.exempt
    }

    /// The newest time of a request decided.
    pub fn now(&self) -> Option<Millis> {
        self.now
    }

    /// Each rule's figures, the hour ending at the newest request decided.
    pub fn figures(&self) -> Vec<RuleFigures> {
        self.figures_at(self.now.unwrap_or(0))
    }

    /// Each rule's figures, the hour ending at `now`.
    pub fn figures_at(&self, now: Millis) -> Vec<RuleFigures> {
        self.rules
            .iter()
            .map(|r| {
                let hour = r.rolling.hour(now);
                RuleFigures {
                    rule: r.rule.name.clone(),
                    key: r.rule.key.text.clone(),
                    limit: r.rule.spec.limit.to_string(),
                    algorithm: match self.gateway {
                        Some(g) if g.fidelity() == Fidelity::Model => format!("{g} (model)"),
                        Some(g) => g.to_string(),
                        None => r.rule.spec.kind.to_string(),
                    },
                    requests: r.requests,
                    would_reject: r.would_reject,
                    unplaced: r.unplaced,
                    states: r.states.len(),
                    top: r.top_profiled(now, &hour),
                    hour,
                }
            })
            .collect()
    }

    /// Each rule's limit (the policy's basis the per-window quantiles compare to).
    pub fn limits(&self) -> Vec<(String, Limit)> {
        self.rules
            .iter()
            .map(|r| (r.rule.name.clone(), r.rule.spec.limit))
            .collect()
    }
}

#[cfg(test)]
mod tests;
