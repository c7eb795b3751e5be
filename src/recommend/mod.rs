//! Limit recommendations from measured traffic.
//!
//! - limit = ceil(multiplier × per_window p99.9), with 3× and 5× shown beside it
//!   and how many clients each would touch (clients whose peak window exceeds it);
//! - burst = the largest peak second among clients that are not flagged, and at
//!   least 10 seconds of the limit's average rate; a warning when it exceeds 30
//!   seconds of that rate;
//! - flagged clients: those whose peak window exceeds the recommended limit, for a
//!   person to review (a runaway loop to exclude, or a heavy user to allow).
//!
//! The per-window p99.9 and p99 come from the scope's baseline ([`baseline`]):
//! by default the samples of the clients that are not a population of their
//! own; with `--baseline all`, every sample.

pub mod baseline;
mod summary;
pub mod windows;

use serde::Serialize;

use crate::events::EventTable;
use crate::stats::ScopeStats;
use crate::text::counted;
use crate::units::{Limit, Window};
pub use baseline::{BaselineChoice, BaselineRule, ScopeBaseline};
pub use summary::{BaselineSummary, SeparatedClient, recommend_scopes};

/// Multipliers always shown as alternatives.
pub const ALTERNATIVE_MULTIPLIERS: [f64; 2] = [3.0, 5.0];

/// The burst is at least this many seconds of the limit's average rate.
pub const BURST_FLOOR_SECONDS: u64 = 10;

/// A burst above this many seconds of the average rate earns a warning.
pub const BURST_WARN_SECONDS: u64 = 30;

/// A p99.9 more than this many times p99 means a few clients make the tail.
pub const STEEP_TAIL_RATIO: u64 = 5;

/// How many flagged clients are listed by name.
pub const FLAGGED_LISTED: usize = 50;

/// A limit at another multiplier, and whom it would touch.
#[derive(Debug, Clone, Serialize)]
pub struct Alternative {
    pub multiplier: f64,
    pub limit: u64,
    /// Clients whose peak window exceeds this limit.
    pub clients_over: u64,
}

/// A client whose peak window exceeds the recommended limit.
#[derive(Debug, Clone, Serialize)]
pub struct FlaggedClient {
    pub client: String,
    pub requests: u64,
    pub peak_window: u64,
    pub peak_second: u64,
}

/// A recommended limit for one scope.
#[derive(Debug, Clone, Serialize)]
pub struct Recommendation {
    /// Requests per window.
    pub limit: u64,
    pub window_s: u32,
    /// The limit as `N/window` (e.g. `600/1m`).
    pub rate: String,
    pub burst: u64,
    pub multiplier: f64,
    /// The per_window p99.9 the limit rests on.
    pub basis_p999: u64,
    /// True when that p99.9 rests on fewer than 1000 samples.
    pub thin_basis: bool,
    /// Largest peak second among clients that are not flagged.
    pub normal_peak_second: u64,
    /// The burst floor: 10 seconds of the average rate.
    pub burst_floor: u64,
    /// The multiplier asked for and the alternatives, ascending.
    pub alternatives: Vec<Alternative>,
    /// How many clients are flagged, and the first of them by peak window.
    pub flagged_count: u64,
    pub flagged: Vec<FlaggedClient>,
    /// Which samples the limit rests on, and the clients separated from them.
    pub baseline: BaselineSummary,
    pub warnings: Vec<String>,
}

impl Recommendation {
    /// The limit as a [`Limit`].
    pub fn as_limit(&self) -> Limit {
        Limit {
            requests: self.limit,
            window: Window::from_secs(self.window_s).expect("window is positive"),
        }
    }
}

/// Recommends a limit for `stats` on the literal baseline (every sample);
/// `None` when there is no traffic to rest on.
pub fn recommend(
    table: &EventTable,
    stats: &ScopeStats,
    window: Window,
    multiplier: f64,
) -> Option<Recommendation> {
    let baseline = ScopeBaseline::literal(BaselineRule::All, stats.per_window);
    recommend_on(table, stats, &baseline, window, multiplier)
}

