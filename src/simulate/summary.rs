//! The figures `rlctl simulate` reports, computed from a replay's decisions: totals,
//! clients hit, rejections per endpoint and per minute, the clients rejected most,
//! nginx delays, and the boundary effect (the most admitted requests any client got
//! through in one window W, against L).
//!
//! Everything here is plain counting over the decisions; nothing re-decides.

use serde::Serialize;

use super::{AlgorithmKind, AlgorithmSpec, Limiter};
use crate::events::{ClientGroups, EventTable, Interner};
use crate::units::Millis;

/// The events a replay decided, with what is needed to name clients and endpoints.
#[derive(Debug, Clone, Copy)]
pub struct Traffic<'a> {
    /// Times the limiter saw (compressed ones for a what-if scale), sorted.
    pub ts: &'a [Millis],
    /// Client id per event.
    pub client: &'a [u32],
    /// Endpoint id per event.
    pub endpoint: &'a [u32],
    /// Names of client ids.
    pub client_names: &'a Interner,
    /// Names of endpoint ids.
    pub endpoint_names: &'a Interner,
    /// The same events grouped by client, when a replay grouped them so.
    pub by_client: Option<ByClient<'a>>,
    /// The figures of these events that no decision changes, when worked out
    /// once for several summaries (see [`Census`]).
    pub census: Option<&'a Census>,
}

/// Events grouped by client (each group in time order, see
/// [`Replayer::grouped_by`](super::Replayer::grouped_by)) with their times in
/// that order: per-client passes read them in sequence and run in parallel.
#[derive(Debug, Clone, Copy)]
pub struct ByClient<'a> {
    /// Rows per client.
    pub groups: &'a ClientGroups,
    /// `ts[groups.rows[i]]` at `i`.
    pub ts: &'a [Millis],
    /// The decisions summarised, in this order (`allowed[groups.rows[i]]` at
    /// `i`), when known: then read in sequence.
    pub allowed: Option<&'a [bool]>,
}

impl<'a> Traffic<'a> {
    /// All events of a table, with their logged times.
    pub fn of(table: &'a EventTable) -> Self {
        Traffic {
            ts: &table.ts,
            client: &table.client,
            endpoint: &table.endpoint,
            client_names: &table.clients,
            endpoint_names: &table.endpoints,
            by_client: None,
            census: None,
        }
    }
}

/// Everything reported for one algorithm (or one rule) on one input.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The algorithm.
    pub algo: AlgorithmKind,
    /// The limit as written: `600/1m`.
    pub limit: String,
    /// W in seconds.
    pub window_s: u32,
    /// The burst used (defaults applied); null for algorithms without one.
    pub burst: Option<u64>,
    /// nginx `delay=N` / `nodelay` for the leaky bucket.
    pub nginx_delay: Option<String>,
    /// Requests admitted at once from the empty state.
    pub instant_capacity: u64,
    /// Which burst convention was used, in one line.
    pub burst_convention: String,
    #[serde(flatten)]
    pub totals: Totals,
    /// The most admitted in one window W, against L.
    pub boundary: BoundaryEffect,
    /// Delays of admitted requests, when the limiter delays.
    pub delays: Option<DelayStats>,
}

/// What happened to the requests, whatever decided them (one rule, or a whole policy).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// Events replayed.
    pub requests: u64,
    /// Events admitted.
    pub allowed: u64,
    /// Events rejected.
    pub rejected: u64,
    /// rejected / requests (0 without requests).
    pub reject_rate: f64,
    /// Clients with at least one request.
    pub clients: u64,
    /// Clients with at least one request rejected.
    pub clients_rejected: u64,
    /// clients_rejected / clients.
    pub clients_rejected_share: f64,
    /// Endpoints with rejections, most rejected first.
    pub rejected_by_endpoint: Vec<Rejects>,
    /// The clients rejected most, most rejected first.
    pub top_rejected_clients: Vec<Rejects>,
    /// Epoch-aligned minutes with rejections, in time order.
    pub rejects_per_minute: Vec<MinuteRejects>,
    /// The time of the first rejection, ms since the epoch (none without rejections).
    pub first_reject: Option<Millis>,
    /// The time of the last rejection.
    pub last_reject: Option<Millis>,
}

/// Requests and rejections of one client or endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejects {
    /// The client key or endpoint.
    pub name: String,
    /// Its requests.
    pub requests: u64,
    /// Those rejected.
    pub rejected: u64,
}

/// Rejections in one minute.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MinuteRejects {
    /// Start of the minute, ms since the epoch.
    pub minute: Millis,
    /// Requests rejected in it.
    pub rejected: u64,
}

