//! Traffic statistics: per-client request counts per window and per second,
//! overall and per endpoint, top clients, and the 429/503 answers already in the
//! log. Definitions (they are part of the contract; the README repeats them):
//!
//! - **per_window**: one sample per (client, window) pair with at least one
//!   request; windows are epoch-aligned, t belongs to floor(t / W).
//! - **per_second**: the same with W = 1 s.
//! - **client_peak_second**: one sample per client, its largest count in any one second.
//!
//! Quantiles are nearest-rank ([`quantiles`]).
//!
//! Memory follows the lines and the clients, not the distinct endpoints: every
//! endpoint's requests are counted exactly (they rank the endpoints), but
//! per-endpoint figures (distributions, per-client peaks) are kept only for the
//! endpoints that are reported ([`analyze_endpoints`]).

pub mod by_client;
pub mod counting;
mod detail;
pub mod histograms;
mod pass;
pub mod quantiles;
pub mod radix;
pub(crate) mod row_ranges;
pub mod timeline;

use serde::Serialize;

use crate::events::{EventTable, Id};
use crate::units::{Millis, Window};
use counting::ScopeDistributions;
use detail::Detail;
use quantiles::{CountDistribution, Quantiles};

/// What to compute.
#[derive(Debug, Clone)]
pub struct StatsSettings {
    pub window: Window,
    /// How many top clients to list.
    pub top: usize,
    /// Clients left out of every figure (`--exclude`).
    pub exclude: Vec<String>,
    /// Keep the per-(client, endpoint, window) counts for export.
    pub keep_counts: bool,
}

/// One client's totals and peaks within a scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientPeak {
    pub client: Id,
    pub requests: u64,
    pub peak_window: u64,
    pub peak_second: u64,
}

/// The figures of one scope (all traffic, or one endpoint).
#[derive(Debug, Clone, Serialize)]
pub struct ScopeStats {
    pub requests: u64,
    pub clients: u64,
    pub per_window: Quantiles,
    pub per_second: Quantiles,
    pub client_peak_second: Quantiles,
    #[serde(skip)]
    pub distributions: ScopeDistributions,
    #[serde(skip)]
    pub peak_seconds: CountDistribution,
    /// Every client of the scope with its peaks, in client-id order.
    #[serde(skip)]
    pub peaks: Vec<ClientPeak>,
}

impl ScopeStats {
    fn new(distributions: ScopeDistributions, peaks: Vec<ClientPeak>) -> Self {
        let mut peak_seconds = CountDistribution::default();
        peaks
            .iter()
            .for_each(|p| peak_seconds.record(p.peak_second));
        ScopeStats {
            requests: peaks.iter().map(|p| p.requests).sum(),
            clients: peaks.len() as u64,
            per_window: distributions.per_window.quantiles(),
            per_second: distributions.per_second.quantiles(),
            client_peak_second: peak_seconds.quantiles(),
            distributions,
            peak_seconds,
            peaks,
        }
    }
}

/// Figures for one endpoint.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointStats {
    pub endpoint: String,
    #[serde(flatten)]
    pub stats: ScopeStats,
}

/// 429 and 503 answers already in the log.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusSummary {
    pub status_429: u64,
    pub status_503: u64,
    /// Clients that received them, most first: (client, 429s, 503s).
    pub clients: Vec<StatusClient>,
}

/// One client's 429/503 answers.
#[derive(Debug, Clone, Serialize)]
pub struct StatusClient {
    pub client: String,
    pub status_429: u64,
    pub status_503: u64,
}

/// Per-(client, endpoint, window) counts, kept for `--export-counts`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CountRows {
    pub client: Vec<Id>,
    pub endpoint: Vec<Id>,
    /// Window start, ms since the epoch.
    pub window_start: Vec<Millis>,
    pub count: Vec<u64>,
}

/// Everything `rlctl analyze` measures.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub window: Window,
    pub overall: ScopeStats,
    /// Endpoints by requests, most first (ties by name): all of them, or the
    /// busiest ones that carry figures ([`analyze_endpoints`]).
    pub endpoints: Vec<EndpointStats>,
    /// How many endpoints have requests (listed in `endpoints` or not).
    pub endpoint_count: usize,
    pub status: StatusSummary,
    /// Excluded clients that were found in the log.
    pub excluded: Vec<String>,
    /// Excluded clients that never appeared (probably a typo).
    pub excluded_unknown: Vec<String>,
    pub counts: Option<CountRows>,
}

/// Computes every figure of the time-ordered table, for every endpoint (one
/// counting pass, in parallel over clients: see [`pass`]).
pub fn analyze(table: &EventTable, settings: &StatsSettings) -> Analysis {
    analyze_endpoints(table, settings, usize::MAX)
}

