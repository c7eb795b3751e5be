//! Kong's rules as its exported configuration runs them: one plugin per
//! request ([`crate::export::kong_plan`]). A policy's rules, each converted
//! to Kong's windows, become the plan's plugins: the global one for the
//! requests no rule's route takes, and one per rule with a route or method
//! for the requests its route takes (its own method and route, less the
//! routes Kong takes before it), each with the smallest limits of the rules
//! merged into it. `rlctl simulate`, `report` and `export --check` replay
//! these ([`plugins`]), and so does `rlctl watch` ([`policy_runs`]).

use regex::Regex;

use super::plan::PlannedRule;
use crate::export::kong_plan::{Plan, Plugin, RuleSide};
use crate::policy::CheckedRule;
use crate::simulate::Limiter;
use crate::simulate::gateway::{Gateway, Model};

/// A method and a route (`None`: every method, every path).
pub type MethodRoute = (Option<String>, Option<Regex>);

/// One plugin Kong runs, for rules with these `sides` and (method, route):
/// the rules it merges, and the routes Kong takes before its own.
#[derive(Debug, Clone)]
pub struct PluginRun {
    pub merged: Vec<usize>,
    pub unless: Vec<MethodRoute>,
    /// Where the run's requests are picked by another rule's method and
    /// route than its own (Traefik's routers, [`super::traefik`]): that
    /// rule, and the router's name when the rule runs on several routers.
    pub router: Option<(usize, Option<String>)>,
}

impl PluginRun {
    /// The rule whose method and route pick the run's requests.
    pub fn picked_by(&self) -> usize {
        self.router.as_ref().map_or(self.merged[0], |(i, _)| *i)
    }

    /// The run's name, from the names of the rules: theirs, joined with
    /// ` + ` (Kong's merged plugins), and ` @ ` its router when the rule runs
    /// on several.
    pub fn name<'a>(&self, names: impl Fn(usize) -> &'a str) -> String {
        let name = plugin_name(names, &self.merged);
        match &self.router {
            Some((_, Some(router))) => format!("{name} @ {router}"),
            _ => name,
        }
    }
}

/// The plugins Kong runs for rules with these `sides` and (method, route)
/// `picks` (one per rule), in the policy's order of their first rule.
fn plugins_of<K: PartialEq>(sides: &[RuleSide<K>], picks: &[MethodRoute]) -> Vec<PluginRun> {
    let plan = Plan::of(sides);
    let route = |p: &Plugin| picks[p.route_of.expect("a route's plugin")].clone();
    let mut runs: Vec<(usize, PluginRun)> = (plan.routes.iter().enumerate())
        .map(|(rank, p)| (p, plan.routes[..rank].iter().map(route).collect()))
        .chain((plan.global.iter()).map(|p| (p, plan.routes.iter().map(route).collect())))
        .map(|(p, unless)| {
            let first = p.route_of.unwrap_or(p.merged[0]);
            let merged = p.merged.clone();
            (
                first,
                PluginRun {
                    merged,
                    unless,
                    router: None,
                },
            )
        })
        .collect();
    runs.sort_by_key(|(first, _)| *first);
    runs.into_iter().map(|(_, run)| run).collect()
}

