//! The same [`Analysis`] built from exact histograms and per-client peaks that
//! an SQL engine computed (`rlctl sql` prints the queries; `rlctl analyze
//! --from-sql-result` reads the results), instead of from the events.
//!
//! The engine returns, for each count value, how many (client, window) and
//! (client, second) pairs had it; one row per client (requests, peak window,
//! peak second, first request, 429s and 503s); every endpoint's requests and
//! clients; and for the top N endpoints their histograms and one row per
//! (client, endpoint). Those rows go into the very distributions and peaks
//! [`super::analyze`] fills, so the quantiles, the recommendation, the top
//! clients and the status counts are identical. What is not reproduced: only
//! the top N endpoints (by requests, computed in SQL) carry figures, and the
//! flagged clients that tie on peak window and requests are listed in order of
//! their first request, then name (the events give input order within a
//! millisecond).

use rustc_hash::FxHashMap;

use super::counting::ScopeDistributions;
use super::{Analysis, ClientPeak, EndpointStats, ScopeStats, StatusClient, StatusSummary};
use crate::events::{Id, Interner};
use crate::units::{Millis, Window};

/// Why histogram rows do not make an analysis.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum HistogramError {
    #[error("{0}")]
    Inconsistent(String),
}

/// The one-row summary of the events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryRow {
    pub requests: u64,
    pub clients: u64,
    /// Distinct endpoints.
    pub endpoints: u64,
    pub first_ts_ms: Millis,
    pub last_ts_ms: Millis,
    pub window_s: u32,
    /// Events whose time is not a whole second.
    pub subsecond: u64,
    /// How many endpoints (by requests) carry figures.
    pub detail_endpoints: u64,
}

/// Which distribution a histogram row belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    PerWindow,
    PerSecond,
}

/// `samples` (client, window) or (client, second) pairs held `requests` requests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistogramRow {
    /// None for all traffic.
    pub endpoint: Option<String>,
    pub metric: Metric,
    pub requests: u64,
    pub samples: u64,
}

/// One client's totals and peaks (all traffic, or one endpoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRow {
    pub client: String,
    pub requests: u64,
    pub peak_window: u64,
    pub peak_second: u64,
    /// Its first request (orders clients as the events would).
    pub first_ts_ms: Millis,
    pub status_429: u64,
    pub status_503: u64,
}

/// One endpoint's totals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointRow {
    pub endpoint: String,
    pub requests: u64,
    pub clients: u64,
}

/// One (client, endpoint) pair of a detailed endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointClientRow {
    pub endpoint: String,
    pub client: String,
    pub requests: u64,
    pub peak_window: u64,
    pub peak_second: u64,
}

/// Everything the SQL engine returned.
#[derive(Debug, Clone, Default)]
pub struct HistogramInput {
    pub summary: SummaryRow,
    pub histograms: Vec<HistogramRow>,
    pub clients: Vec<ClientRow>,
    pub endpoints: Vec<EndpointRow>,
    pub endpoint_clients: Vec<EndpointClientRow>,
}

/// An analysis and the client names its ids refer to.
#[derive(Debug, Clone)]
pub struct HistogramAnalysis {
    pub analysis: Analysis,
    /// Client names, interned in order of first request (then name).
    pub clients: Interner,
    /// How many endpoints carry figures (the rest have requests and clients only).
    pub detailed_endpoints: usize,
}

