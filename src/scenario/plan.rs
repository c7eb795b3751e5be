//! From settings to scenarios: each scenario is a set of rules replayed together
//! (one rule for `--limit`, every rule of a policy), and `--algo all` makes one
//! scenario per algorithm.

use regex::Regex;

use crate::ingest::key::{KeyReading, KeySet};
use crate::policy::CheckedRule;
use crate::simulate::gateway::NameReading;
use crate::simulate::{AlgorithmKind, AlgorithmSpec, Delay, Limiter, SpecError};
use crate::units::Limit;

/// Which key column a rule counts by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRef {
    /// The `--key` of the run (the event table's clients).
    Primary,
    /// An extra key column of the event table.
    Extra(usize),
}

/// One rule ready to replay.
#[derive(Debug, Clone)]
pub struct PlannedRule {
    pub name: String,
    pub spec: AlgorithmSpec,
    pub limiter: Limiter,
    /// The key as written (`ip`, `user`...).
    pub key_text: String,
    pub key: KeyRef,
    /// How a gateway's replay reads the key, where that differs from the
    /// policy (`ip (each address)`, `xff (token as written)`).
    pub key_read: Option<String>,
    pub method: Option<String>,
    pub route: Option<Regex>,
    /// Where another (method, route) picks a request, the rule does not
    /// apply to it, though its own method and route pick it: the routes a
    /// product takes before the rule's (Kong's, see
    /// [`crate::export::kong_plan`]). Empty for a policy's rules.
    pub unless: Vec<(Option<String>, Option<Regex>)>,
}

/// Rules replayed together.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The algorithm's name, or `policy` for a policy's own algorithms.
    pub name: String,
    pub rules: Vec<PlannedRule>,
    /// How the product it stands for reads keys, for its exemptions (`None`:
    /// as the policy; the rules' keys are already read so).
    pub reading: Option<KeyReading>,
    /// How it reads the method and path its rules' methods and routes match
    /// (the policy's way unless a gateway reads them otherwise).
    pub names: NameReading,
    /// Whether each limiter instance counts on its own (`--instances`
    /// splits the traffic); false for a product whose counters are shared
    /// (one Redis, or the vendor's service), which one instance stands for.
    pub per_instance: bool,
}

/// Builds the spec of one rule: `kind` with the rule's limit and burst, `--burst`
/// and `--delay` applied where the algorithm takes them.
fn spec_for(
    kind: AlgorithmKind,
    limit: Limit,
    burst: Option<u64>,
    delay: Option<Delay>,
    strict: bool,
) -> AlgorithmSpec {
    let takes_burst = strict || kind.has_burst();
    let takes_delay = strict || kind == AlgorithmKind::LeakyBucket;
    AlgorithmSpec {
        burst: burst.filter(|_| takes_burst),
        delay: delay.filter(|_| takes_delay),
        ..AlgorithmSpec::new(kind, limit)
    }
}

/// Which algorithms to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlgoChoice {
    /// Each rule's own algorithm (policies), or all six (a single `--limit`).
    Default,
    /// All six side by side.
    All,
    /// This one (for a policy: every rule runs it).
    One(AlgorithmKind),
}

impl std::str::FromStr for AlgoChoice {
    type Err = SpecError;

    /// `all`, or the name of one algorithm.
    fn from_str(text: &str) -> Result<Self, SpecError> {
        match text {
            "all" => Ok(AlgoChoice::All),
            name => (name.parse().map(AlgoChoice::One))
                .map_err(|_| SpecError::UnknownAlgoChoice(name.to_string())),
        }
    }
}

fn kinds(algo: AlgoChoice, default: &[AlgorithmKind]) -> Vec<AlgorithmKind> {
    match algo {
        AlgoChoice::All => AlgorithmKind::ALL.to_vec(),
        AlgoChoice::One(kind) => vec![kind],
        AlgoChoice::Default => default.to_vec(),
    }
}

