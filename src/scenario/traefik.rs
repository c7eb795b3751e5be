//! Traefik's rules as its exported configuration runs them: Traefik picks one
//! router per request (the highest priority that matches; by default the
//! length of the router's rule, `GetRulePriority` in pkg/muxer/http/mux.go),
//! and builds each router's middlewares on their own (`buildHTTPHandler` in
//! pkg/server/router/router.go calls each middleware's constructor, and
//! `ratelimiter.New` in pkg/middlewares/ratelimiter/rate_limiter.go makes a
//! new in-memory bucket map), so a rule chained by several routers keeps one
//! bucket per router and client. The routers are
//! [`crate::export::traefik::chains`], the ones `rlctl export --target
//! traefik` writes: each (router, rule) pair is replayed as a rule of its own,
//! on the requests that router takes. `rlctl simulate`, `report` and `export
//! --check` replay these ([`routed`]), and so does `rlctl watch` (through
//! [`super::kong::policy_runs`]).

use super::kong::{MethodRoute, PluginRun};
use super::plan::PlannedRule;
use crate::export::traefik::{Chain, chains, middleware_names_of, router_names};

/// The runs of rules with these (method, route) `picks` and `names`: per
/// router, in the order written, one per middleware of its chain, each on
/// the router's requests less those of the routers Traefik tries first (by
/// priority, highest first; equal priorities in the order written, Traefik's
/// own order between them being unspecified: `sort.Sort` of its routes).
pub fn runs(picks: &[MethodRoute], names: &[&str]) -> Vec<PluginRun> {
    let scopes: Vec<(Option<String>, Option<String>)> = (picks.iter())
        .map(|(m, r)| (m.clone(), r.as_ref().map(|r| r.as_str().to_string())))
        .collect();
    let chains = chains(&scopes);
    let mut ranked: Vec<usize> = (0..chains.len()).collect();
    ranked.sort_by_key(|&i| std::cmp::Reverse(chains[i].priority()));
    let routers = router_names(&chains, &middleware_names_of(names.iter().copied()));
    let scope = |c: &Chain| match c.router_of {
        Some(i) => picks[i].clone(),
        None => (None, None),
    };
    let chained = |j: usize| chains.iter().filter(|c| c.middlewares.contains(&j)).count();
    let mut runs = Vec::new();
    for (i, chain) in chains.iter().enumerate() {
        let rank = ranked.iter().position(|&k| k == i).expect("ranked");
        let unless: Vec<MethodRoute> = ranked[..rank].iter().map(|&k| scope(&chains[k])).collect();
        for &j in &chain.middlewares {
            let router_of = chain.router_of.unwrap_or(j);
            let label = (chained(j) > 1).then(|| routers[i].clone());
            runs.push(PluginRun {
                merged: vec![j],
                unless: unless.clone(),
                router: Some((router_of, label)),
            });
        }
    }
    runs
}

/// `rules` (a policy's, each converted to a Traefik model) as the routers
/// of the exported configuration run them.
pub fn routed(rules: &[PlannedRule]) -> Vec<PlannedRule> {
    let picks: Vec<MethodRoute> = (rules.iter())
        .map(|r| (r.method.clone(), r.route.clone()))
        .collect();
    let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
    (runs(&picks, &names).into_iter())
        .map(|run| {
            let picked = &rules[run.picked_by()];
            PlannedRule {
                name: run.name(|j| names[j]),
                method: picked.method.clone(),
                route: picked.route.clone(),
                unless: run.unless,
                ..rules[run.merged[0]].clone()
            }
        })
        .collect()
}