/// The model of a plugin merging rules with these `limiters` (each Kong's):
/// the smallest limits of them all; `None` when one is not Kong's.
pub fn merged_limiter(limiters: &[&Limiter]) -> Option<Limiter> {
    let models: Vec<&Model> = (limiters.iter())
        .map(|l| match l {
            Limiter::Gateway(model) => Some(model),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Model::kong_merged(&models).map(Limiter::Gateway)
}

/// The name of a plugin merging the rules named `names` at `merged`.
pub fn plugin_name<'a>(names: impl Fn(usize) -> &'a str, merged: &[usize]) -> String {
    let names: Vec<&str> = merged.iter().map(|&j| names(j)).collect();
    names.join(" + ")
}

/// `rules` (a policy's, each converted to a Kong model) as the plugins Kong
/// runs.
pub fn plugins(rules: &[PlannedRule]) -> Vec<PlannedRule> {
    let sides: Vec<RuleSide<_>> = (rules.iter())
        .map(|r| RuleSide {
            key: r.key,
            method: r.method.clone(),
            route: r.route.as_ref().map(|r| r.as_str().to_string()),
        })
        .collect();
    let picks: Vec<MethodRoute> = (rules.iter())
        .map(|r| (r.method.clone(), r.route.clone()))
        .collect();
    (plugins_of(&sides, &picks).into_iter())
        .map(|run| {
            let first = &rules[run.merged[0]];
            let limiters: Vec<&Limiter> = run.merged.iter().map(|&j| &rules[j].limiter).collect();
            PlannedRule {
                name: plugin_name(|j| &rules[j].name, &run.merged),
                limiter: merged_limiter(&limiters).unwrap_or_else(|| first.limiter.clone()),
                unless: run.unless,
                ..first.clone()
            }
        })
        .collect()
}

/// The plugins `gateway` runs for a policy's `rules`: Kong's plan, each
/// rule once per Traefik router that chains it, or each rule on its own for
/// every other product (and without a gateway).
pub fn policy_runs(rules: &[CheckedRule], gateway: Option<Gateway>) -> Vec<PluginRun> {
    match gateway {
        Some(g) if g.runs_one_plugin() => {
            let picks: Vec<MethodRoute> = (rules.iter())
                .map(|r| (r.method.clone(), r.route.clone()))
                .collect();
            plugins_of(&checked_sides(rules), &picks)
        }
        Some(Gateway::Traefik) => {
            let picks: Vec<MethodRoute> = (rules.iter())
                .map(|r| (r.method.clone(), r.route.clone()))
                .collect();
            let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            super::traefik::runs(&picks, &names)
        }
        _ => (0..rules.len())
            .map(|i| PluginRun {
                merged: vec![i],
                unless: Vec::new(),
                router: None,
            })
            .collect(),
    }
}

/// What the plan needs of a policy's rules.
fn checked_sides(rules: &[CheckedRule]) -> Vec<RuleSide<&str>> {
    (rules.iter())
        .map(|r| RuleSide {
            key: r.key.text.as_str(),
            method: r.method.clone(),
            route: r.route.as_ref().map(|r| r.as_str().to_string()),
        })
        .collect()
}

/// What Kong's plan does to a policy's `rules`, when it does more than give
/// each its own plugin: the rules whose routes it never takes, the rules it
/// merges (with `merges`), and those it leaves out where they apply.
pub fn note(rules: &[CheckedRule], merges: bool) -> Option<String> {
    let sides = checked_sides(rules);
    let plan = Plan::of(&sides);
    let names = |indices: &[usize], by: &str| {
        let names: Vec<&str> = indices.iter().map(|&j| rules[j].name.as_str()).collect();
        names.join(by)
    };
    let plugins = || plan.global.iter().chain(&plan.routes);
    let merged: Vec<String> = plugins()
        .filter(|p| p.merged.len() > 1)
        .map(|p| format!("`{}`", names(&p.merged, " + ")))
        .collect();
    let left_out: Vec<String> = plugins()
        .filter_map(|p| {
            let out = plan.left_out(p, &sides);
            let r#where = match p.route_of {
                None => "requests no rule's route takes".to_string(),
                Some(i) => format!("the route of `{}`", rules[i].name),
            };
            (!out.is_empty()).then(|| format!("`{}` on {where}", names(&out, "`, `")))
        })
        .collect();
    let hidden: Vec<String> = (plan.routes.iter())
        .filter_map(|p| {
            let i = p.route_of?;
            let j = plan.taken_first(&sides, i)?;
            Some(format!("`{}` (by `{}`)", rules[i].name, rules[j].name))
        })
        .collect();
    let mut parts = Vec::new();
    if !hidden.is_empty() {
        parts.push(format!(
            "routes Kong never takes, an earlier route taking every request they match, so not limiting: {}",
            hidden.join(", ")
        ));
    }
    if merges && !merged.is_empty() {
        parts.push(format!(
            "rules merged into one plugin (the smallest limits of them): {}",
            merged.join(", ")
        ));
    }
    if !left_out.is_empty() {
        parts.push(format!(
            "rules keyed otherwise than the plugin Kong runs there, so not limiting: {}",
            left_out.join("; ")
        ));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "kong runs one rate-limiting plugin per request, as exported: {}",
            parts.join("; ")
        )
    })
}