/// What the command line says about algorithms, whatever the source of the limits.
#[derive(Debug, Clone, Copy)]
pub struct AlgoOptions {
    pub algo: AlgoChoice,
    /// `--burst`, overriding each rule's (a single limit, the recommended
    /// policy; refused with a policy file).
    pub burst: Option<u64>,
    /// `--delay N` / `--nodelay`.
    pub delay: Option<Delay>,
}

/// The scenarios of a run, and the algorithms a side-by-side run left out.
#[derive(Debug, Clone)]
pub struct Planned {
    pub scenarios: Vec<Scenario>,
    /// Each algorithm left out, as `name: why`: with several algorithms side
    /// by side, one that cannot take a limit (nginx's leaky bucket below
    /// 1r/m) leaves the comparison rather than failing the whole run.
    pub left_out: Vec<String>,
}

/// Builds a scenario for each of `kinds` with `build`, `name` naming them.
/// With several, one whose rate nginx cannot express is left out, saying
/// why; with one, that is the error.
fn plan_each<K: Copy>(
    kinds: Vec<K>,
    name: impl Fn(K) -> &'static str,
    mut build: impl FnMut(K) -> Result<Scenario, SpecError>,
) -> Result<Planned, SpecError> {
    let side_by_side = kinds.len() > 1;
    let mut planned = Planned {
        scenarios: Vec::new(),
        left_out: Vec::new(),
    };
    for kind in kinds {
        match build(kind) {
            Ok(scenario) => planned.scenarios.push(scenario),
            Err(e @ SpecError::RateTooLow { .. }) if side_by_side => {
                planned.left_out.push(format!("{}: {e}", name(kind)));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(planned)
}

/// Scenarios for a single `--limit` keyed by `key_text` (the primary key): one per
/// algorithm asked for (all six by default). With one algorithm named, a burst or
/// delay it cannot take is an error; with several, they apply to the algorithms
/// that take them, and one that cannot take the limit is left out.
pub fn single(settings: &AlgoOptions, key_text: &str, limit: Limit) -> Result<Planned, SpecError> {
    let chosen = kinds(settings.algo, &AlgorithmKind::ALL);
    let strict = chosen.len() == 1;
    plan_each(chosen, AlgorithmKind::name, |kind| {
        let spec = spec_for(kind, limit, settings.burst, settings.delay, strict);
        let rule = PlannedRule {
            name: "limit".into(),
            limiter: spec.limiter()?,
            spec,
            key_text: key_text.to_string(),
            key: KeyRef::Primary,
            key_read: None,
            method: None,
            route: None,
            unless: Vec::new(),
        };
        Ok(Scenario {
            name: kind.name().into(),
            rules: vec![rule],
            reading: None,
            names: NameReading::default(),
            per_instance: true,
        })
    })
}

/// Scenarios for policy rules: the rules' own algorithms by default, or every rule
/// with each algorithm asked for (one that cannot take a rule's limit left out
/// when there are several).
pub fn policy(
    settings: &AlgoOptions,
    keys: &KeySet,
    rules: &[CheckedRule],
) -> Result<Planned, SpecError> {
    let overrides: Vec<Option<AlgorithmKind>> = match settings.algo {
        AlgoChoice::Default => vec![None],
        other => kinds(other, &[]).into_iter().map(Some).collect(),
    };
    let name = |kind: Option<AlgorithmKind>| kind.map_or("policy", AlgorithmKind::name);
    plan_each(overrides, name, |kind| {
        let planned = rules
            .iter()
            .map(|rule| {
                let kind = kind.unwrap_or(rule.spec.kind);
                let burst = settings.burst.or(rule.spec.burst);
                let spec = spec_for(kind, rule.spec.limit, burst, settings.delay, false);
                Ok(PlannedRule {
                    name: rule.name.clone(),
                    limiter: spec.limiter()?,
                    spec,
                    key_text: rule.key.text.clone(),
                    key: key_ref(keys, &rule.key.text),
                    key_read: None,
                    method: rule.method.clone(),
                    route: rule.route.clone(),
                    unless: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, SpecError>>()?;
        Ok(Scenario {
            name: name(kind).into(),
            rules: planned,
            reading: None,
            names: NameReading::default(),
            per_instance: true,
        })
    })
}

/// The key column of the key `key` as a product reading requests
/// `reading`'s way derives it: its own column when that reading cannot
/// differ, else the one [`KeySet::add_policy_keys`] added for it.
pub(crate) fn key_ref_read_as(keys: &KeySet, key: KeyRef, reading: KeyReading) -> KeyRef {
    let spec = match key {
        KeyRef::Primary => &keys.primary,
        KeyRef::Extra(i) => &keys.extra[i],
    };
    let Some(read) = spec.read_as(reading) else {
        return key;
    };
    let column = keys.extra.iter().position(|k| k.text == read.text);
    KeyRef::Extra(column.expect("the key as the gateway reads it was ingested"))
}

/// The key column a key text names among `keys`.
pub(crate) fn key_ref(keys: &KeySet, text: &str) -> KeyRef {
    if keys.primary.text == text {
        return KeyRef::Primary;
    }
    keys.extra
        .iter()
        .position(|k| k.text == text)
        .map_or(KeyRef::Primary, KeyRef::Extra)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::key::KeySpec;
    use crate::policy::Policy;

    fn options(algo: AlgoChoice) -> AlgoOptions {
        AlgoOptions {
            algo,
            burst: None,
            delay: None,
        }
    }

    fn names(planned: &Planned) -> Vec<&str> {
        planned.scenarios.iter().map(|s| s.name.as_str()).collect()
    }

    #[test]
    fn a_rate_nginx_cannot_take_leaves_only_the_leaky_bucket_out_of_several() {
        // 50/1d is shown as 50/24h.
        for (algo, limit, shown) in [
            (AlgoChoice::Default, "3/1h", "3/1h"),
            (AlgoChoice::All, "50/1d", "50/24h"),
        ] {
            let planned = single(&options(algo), "ip", limit.parse().unwrap()).unwrap();
            assert_eq!(
                names(&planned),
                [
                    "fixed-window",
                    "sliding-log",
                    "sliding-counter",
                    "token-bucket",
                    "gcra"
                ]
            );
            assert_eq!(planned.left_out.len(), 1);
            assert!(
                planned.left_out[0].starts_with(&format!(
                    "leaky-bucket: rate {shown} is below nginx's resolution"
                )),
                "{:?}",
                planned.left_out
            );
        }
        let alone = options(AlgoChoice::One(AlgorithmKind::LeakyBucket));
        let refused = single(&alone, "ip", "3/1h".parse().unwrap()).unwrap_err();
        assert!(matches!(refused, SpecError::RateTooLow { .. }), "{refused}");
        let fast = single(&options(AlgoChoice::All), "ip", "1/1m".parse().unwrap()).unwrap();
        assert_eq!((fast.scenarios.len(), fast.left_out.len()), (6, 0));
    }

    #[test]
    fn a_policy_under_all_algorithms_leaves_the_leaky_bucket_out() {
        let rules = Policy::parse(
            "[[rule]]\nname='reset'\nlimit='3/1h'\nalgorithm='fixed-window'",
            "p",
        )
        .unwrap();
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let all = policy(&options(AlgoChoice::All), &keys, &rules).unwrap();
        assert_eq!(all.scenarios.len(), 5);
        assert!(all.left_out[0].starts_with("leaky-bucket: rate 3/1h"));
        let own = policy(&options(AlgoChoice::Default), &keys, &rules).unwrap();
        assert_eq!((names(&own), own.left_out.len()), (vec!["policy"], 0));
        let alone = options(AlgoChoice::One(AlgorithmKind::LeakyBucket));
        assert!(policy(&alone, &keys, &rules).is_err());
    }
}
