//! The requests an endpoint's rule counts. A rule matches paths by its route
//! (a template's regex), and a gateway checks every rule that matches, so the
//! rule of `GET /p/:id` also counts `GET /p/about`, which discovery kept by
//! name because it is frequent. Its limit must rest on all of those requests:
//! from its own endpoint's alone, it rejects the normal clients of the pages
//! beside it. Here each endpoint with a recommendation whose rule also matches
//! other reported endpoints gets a second recommendation, worked out the same
//! way over the requests of all of them (the reported endpoints only: another
//! one's requests are fewer than the last reported endpoint's). Endpoints are
//! matched by name, a method and a path template, but for those a `--route`
//! rule named (`about` for `^/p/about$`), whose requests are matched path by
//! path (an analysis with `--route` rules keeps those requests' paths). Not
//! counted in: an endpoint only some of whose paths the route matches by a
//! routes file's precedence (`/a/y/:name` under a rule of `/a/:id/x`).

use rayon::prelude::*;
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
    let rules: Vec<Option<(Option<String>, Regex)>> = (recommendations.iter())
        .map(|rec| {
            // No rule: a static file, or no route (see [`rule_route`]).
            if policy::is_static_asset(&rec.endpoint) {
                return None;
            }
            let RuleRoute { method, regex, .. } = rule_route(&rec.endpoint, settings)?;
            Some((method, Regex::new(&regex).ok()?))
        })
        .collect();
    let routed = RoutedRequests::of(table, settings, reported, &rules);
    for (r, rec) in recommendations.iter_mut().enumerate() {
        let Some((method, route)) = &rules[r] else {
            continue;
        };
        let matched = |name: &str| {
            discover::method_and_path(name).is_some_and(|(m, path)| {
                method.as_deref().is_none_or(|wanted| wanted == m) && route.is_match(path)
            })
        };
        let by_name: Vec<&stats::EndpointStats> = (reported.iter())
            .filter(|e| e.endpoint != rec.endpoint && !routed.names(table, &e.endpoint))
            .filter(|e| matched(&e.endpoint))
            .collect();
        let mut others: Vec<(String, u64)> = (by_name.iter())
            .map(|e| (e.endpoint.clone(), e.stats.requests))
            .collect();
        let own = table.endpoints.get(&rec.endpoint);
        let routed_rows = routed.matched(table, r, method.as_deref(), own);
        for (endpoint, matched_rows) in &routed_rows {
            others.push((
                table.endpoints.name(*endpoint).to_string(),
                matched_rows.len() as u64,
            ));
        }
        if others.is_empty() {
            continue;
        }
        let names =
            std::iter::once(rec.endpoint.as_str()).chain(by_name.iter().map(|e| &*e.endpoint));
        let ids: Vec<Id> = names.filter_map(|n| table.endpoints.get(n)).collect();
        let mut wanted = vec![false; table.endpoints.len()];
        for &e in &ids {
            wanted[e as usize] = true;
        }
        // The rows of the endpoints named, picked on every core (in order).
        let mut rows: Vec<usize> = (0..table.len())
            .into_par_iter()
            .filter(|&row| wanted[table.endpoint[row] as usize])
            .collect();
        rows.extend(routed_rows.into_iter().flat_map(|(_, rows)| rows));
        rows.par_sort_unstable();
        if let Some(recommendation) = recommend_over(table, &rows, settings) {
            rec.rule_scope = Some(RuleScope {
                others,
                recommendation,
            });
        }
    }
}

/// The requests to reported endpoints a `--route` rule named, each path tested once
/// against every endpoint rule's route (a set of regexes): a name says
/// nothing of the paths such an endpoint holds.
struct RoutedRequests {
    /// Per routed endpoint, its rows.
    rows: Vec<(Id, Vec<usize>)>,
    /// Per path id of those rows, the rules (by index) whose route matches it.
    matches: std::collections::HashMap<Id, Vec<usize>>,
}