/// Builds the analysis `stats::analyze` would compute from the same events.
pub fn from_histograms(input: &HistogramInput) -> Result<HistogramAnalysis, HistogramError> {
    let bad = |m: String| Err(HistogramError::Inconsistent(m));
    let window = Window::from_secs(input.summary.window_s)
        .ok_or_else(|| HistogramError::Inconsistent("summary: window_s is 0".into()))?;
    let mut order: Vec<&ClientRow> = input.clients.iter().collect();
    order.sort_by(|a, b| (a.first_ts_ms, &a.client).cmp(&(b.first_ts_ms, &b.client)));
    let mut clients = Interner::default();
    for row in &order {
        clients.intern(&row.client);
    }
    if clients.len() != input.clients.len() {
        return bad("clients: a client appears twice".into());
    }
    let peak = |id: Id, requests, peak_window, peak_second| ClientPeak {
        client: id,
        requests,
        peak_window,
        peak_second,
    };
    let mut peaks: Vec<ClientPeak> = order
        .iter()
        .enumerate()
        .map(|(id, r)| peak(id as Id, r.requests, r.peak_window, r.peak_second))
        .collect();
    peaks.sort_by_key(|p| p.client);

    let mut dists: FxHashMap<Option<&str>, ScopeDistributions> = FxHashMap::default();
    for row in &input.histograms {
        let d = dists.entry(row.endpoint.as_deref()).or_default();
        match row.metric {
            Metric::PerWindow => d.per_window.record_n(row.requests, row.samples),
            Metric::PerSecond => d.per_second.record_n(row.requests, row.samples),
        }
    }
    let overall = ScopeStats::new(dists.remove(&None).unwrap_or_default(), peaks);
    check_overall(&overall, input)?;

    let mut endpoint_peaks: FxHashMap<&str, Vec<ClientPeak>> = FxHashMap::default();
    for row in &input.endpoint_clients {
        let Some(id) = clients.get(&row.client) else {
            return bad(format!(
                "endpoint_clients: client {} is not in the clients table",
                row.client
            ));
        };
        endpoint_peaks.entry(&row.endpoint).or_default().push(peak(
            id,
            row.requests,
            row.peak_window,
            row.peak_second,
        ));
    }
    let detailed_endpoints = endpoint_peaks.len();
    let mut endpoints: Vec<EndpointStats> = input
        .endpoints
        .iter()
        .map(|row| {
            let stats = match endpoint_peaks.remove(row.endpoint.as_str()) {
                Some(mut peaks) => {
                    peaks.sort_by_key(|p| p.client);
                    let d = dists.remove(&Some(row.endpoint.as_str()));
                    ScopeStats::new(d.unwrap_or_default(), peaks)
                }
                None => ScopeStats {
                    requests: row.requests,
                    clients: row.clients,
                    ..ScopeStats::new(ScopeDistributions::default(), Vec::new())
                },
            };
            EndpointStats {
                endpoint: row.endpoint.clone(),
                stats,
            }
        })
        .collect();
    if let Some(orphan) = endpoint_peaks.keys().next() {
        return bad(format!(
            "endpoint_clients: endpoint {orphan} is not in the endpoints table"
        ));
    }
    endpoints.sort_by(|a, b| {
        b.stats
            .requests
            .cmp(&a.stats.requests)
            .then_with(|| a.endpoint.cmp(&b.endpoint))
    });
    Ok(HistogramAnalysis {
        analysis: Analysis {
            window,
            overall,
            endpoint_count: endpoints.len(),
            endpoints,
            status: status_summary(&input.clients),
            excluded: Vec::new(),
            excluded_unknown: Vec::new(),
            counts: None,
        },
        clients,
        detailed_endpoints,
    })
}

/// The tables must describe the same events: a mix of two runs (or of two
/// windows) is refused rather than reported.
fn check_overall(overall: &ScopeStats, input: &HistogramInput) -> Result<(), HistogramError> {
    let s = &input.summary;
    // From the rows, not the histogram: counts above 2047 share HDR buckets.
    let weighted = |metric: Metric| -> u64 {
        input
            .histograms
            .iter()
            .filter(|r| r.endpoint.is_none() && r.metric == metric)
            .map(|r| r.requests * r.samples)
            .sum()
    };
    let checks = [
        (
            "requests in the clients table",
            overall.requests,
            s.requests,
        ),
        ("clients in the clients table", overall.clients, s.clients),
        (
            "requests in the per_window histogram",
            weighted(Metric::PerWindow),
            s.requests,
        ),
        (
            "requests in the per_second histogram",
            weighted(Metric::PerSecond),
            s.requests,
        ),
    ];
    for (what, found, expected) in checks {
        if found != expected {
            return Err(HistogramError::Inconsistent(format!(
                "{what}: {found}, but the summary says {expected} requests/clients; were all tables saved from the same `rlctl sql` run?"
            )));
        }
    }
    Ok(())
}

fn status_summary(rows: &[ClientRow]) -> StatusSummary {
    let mut clients: Vec<StatusClient> = rows
        .iter()
        .filter(|r| r.status_429 + r.status_503 > 0)
        .map(|r| StatusClient {
            client: r.client.clone(),
            status_429: r.status_429,
            status_503: r.status_503,
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

#[cfg(test)]
mod tests;
