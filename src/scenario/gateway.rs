//! `--gateway`: a scenario's rules replayed as a gateway product enforces the
//! configuration `rlctl export` writes for them ([`crate::simulate::gateway`]).
//! Each gateway becomes one scenario named after it; the documented models
//! (AWS WAF, Cloudflare) carry "(model)" in their name, so every output that
//! shows a scenario labels them.

use super::execute::ScenarioRunner;
use super::exempt::ExemptMasks;
use super::names::{names_of, picked_alike};
use super::plan::{KeyRef, Scenario, key_ref_read_as};
use super::selection::{key_ids, key_names};
use crate::events::{EventTable, NO_KEY};
use crate::export::{ExportOptions, Target};
use crate::ingest::key::{KeySet, KeySpec};
use crate::policy::{CheckedRule, Exemption};
use crate::simulate::gateway::check::{
    Difference, GatewayReplays, Reason, differences, regrouping,
};
use crate::simulate::gateway::{Fidelity, Gateway, GatewayError, NameReading};
use crate::simulate::{Deployment, Limiter, ReplayError};

/// Why a check cannot run.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Gateway(#[from] GatewayError),
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// What `rlctl export --target X --check LOG` found: the policy and the
/// exported configuration replayed over the same requests.
#[derive(Debug, Clone)]
pub struct ExportCheck {
    /// The gateway the configuration is replayed as.
    pub gateway: Gateway,
    /// Requests replayed.
    pub requests: usize,
    /// Requests the policy rejects.
    pub policy_rejected: usize,
    /// Requests the gateway rejects.
    pub gateway_rejected: usize,
    /// Every request on which they differ, in the table's order, with the reason.
    pub differences: Vec<Difference>,
    /// The key its rules count by, when they share one (else `--key`'s), and
    /// that key as the gateway reads it when it reads it otherwise.
    keys: (KeyRef, Option<KeyRef>),
}

impl ExportCheck {
    /// Whether the gateway reads the rules' shared key otherwise than the policy.
    pub fn reads_key_otherwise(&self) -> bool {
        self.keys.1.is_some()
    }

    /// The client of request `row` of `table` (replayed) as the policy's
    /// rules count it, and as the gateway does when it reads the key
    /// otherwise (`-`: the gateway counts no client there).
    pub fn client(&self, table: &EventTable, row: usize) -> (String, Option<String>) {
        let name = |key: KeyRef| match key_ids(table, key)[row] {
            NO_KEY => "-".to_string(),
            id => key_names(table, key).name(id).to_string(),
        };
        (name(self.keys.0), self.keys.1.map(name))
    }
}

/// What `--gateway` asks for: one gateway, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GatewayChoice {
    /// This gateway.
    One(Gateway),
    /// Every gateway, side by side.
    All,
}

impl GatewayChoice {
    /// The gateways asked for, in the order they are reported.
    pub fn gateways(self) -> Vec<Gateway> {
        match self {
            GatewayChoice::One(g) => vec![g],
            GatewayChoice::All => Gateway::ALL.to_vec(),
        }
    }
}

impl std::str::FromStr for GatewayChoice {
    type Err = GatewayError;

    /// `all`, or the name of one gateway.
    fn from_str(text: &str) -> Result<Self, GatewayError> {
        match text {
            "all" => Ok(GatewayChoice::All),
            name => (name.parse().map(GatewayChoice::One))
                .map_err(|_| GatewayError::UnknownChoice(name.to_string())),
        }
    }
}

/// The scenario name of a gateway: its name, with "(model)" for the models.
pub fn label(gateway: Gateway) -> String {
    match gateway.fidelity() {
        Fidelity::Exact => gateway.name().to_string(),
        Fidelity::Model => format!("{} (model)", gateway.name()),
    }
}

/// The rules of `base` as each of `gateways` enforces them, one scenario each,
/// each rule counting by its key as the gateway reads it from `keys` (which
/// [`KeySet::add_policy_keys`] gave the gateways' readings): each rule on its
/// own, for Kong the plugins its configuration runs ([`super::kong`]), for
/// Traefik each rule once per router that chains it ([`super::traefik`]).
pub fn scenarios(
    base: &Scenario,
    gateways: &[Gateway],
    keys: &KeySet,
) -> Result<Vec<Scenario>, GatewayError> {
    gateways
        .iter()
        .map(|&gateway| {
            let mut scenario = each_rule(base, gateway, keys)?;
            if gateway.runs_one_plugin() {
                scenario.rules = super::kong::plugins(&scenario.rules);
            }
            if gateway == Gateway::Traefik {
                scenario.rules = super::traefik::routed(&scenario.rules);
            }
            Ok(scenario)
        })
        .collect()
}