impl RoutedRequests {
    fn of(
        table: &EventTable,
        settings: &AnalysisSettings,
        reported: &[stats::EndpointStats],
        rules: &[Option<(Option<String>, Regex)>],
    ) -> Self {
        let mut out = RoutedRequests {
            rows: Vec::new(),
            matches: Default::default(),
        };
        if table.path.is_empty() {
            return out;
        }
        let routed: Vec<Id> = (settings.ingest.routes.iter())
            .filter(|r| reported.iter().any(|e| e.endpoint == r.name))
            .filter_map(|r| table.endpoints.get(&r.name))
            .collect();
        if routed.is_empty() {
            return out;
        }
        let indexed: Vec<(usize, &Regex)> = (rules.iter().enumerate())
            .filter_map(|(i, rule)| rule.as_ref().map(|(_, regex)| (i, regex)))
            .collect();
        let Ok(set) = regex::RegexSet::new(indexed.iter().map(|(_, r)| r.as_str())) else {
            return out;
        };
        let mut by_endpoint: std::collections::HashMap<Id, Vec<usize>> = Default::default();
        for row in 0..table.len() {
            if routed.contains(&table.endpoint[row]) {
                by_endpoint
                    .entry(table.endpoint[row])
                    .or_default()
                    .push(row);
                let path = table.path[row];
                out.matches.entry(path).or_insert_with(|| {
                    let text = table.paths.name(path);
                    set.matches(text).iter().map(|k| indexed[k].0).collect()
                });
            }
        }
        out.rows = by_endpoint.into_iter().collect();
        out.rows.sort_unstable_by_key(|(e, _)| *e);
        out
    }

    /// Whether `name` is a routed endpoint matched path by path here.
    fn names(&self, table: &EventTable, name: &str) -> bool {
        table
            .endpoints
            .get(name)
            .is_some_and(|id| self.rows.iter().any(|(e, _)| *e == id))
    }

    /// Per routed endpoint other than `own`, the rows rule `rule` counts
    /// (its route matches the path, its method the request's).
    fn matched(
        &self,
        table: &EventTable,
        rule: usize,
        method: Option<&str>,
        own: Option<Id>,
    ) -> Vec<(Id, Vec<usize>)> {
        (self.rows.iter())
            .filter(|(endpoint, _)| Some(*endpoint) != own)
            .map(|(endpoint, rows)| {
                let counted = (rows.iter().copied())
                    .filter(|&row| {
                        self.matches[&table.path[row]].contains(&rule)
                            && method.is_none_or(|m| table.methods.name(table.method[row]) == m)
                    })
                    .collect();
                (*endpoint, counted)
            })
            .filter(|(_, rows): &(Id, Vec<usize>)| !rows.is_empty())
            .collect()
    }
}

/// The recommendation for all traffic of a table of the requests in `rows`
/// alone, as it is for a whole log.
fn recommend_over(
    table: &mut EventTable,
    rows: &[usize],
    settings: &AnalysisSettings,
) -> Option<Recommendation> {
    let mut scope = requests_in(table, rows);
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

/// The requests of `table` in `rows` (in order), as a table of one
/// endpoint; it holds the table's client names until they are given back.
fn requests_in(table: &mut EventTable, rows: &[usize]) -> EventTable {
    fn pick<T: Copy + Send + Sync>(column: &[T], rows: &[usize]) -> Vec<T> {
        rows.par_iter().map(|&r| column[r]).collect()
    }
    let mut names = Interner::default();
    names.intern("rule");
    EventTable {
        ts: pick(&table.ts, rows),
        client: pick(&table.client, rows),
        endpoint: vec![0; rows.len()],
        path: Vec::new(),
        method: pick(&table.method, rows),
        status: pick(&table.status, rows),
        logged: pick(&table.logged, rows),
        protocol: pick(&table.protocol, rows),
        extra_keys: Vec::new(),
        clients: std::mem::take(&mut table.clients),
        endpoints: names,
        paths: Interner::default(),
        methods: table.methods.clone(),
    }
}