/// [`analyze`] with per-endpoint figures for the `endpoints` busiest endpoints
/// only (by requests, ties by name: the first `endpoints` of [`analyze`]'s
/// list, with the same figures); the others are counted in `endpoint_count`.
/// With `keep_counts`, the export rows cover every endpoint all the same.
pub fn analyze_endpoints(
    table: &EventTable,
    settings: &StatsSettings,
    endpoints: usize,
) -> Analysis {
    let window = settings.window;
    let mut excluded = vec![false; table.clients.len()];
    let (mut found, mut unknown) = (Vec::new(), Vec::new());
    for name in &settings.exclude {
        match table.clients.get(name) {
            Some(id) => {
                excluded[id as usize] = true;
                found.push(name.clone());
            }
            None => unknown.push(name.clone()),
        }
    }
    let requests = endpoint_requests(table, &excluded);
    let endpoint_count = requests.iter().filter(|&&n| n > 0).count();
    let detail = if endpoints >= endpoint_count {
        Detail::all(table.endpoints.len())
    } else {
        Detail::only(busiest(table, &requests, endpoints), table.endpoints.len())
    };
    let counted = pass::count(table, &excluded, window, settings.keep_counts, &detail);
    let mut endpoints: Vec<EndpointStats> = counted
        .per_endpoint
        .iter()
        .zip(counted.endpoint_peaks)
        .zip(detail.endpoints())
        .filter(|((_, peaks), _)| !peaks.is_empty())
        .map(|((tally, peaks), &e)| EndpointStats {
            endpoint: table.endpoints.name(e).to_string(),
            stats: ScopeStats::new(tally.distributions(), peaks),
        })
        .collect();
    endpoints.sort_by(|a, b| {
        b.stats
            .requests
            .cmp(&a.stats.requests)
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
    Analysis {
        window,
        overall: ScopeStats::new(counted.overall.distributions(), counted.peaks),
        endpoints,
        endpoint_count,
        status: status_summary(table, counted.status),
        excluded: found,
        excluded_unknown: unknown,
        counts: counted.counts,
    }
}

/// Requests per endpoint id, leaving out `excluded` clients.
fn endpoint_requests(table: &EventTable, excluded: &[bool]) -> Vec<u64> {
    let mut requests = vec![0u64; table.endpoints.len()];
    let any_excluded = excluded.contains(&true);
    for (&c, &e) in table.client.iter().zip(&table.endpoint) {
        if !any_excluded || !excluded[c as usize] {
            requests[e as usize] += 1;
        }
    }
    requests
}

/// The `n` endpoints with the most requests (ties by name), in that order.
/// Every one of them has at least the `n`-th largest count, found first by
/// counts alone: with a million endpoints of a request or two, the names
/// are compared only among those at that count, not across all of them.
fn busiest(table: &EventTable, requests: &[u64], n: usize) -> Vec<Id> {
    if n == 0 {
        return Vec::new();
    }
    let order = |a: &Id, b: &Id| {
        requests[*b as usize]
            .cmp(&requests[*a as usize])
            .then_with(|| table.endpoints.name(*a).cmp(table.endpoints.name(*b)))
    };
    let mut ids: Vec<Id> = (0..requests.len() as Id)
        .filter(|&e| requests[e as usize] > 0)
        .collect();
    if n < ids.len() {
        let (_, &mut nth, _) =
            ids.select_nth_unstable_by_key(n - 1, |&e| std::cmp::Reverse(requests[e as usize]));
        let least = requests[nth as usize];
        ids.retain(|&e| requests[e as usize] >= least);
    }
    if n < ids.len() {
        ids.select_nth_unstable_by(n, order);
        ids.truncate(n);
    }
    ids.sort_unstable_by(order);
    ids
}

fn status_summary(table: &EventTable, by_client: Vec<(Id, u64, u64)>) -> StatusSummary {
    let mut clients: Vec<StatusClient> = by_client
        .into_iter()
        .map(|(c, a, b)| StatusClient {
            client: table.clients.name(c).to_string(),
            status_429: a,
            status_503: b,
        })
        .collect();
    clients.sort_by(|a, b| {
        (b.status_429 + b.status_503)
            .cmp(&(a.status_429 + a.status_503))
            .then_with(|| a.client.cmp(&b.client))
    });
    StatusSummary {
        status_429: clients.iter().map(|c| c.status_429).sum(),
        status_503: clients.iter().map(|c| c.status_503).sum(),
        clients,
    }
}

/// The `n` clients with the most requests (ties by name), from a scope's peaks.
/// Names are distinct, so the order is total: the `n` are selected, then only
/// they are sorted (a million clients are not sorted to list ten).
pub fn top_clients<'a>(
    table: &'a EventTable,
    stats: &ScopeStats,
    n: usize,
) -> Vec<(&'a str, ClientPeak)> {
    let order = |a: &&ClientPeak, b: &&ClientPeak| {
        b.requests.cmp(&a.requests).then_with(|| {
            table
                .clients
                .name(a.client)
                .cmp(table.clients.name(b.client))
        })
    };
    let mut peaks: Vec<&ClientPeak> = stats.peaks.iter().collect();
    if n < peaks.len() {
        peaks.select_nth_unstable_by(n, order);
        peaks.truncate(n);
    }
    peaks.sort_unstable_by(order);
    peaks
        .into_iter()
        .map(|p| (table.clients.name(p.client), *p))
        .collect()
}

#[cfg(test)]
mod detail_tests;
#[cfg(test)]
mod tests;