/// The most admitted requests any one client got through in a span (t − W, t].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BoundaryEffect {
    /// L.
    pub limit: u64,
    /// W in seconds.
    pub window_s: u32,
    /// The most admitted requests of one client in one span (t − W, t].
    pub max_admitted: u64,
    /// max_admitted / L: above 1 the algorithm let more than L through in a window.
    pub ratio: f64,
    /// The client and the end of its busiest span (the earliest, among ties).
    pub client: Option<String>,
    /// t, the end of that span.
    pub span_end: Option<Millis>,
}

/// Nearest-rank percentiles of the delays of admitted requests (zeros included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DelayStats {
    /// Admitted requests with a delay above 0.
    pub delayed: u64,
    /// Median delay.
    pub p50_ms: u64,
    /// 99th percentile delay.
    pub p99_ms: u64,
    /// Longest delay.
    pub max_ms: u64,
}

/// Summarises `allowed` (one decision per event of `traffic`) for the rule
/// `spec`/`limiter`, listing the `top` most rejected clients.
pub fn summarize(
    spec: &AlgorithmSpec,
    limiter: &Limiter,
    traffic: &Traffic,
    allowed: &[bool],
    delay_ms: Option<&[u64]>,
    top: usize,
) -> Summary {
    summarize_admitted(spec, limiter, traffic, allowed, None, delay_ms, top)
}

/// [`summarize`] of a rule's own verdicts `allowed`, its busiest span from
/// `admitted` when given: what went through its counters, when that is not
/// what it admitted (in a policy, the requests every rule admitted).
pub fn summarize_admitted(
    spec: &AlgorithmSpec,
    limiter: &Limiter,
    traffic: &Traffic,
    allowed: &[bool],
    admitted: Option<&[bool]>,
    delay_ms: Option<&[u64]>,
    top: usize,
) -> Summary {
    let rejected = totals::rejected_rows(allowed);
    let boundary = || match admitted {
        None => boundary::boundary_effect(spec, traffic, allowed, Some(&rejected)),
        Some(admitted) => {
            // Decisions of their own: not those `by_client` may hold in its order.
            let traffic = Traffic {
                by_client: (traffic.by_client).map(|b| ByClient { allowed: None, ..b }),
                ..*traffic
            };
            let not_admitted = totals::rejected_rows(admitted);
            boundary::boundary_effect(spec, &traffic, admitted, Some(&not_admitted))
        }
    };
    // Independent passes over the decisions, run side by side.
    let (totals, (boundary, delays)) = rayon::join(
        || totals::of_rejected(traffic, allowed.len(), &rejected, top),
        || rayon::join(boundary, || delay_ms.map(|d| delay_stats(d, allowed))),
    );
    Summary {
        algo: spec.kind,
        limit: spec.limit.to_string(),
        window_s: spec.limit.window.secs(),
        burst: spec.effective_burst(),
        nginx_delay: spec.delay.map(|d| d.to_string()),
        instant_capacity: limiter.instant_capacity(),
        burst_convention: limiter.burst_convention(),
        totals,
        boundary,
        delays,
    }
}

/// Counts `allowed` (one decision per event of `traffic`), listing the `top` most
/// rejected clients.
pub fn totals(traffic: &Traffic, allowed: &[bool], top: usize) -> Totals {
    let rejected = totals::rejected_rows(allowed);
    totals::of_rejected(traffic, allowed.len(), &rejected, top)
}

fn name_of(names: &Interner, id: usize) -> String {
    if id < names.len() {
        names.name(id as u32).to_string()
    } else {
        format!("#{id}")
    }
}

fn delay_stats(delay_ms: &[u64], allowed: &[bool]) -> DelayStats {
    // Of the admitted requests' delays, the zeros (usually most) come first in
    // sorted order: they are counted, and only the others kept.
    let admitted = allowed.iter().filter(|&&ok| ok).count();
    let mut delays: Vec<u64> = delay_ms
        .iter()
        .zip(allowed)
        .filter(|&(&d, &ok)| ok && d > 0)
        .map(|(&d, _)| d)
        .collect();
    let zeros = admitted - delays.len();
    // The nearest-rank index of a percentile among the admitted; its value is
    // 0 among the zeros, else found by selection among the others, which puts
    // the element a full sort would put there (no sort needed).
    let rank = |percent: usize| (percent * admitted).div_ceil(100).max(1) - 1;
    let (p50, p99) = (rank(50), rank(99));
    let mut at = |index: usize| match index.checked_sub(zeros) {
        Some(i) if i < delays.len() => *delays.select_nth_unstable(i).1,
        _ => 0,
    };
    let (p50_ms, p99_ms) = (at(p50), at(p99));
    DelayStats {
        delayed: delays.len() as u64,
        p50_ms,
        p99_ms,
        max_ms: delays.iter().copied().max().unwrap_or(0),
    }
}

mod boundary;
mod census;
mod totals;
pub use census::Census;
#[cfg(test)]
mod tests;