/// The rules of `base` as `gateway` converts each of them, each on its own.
fn each_rule(base: &Scenario, gateway: Gateway, keys: &KeySet) -> Result<Scenario, GatewayError> {
    let rules = base
        .rules
        .iter()
        .map(|rule| {
            let mut planned = rule.clone();
            planned.limiter = gateway.limiter(&rule.spec)?;
            planned.key = key_ref_read_as(keys, rule.key, gateway.key_reading());
            planned.key_read = match planned.key {
                KeyRef::Extra(i) if planned.key != rule.key => Some(keys.extra[i].text.clone()),
                _ => None,
            };
            Ok(planned)
        })
        .collect::<Result<Vec<_>, GatewayError>>()?;
    Ok(Scenario {
        name: label(gateway),
        rules,
        reading: Some(gateway.key_reading()),
        names: gateway.name_reading(),
        per_instance: gateway.counts_per_instance(),
    })
}

/// The notes on how `gateways` take the policy's `rules` and `exemptions`:
/// how Kong's one plugin per request changes the rules, when one of them is
/// Kong's and it does, and each product whose configuration `rlctl export`
/// refuses to write, with why: its replay shows rules the product would not
/// take.
pub fn policy_notes(
    rules: &[CheckedRule],
    exemptions: &[Exemption],
    gateways: &[Gateway],
) -> Vec<String> {
    let plugins = (gateways.iter().any(|g| g.runs_one_plugin()))
        .then(|| super::kong::note(rules, true))
        .flatten();
    let refused = (Target::ALL.iter())
        .map(|t| t.exporter())
        .filter(|e| gateways.iter().any(|g| g.export_target() == Some(e.target())))
        .filter_map(|e| {
            let refused = (e.render_with(rules, exemptions, &ExportOptions::default())).err()?;
            Some(format!(
                "the {0} replay shows the rules as {0} would enforce them if it took them, but `rlctl export --target {0}` refuses to write them: {refused}",
                e.target()
            ))
        });
    plugins.into_iter().chain(refused).collect()
}

/// The note that the replays of `gateways` count each address where `key`
/// counts prefixes (`--cidr4`, `--cidr6`), when one of them does and a rule
/// counts by `key` (`rule_keys`: each rule's key): a rule's key cannot name
/// a prefix, so the configurations `rlctl export` writes key on addresses
/// (see [`crate::ingest::key::KeyReading`]).
pub fn prefix_note<'k>(
    key: &KeySpec,
    mut rule_keys: impl Iterator<Item = &'k str>,
    gateways: &[Gateway],
) -> Option<String> {
    if !rule_keys.any(|k| k == key.text) {
        return None;
    }
    let by_address: Vec<&str> = (gateways.iter())
        .filter(|g| g.key_reading().whole_addresses)
        .map(|g| g.name())
        .collect();
    let flags: Vec<String> = [("--cidr4", key.cidr4), ("--cidr6", key.cidr6)]
        .into_iter()
        .filter_map(|(flag, bits)| bits.map(|b| format!("{flag} {b}")))
        .collect();
    (key.has_prefixes() && !by_address.is_empty()).then(|| {
        format!(
            "the replays of {} count each address, not the prefixes of {}: a rule's key cannot name a prefix, and these gateways key on addresses",
            by_address.join(", "),
            flags.join(", ")
        )
    })
}

/// Replays `base` (the policy's own scenario) over `table` as the policy and
/// as `gateway` enforces it, and lists where they differ (the reason from a
/// third replay of the gateway with rejected requests ignored). The events
/// `exempt` marks (see [`ExemptMasks`]: the policy's, and the gateway's as it
/// reads keys) are admitted and never counted.
pub fn check(
    table: &EventTable,
    base: &Scenario,
    gateway: Gateway,
    keys: &KeySet,
    exempt: ExemptMasks,
) -> Result<ExportCheck, CheckError> {
    // Whether the gateway's exemptions compare clients, and pick methods
    // and paths, as the policy's do.
    let (reading, names) = (gateway.key_reading(), gateway.name_reading());
    let (exempt_keyed_alike, exempt_named_alike) = exempt.read_alike(reading, names);
    let mut runner =
        ScenarioRunner::new(table, &table.ts, Deployment::single(), 1).with_exemptions(exempt);
    let policy = runner.run(base)?;
    let as_gateway = scenarios(base, &[gateway], keys)?.remove(0);
    let counted = runner.run(&as_gateway)?;
    // For Kong and Traefik, their rules each on their own: where they agree
    // with the policy, the plugin Kong runs, or Traefik's buckets per router,
    // is what differs. Then the gateway's
    // arithmetic on the policy's keys (and exemptions), then with rejected
    // requests ignored as well: what tells the other reasons apart.
    let each = each_rule(base, gateway, keys)?;
    let each_allowed = match regrouping(gateway) {
        Some(_) => Some(runner.run(&each)?.allowed),
        None => None,
    };
    let mut on_policy_keys = each.clone();
    for (rule, own) in on_policy_keys.rules.iter_mut().zip(&base.rules) {
        (rule.key, rule.key_read) = (own.key, None);
    }
    (on_policy_keys.reading, on_policy_keys.names) = (None, NameReading::default());
    let keyed_alike = exempt_keyed_alike
        && (on_policy_keys.rules.iter())
            .zip(&each.rules)
            .all(|(a, b)| a.key == b.key);
    let named_alike = exempt_named_alike && names_read_alike(table, base, names);
    let read_otherwise = match (keyed_alike, named_alike) {
        (false, true) => Reason::ClientKey,
        (true, false) => Reason::MethodOrPath,
        _ => Reason::KeyMethodOrPath,
    };
    let same_keys = match keyed_alike && named_alike {
        true => None,
        false => Some(runner.run(&on_policy_keys)?.allowed),
    };
    let mut uncounted = on_policy_keys;
    for rule in &mut uncounted.rules {
        if let Limiter::Gateway(model) = &rule.limiter {
            rule.limiter = Limiter::Gateway(model.ignoring_rejections());
        }
    }
    let uncounted = runner.run(&uncounted)?;
    let rejected = |allowed: &[bool]| allowed.iter().filter(|&&a| !a).count();
    let replays = GatewayReplays {
        enforced: &counted.allowed,
        each_rule: each_allowed.as_deref(),
        on_policy_keys: same_keys.as_deref(),
        read_otherwise,
        uncounted: &uncounted.allowed,
    };
    let shared = |rules: &[super::plan::PlannedRule]| match rules {
        [first, rest @ ..] if rest.iter().all(|r| r.key == first.key) => Some(first.key),
        _ => None,
    };
    let own = shared(&base.rules).unwrap_or(KeyRef::Primary);
    let read = shared(&each.rules).filter(|&k| !keyed_alike && k != own);
    Ok(ExportCheck {
        keys: (own, read),
        gateway,
        requests: policy.allowed.len(),
        policy_rejected: rejected(&policy.allowed),
        gateway_rejected: rejected(&counted.allowed),
        differences: differences(gateway, &policy.allowed, replays),
    })
}