/// `ceil(multiplier × basis)`, at least 1, with the multiplier read as the
/// shortest decimal that stands for it (`4.4`, not the binary
/// 4.4000000000000004 that `--multiplier 4.4` holds), so that 4.4 × 25 is
/// 110 as written, not the 111 that rounding the float product up gives
/// (found by review). Products too large for that fall back to the float.
fn limit_at(multiplier: f64, basis: u64) -> u64 {
    let decimal = || -> Option<u64> {
        let text = multiplier.to_string();
        let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
        let digits: u128 = format!("{whole}{fraction}").parse().ok()?;
        let scale = 10u128.checked_pow(u32::try_from(fraction.len()).ok()?)?;
        u64::try_from(digits.checked_mul(u128::from(basis))?.div_ceil(scale)).ok()
    };
    decimal()
        .unwrap_or_else(|| (multiplier * basis as f64).ceil() as u64)
        .max(1)
}

/// Recommends a limit for `stats` resting on `baseline` (formed from the same
/// scope); `None` when there is no traffic to rest on.
pub fn recommend_on(
    table: &EventTable,
    stats: &ScopeStats,
    baseline: &ScopeBaseline,
    window: Window,
    multiplier: f64,
) -> Option<Recommendation> {
    let rests_on = baseline.per_window;
    let basis = rests_on.p999;
    if basis == 0 || !(multiplier.is_finite() && multiplier > 0.0) {
        return None;
    }
    let limit_at = |m: f64| limit_at(m, basis);
    let clients_over =
        |limit: u64| stats.peaks.iter().filter(|p| p.peak_window > limit).count() as u64;
    let limit = limit_at(multiplier);

    let mut alternatives: Vec<Alternative> = ALTERNATIVE_MULTIPLIERS
        .iter()
        .chain(std::iter::once(&multiplier))
        .map(|&m| Alternative {
            multiplier: m,
            limit: limit_at(m),
            clients_over: clients_over(limit_at(m)),
        })
        .collect();
    alternatives.sort_by(|a, b| a.multiplier.total_cmp(&b.multiplier));
    alternatives.dedup_by(|a, b| a.multiplier == b.multiplier);

    let mut flagged: Vec<_> = stats
        .peaks
        .iter()
        .filter(|p| p.peak_window > limit)
        .collect();
    flagged.sort_by(|a, b| {
        b.peak_window
            .cmp(&a.peak_window)
            .then(b.requests.cmp(&a.requests))
    });
    let normal_peak_second = stats
        .peaks
        .iter()
        .filter(|p| p.peak_window <= limit && !baseline.is_separated(p.client))
        .map(|p| p.peak_second)
        .max()
        .unwrap_or(0);

    let secs = u64::from(window.secs());
    // Saturating: a huge --multiplier gives a limit near u64::MAX.
    let burst_floor = BURST_FLOOR_SECONDS.saturating_mul(limit).div_ceil(secs);
    let burst = normal_peak_second.max(burst_floor);
    let mut warnings = Vec::new();
    if burst.saturating_mul(secs) > BURST_WARN_SECONDS.saturating_mul(limit) {
        warnings.push(format!(
            "burst {burst} is more than {BURST_WARN_SECONDS} seconds of the average rate ({:.2}/s): a client could send a long spike at once; check the peak-second clients",
            limit as f64 / secs as f64
        ));
    }
    let p99 = rests_on.p99;
    if p99 > 0 && basis > STEEP_TAIL_RATIO * p99 {
        warnings.push(format!(
            "the tail is steep (per-window p99.9 {basis} is over {STEEP_TAIL_RATIO}x p99 {p99}): a few clients may make it; review the top clients and --exclude runaway loops"
        ));
    }
    if rests_on.p999_is_thin() {
        warnings.push(format!(
            "p99.9 rests on {} (fewer than 1000): the limit is a rough guide; analyze a longer period",
            counted(rests_on.samples, "sample")
        ));
    }
    Some(Recommendation {
        limit,
        window_s: window.secs(),
        rate: Limit {
            requests: limit,
            window,
        }
        .to_string(),
        burst,
        multiplier,
        basis_p999: basis,
        thin_basis: rests_on.p999_is_thin(),
        normal_peak_second,
        burst_floor,
        alternatives,
        flagged_count: flagged.len() as u64,
        flagged: flagged
            .into_iter()
            .take(FLAGGED_LISTED)
            .map(|p| FlaggedClient {
                client: table.clients.name(p.client).to_string(),
                requests: p.requests,
                peak_window: p.peak_window,
                peak_second: p.peak_second,
            })
            .collect(),
        baseline: BaselineSummary::new(table, baseline, window, limit),
        warnings,
    })
}

#[cfg(test)]
mod tests;
