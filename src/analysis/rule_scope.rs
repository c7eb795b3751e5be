//! The requests an endpoint's rule counts. A rule matches paths by its route
//! (a template's regex), and a gateway checks every rule that matches, so the
//! rule of `GET /p/:id` also counts `GET /p/about`, which discovery kept by
//! name because it is frequent. Its limit must rest on all of those requests:
//! from its own endpoint's alone, it rejects the normal clients of the pages
//! beside it. Here each endpoint with a recommendation whose rule also matches
//! other reported endpoints gets a second recommendation, worked out the same
//! way over the requests of all of them (the reported endpoints only: another
//! one's requests are fewer than the last reported endpoint's). Endpoints are
//! matched by name, a method and a path template, since an analysis keeps no
//! paths: not one a `--route` rule named (`about` for `^/p/about$`), nor one
//! only some of whose paths the route matches (`/a/y/:name` under a rule of
//! `/a/:id/x`, by a routes file's precedence).

use regex::Regex;

use super::policy::{RuleRoute, rule_route};
use super::{AnalysisSettings, EndpointRecommendation};
use crate::discover;
use crate::events::{EventTable, Id, Interner};
use crate::policy;
use crate::recommend::{Recommendation, recommend_scopes};
use crate::stats::{self, Analysis};

/// What an endpoint's rule counts beyond its endpoint, and the limit for all of it.
#[derive(Debug, Clone)]
pub struct RuleScope {
    /// The other reported endpoints its route matches, with their requests.
    pub others: Vec<(String, u64)>,
    /// The recommendation over the requests of its endpoint and of those.
    pub recommendation: Recommendation,
}

/// Gives each recommendation whose rule also matches other reported endpoints
/// its [`RuleScope`]. The table's client names are lent to the tables of
/// those requests and given back.
pub fn widen(
    table: &mut EventTable,
    analysis: &Analysis,
    settings: &AnalysisSettings,
    recommendations: &mut [EndpointRecommendation],
) {
    let reported = &analysis.endpoints[..settings.endpoints.min(analysis.endpoints.len())];
    for rec in recommendations.iter_mut() {
        // No rule: a static file, or no route (see [`rule_route`]).
        if policy::is_static_asset(&rec.endpoint) {
            continue;
        }
        let Some(RuleRoute { method, regex, .. }) = rule_route(&rec.endpoint, settings) else {
            continue;
        };
        let Ok(route) = Regex::new(&regex) else {
            continue;
        };
        let matched = |name: &str| {
            discover::method_and_path(name).is_some_and(|(m, path)| {
                method.as_deref().is_none_or(|wanted| wanted == m) && route.is_match(path)
            })
        };
        let others: Vec<(String, u64)> = (reported.iter())
            .filter(|e| e.endpoint != rec.endpoint && matched(&e.endpoint))
            .map(|e| (e.endpoint.clone(), e.stats.requests))
            .collect();
        if others.is_empty() {
            continue;
        }
        let names = std::iter::once(rec.endpoint.as_str()).chain(others.iter().map(|o| &*o.0));
        let ids: Vec<Id> = names.filter_map(|n| table.endpoints.get(n)).collect();
        if let Some(recommendation) = recommend_over(table, &ids, settings) {
            rec.rule_scope = Some(RuleScope {
                others,
                recommendation,
            });
        }
    }
}

/// The recommendation for all traffic of a table of the requests to
/// `endpoints` alone, as it is for a whole log.
fn recommend_over(
    table: &mut EventTable,
    endpoints: &[Id],
    settings: &AnalysisSettings,
) -> Option<Recommendation> {
    let mut scope = requests_to(table, endpoints);
    let analysis = stats::analyze_endpoints(&scope, &settings.stats, 0);
    let (recommendation, _) = recommend_scopes(
        &scope,
        &analysis,
        settings.recommend.baseline,
        settings.multiplier,
        0,
    );
    table.clients = std::mem::take(&mut scope.clients);
    recommendation
}

/// The requests of `table` to `endpoints`, in order, as a table of one
/// endpoint; it holds the table's client names until they are given back.
fn requests_to(table: &mut EventTable, endpoints: &[Id]) -> EventTable {
    let mut wanted = vec![false; table.endpoints.len()];
    for &e in endpoints {
        wanted[e as usize] = true;
    }
    let rows: Vec<usize> = (0..table.len())
        .filter(|&r| wanted[table.endpoint[r] as usize])
        .collect();
    fn pick<T: Copy>(column: &[T], rows: &[usize]) -> Vec<T> {
        rows.iter().map(|&r| column[r]).collect()
    }
    let mut names = Interner::default();
    names.intern("rule");
    EventTable {
        ts: pick(&table.ts, &rows),
        client: pick(&table.client, &rows),
        endpoint: vec![0; rows.len()],
        path: Vec::new(),
        method: pick(&table.method, &rows),
        status: pick(&table.status, &rows),
        logged: pick(&table.logged, &rows),
        extra_keys: Vec::new(),
        clients: std::mem::take(&mut table.clients),
        endpoints: names,
        paths: Interner::default(),
        methods: table.methods.clone(),
    }
}