/// Whether the rules of `base` pick the same methods and paths of `table`
/// read `names`' way as the policy reads them.
fn names_read_alike(table: &EventTable, base: &Scenario, names: NameReading) -> bool {
    let table_names = names_of(table);
    (base.rules.iter()).all(|r| {
        let wanted = (r.method.as_deref(), r.route.as_ref());
        picked_alike(table_names, wanted, names)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::key::{KeySet, KeySpec};
    use crate::policy::Policy;
    use crate::scenario::{AlgoChoice, AlgoOptions, plan};
    use crate::simulate::Limiter;

    #[test]
    fn each_gateway_is_a_scenario_and_models_say_so() {
        let rules = Policy::parse(
            "[[rule]]\nname='g'\nlimit='40/1m'\nburst=7\n[[rule]]\nname='s'\nroute='^/s'\nlimit='2/1s'\nalgorithm='fixed-window'",
            "p",
        )
        .unwrap();
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let options = AlgoOptions {
            algo: AlgoChoice::Default,
            burst: None,
            delay: None,
        };
        let base = &plan::policy(&options, &keys, &rules).unwrap().scenarios[0];
        let all = scenarios(base, &Gateway::ALL, &keys).unwrap();
        assert_eq!(all.len(), Gateway::ALL.len());
        assert_eq!(all[1].name, "haproxy");
        let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"aws-waf (model)"));
        assert!(names.contains(&"cloudflare (model)"));
        for s in all.iter().filter(|s| s.name != "traefik") {
            assert_eq!(s.rules.len(), 2);
            assert!(matches!(s.rules[0].limiter, Limiter::Gateway(_)));
            assert_eq!(s.rules[1].route.as_ref().unwrap().as_str(), "^/s");
        }
        // Traefik: `g` once per router that chains it (its router for `^/s`
        // and `rl-all`), each with its own buckets; `rl-all` takes what the
        // longer rule of `rl-s` does not.
        let traefik = all.iter().find(|s| s.name == "traefik").unwrap();
        let routed: Vec<(&str, Option<&str>, usize)> = (traefik.rules.iter())
            .map(|r| {
                let route = r.route.as_ref().map(|r| r.as_str());
                (r.name.as_str(), route, r.unless.len())
            })
            .collect();
        assert_eq!(
            routed,
            [
                ("g @ rl-s", Some("^/s"), 0),
                ("s", Some("^/s"), 0),
                ("g @ rl-all", None, 1)
            ]
        );
    }

    #[test]
    fn an_unknown_choice_lists_all_beside_the_names() {
        let gateway = "nope".parse::<GatewayChoice>().unwrap_err().to_string();
        assert!(gateway.contains("expected all, nginx, "), "{gateway}");
        let algo = "nope".parse::<AlgoChoice>().unwrap_err().to_string();
        assert!(algo.contains("expected all, fixed-window, "), "{algo}");
        assert_eq!("all".parse::<GatewayChoice>().unwrap(), GatewayChoice::All);
        assert_eq!(
            "kong".parse::<GatewayChoice>().unwrap(),
            GatewayChoice::One(Gateway::Kong)
        );
    }
}
