//! The recommendations of every scope of an analysis on the chosen baseline,
//! and how a baseline reads in a report (which rule, which clients were
//! separated, one line of explanation each).

use serde::Serialize;

use super::baseline::{self, BaselineChoice, BaselineRule, ScopeBaseline, ScopeInput, TailBasis};
use super::windows::{TableWindows, span_windows};
use super::{Recommendation, recommend_on};
use crate::events::EventTable;
use crate::stats::Analysis;
use crate::units::Window;

/// How many separated clients are listed by name.
pub const SEPARATED_LISTED: usize = 50;

/// A client left out of the baseline, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct SeparatedClient {
    pub client: String,
    pub requests: u64,
    pub peak_window: u64,
    /// Windows above the threshold, and the longest run of them in a row.
    pub windows_above: u64,
    pub longest_run: u64,
    /// p99 of the samples when it was separated; the quantile the threshold
    /// was set by (`p99`, or `p95` when the tail was steep only there) and
    /// its value; threshold = 5 × that value.
    pub p99: u64,
    pub basis: TailBasis,
    pub basis_value: u64,
    pub threshold: u64,
    /// Whether its peak window exceeds the recommended limit.
    pub flagged: bool,
    /// One line saying why it was separated.
    pub explanation: String,
}

/// Which samples a recommendation rests on.
#[derive(Debug, Clone, Serialize)]
pub struct BaselineSummary {
    /// The baseline asked for (`--baseline`).
    pub choice: BaselineChoice,
    /// The rule that applied to this scope.
    pub rule: BaselineRule,
    /// Samples, p99 and p99.9 of the samples the limit rests on.
    pub samples: u64,
    pub p99: u64,
    pub p999: u64,
    pub separated_count: u64,
    pub separated: Vec<SeparatedClient>,
    /// A sentence for the reader when the rule says something worth knowing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl BaselineSummary {
    /// The summary of `b`, with flags against `limit`.
    pub fn new(table: &EventTable, b: &ScopeBaseline, window: Window, limit: u64) -> Self {
        let choice = match b.rule {
            BaselineRule::All => BaselineChoice::All,
            _ => BaselineChoice::Robust,
        };
        let note = match b.rule {
            BaselineRule::FewClients => Some(format!(
                "fewer than {} clients: the literal definition (every client-window) applies",
                baseline::MIN_CLIENTS
            )),
            _ if b.rounds_exhausted => Some(format!(
                "separation stopped after {} rounds with the tail still steep",
                baseline::MAX_ROUNDS
            )),
            _ => None,
        };
        let mut separated: Vec<_> = b.separated.iter().collect();
        separated.sort_by(|x, y| {
            (y.peak_window, y.requests)
                .cmp(&(x.peak_window, x.requests))
                .then_with(|| {
                    table
                        .clients
                        .name(x.client)
                        .cmp(table.clients.name(y.client))
                })
        });
        BaselineSummary {
            choice,
            rule: b.rule,
            samples: b.per_window.samples,
            p99: b.per_window.p99,
            p999: b.per_window.p999,
            separated_count: b.separated.len() as u64,
            separated: separated
                .into_iter()
                .take(SEPARATED_LISTED)
                .map(|s| SeparatedClient {
                    client: table.clients.name(s.client).to_string(),
                    requests: s.requests,
                    peak_window: s.peak_window,
                    windows_above: s.windows_above,
                    longest_run: s.longest_run,
                    p99: s.p99,
                    basis: s.basis,
                    basis_value: s.basis_value,
                    threshold: s.threshold,
                    flagged: s.peak_window > limit,
                    explanation: format!(
                        "peak {}/{window}; {} windows above {} x {} {} = {}/{window}, {} in a row",
                        s.peak_window,
                        s.windows_above,
                        baseline::TAIL_RATIO,
                        s.basis,
                        s.basis_value,
                        s.threshold,
                        s.longest_run
                    ),
                })
                .collect(),
            note,
        }
    }
}

/// The recommendation for all traffic and for each of the first `endpoints`
/// endpoints of the analysis whose (literal) p99.9 rests on enough samples,
/// each on its own baseline.
pub fn recommend_scopes(
    table: &EventTable,
    analysis: &Analysis,
    choice: BaselineChoice,
    multiplier: f64,
    endpoints: usize,
) -> (Option<Recommendation>, Vec<(String, Recommendation)>) {
    let window = analysis.window;
    let chosen: Vec<_> = analysis
        .endpoints
        .iter()
        .take(endpoints)
        .filter(|e| !e.stats.per_window.p999_is_thin())
        .collect();
    let mut inputs = vec![ScopeInput {
        per_window: &analysis.overall.distributions.per_window,
        peaks: &analysis.overall.peaks,
    }];
    let mut scopes = vec![None];
    for e in &chosen {
        inputs.push(ScopeInput {
            per_window: &e.stats.distributions.per_window,
            peaks: &e.stats.peaks,
        });
        scopes.push(table.endpoints.get(&e.endpoint));
    }
    let mut loader = TableWindows {
        table,
        window,
        scopes,
    };
    let span = span_windows(table, window);
    let baselines = baseline::baselines(choice, &inputs, span, &mut loader);
    let overall = recommend_on(table, &analysis.overall, &baselines[0], window, multiplier);
    let per_endpoint = chosen
        .iter()
        .zip(&baselines[1..])
        .filter_map(|(e, b)| {
            let r = recommend_on(table, &e.stats, b, window, multiplier)?;
            Some((e.endpoint.clone(), r))
        })
        .collect();
    (overall, per_endpoint)
}
