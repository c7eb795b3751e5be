//! Limit recommendations from measured traffic.
//!
//! - limit = ceil(multiplier × per_window p99.9), with 3× and 5× shown beside it
//!   and how many clients each would touch (clients whose peak window exceeds it);
//! - burst = the largest peak second among clients that are not flagged, and at
//!   least 10 seconds of the limit's average rate; a warning when it exceeds 30
//!   seconds of that rate;
//! - flagged clients: those whose peak window exceeds the recommended limit, for a
//!   person to review (a runaway loop to exclude, or a heavy user to allow).

use serde::Serialize;

use crate::events::EventTable;
use crate::stats::ScopeStats;
use crate::units::{Limit, Window};

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

/// Recommends a limit for `stats`; `None` when there is no traffic to rest on.
pub fn recommend(
    table: &EventTable,
    stats: &ScopeStats,
    window: Window,
    multiplier: f64,
) -> Option<Recommendation> {
    let basis = stats.per_window.p999;
    if basis == 0 || !(multiplier.is_finite() && multiplier > 0.0) {
        return None;
    }
    let limit_at = |m: f64| (m * basis as f64).ceil().max(1.0) as u64;
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
        .filter(|p| p.peak_window <= limit)
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
    let p99 = stats.per_window.p99;
    if p99 > 0 && basis > STEEP_TAIL_RATIO * p99 {
        warnings.push(format!(
            "the tail is steep (per-window p99.9 {basis} is over {STEEP_TAIL_RATIO}x p99 {p99}): a few clients may make it; review the top clients and --exclude runaway loops"
        ));
    }
    if stats.per_window.p999_is_thin() {
        warnings.push(format!(
            "p99.9 rests on {} samples (fewer than 1000): the limit is a rough guide; analyze a longer period",
            stats.per_window.samples
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
        thin_basis: stats.per_window.p999_is_thin(),
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
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::stats::{StatsSettings, analyze};

    /// 1000 quiet clients with 1..=10 requests in one minute (spread over seconds),
    /// and one runaway with 500 requests in a minute, 50 of them in one second.
    fn table() -> EventTable {
        let mut t = EventTable::default();
        let e = t.endpoints.intern("GET /x");
        for c in 0..1000u32 {
            let id = t.clients.intern(&format!("c{c}"));
            for r in 0..(c % 10 + 1) {
                t.push(Event {
                    ts: i64::from(r) * 5_000,
                    client: id,
                    endpoint: e,
                    status: 200,
                    ..Event::default()
                });
            }
        }
        let bad = t.clients.intern("runaway");
        for r in 0..500 {
            let ts = if r < 50 { 1_000 } else { 2_000 + r * 100 };
            t.push(Event {
                ts,
                client: bad,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
        }
        t.sort_by_time();
        t
    }

    #[test]
    fn limit_burst_and_flags_by_hand() {
        let t = table();
        let s = StatsSettings {
            window: "1m".parse().unwrap(),
            top: 5,
            exclude: vec![],
            keep_counts: false,
        };
        let a = analyze(&t, &s);
        // 1001 samples: 100 each of 1..=10, plus 500. rank ceil(0.999*1001) = 1000 → 10.
        assert_eq!(a.overall.per_window.p999, 10);
        let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
        assert_eq!((r.limit, r.rate.as_str()), (40, "40/1m"));
        // quiet clients peak at 1 per second; floor = ceil(10 s * 40 / 60 s) = 7.
        assert_eq!((r.normal_peak_second, r.burst_floor, r.burst), (1, 7, 7));
        assert_eq!(r.flagged_count, 1);
        assert_eq!(r.flagged[0].client, "runaway");
        assert_eq!(r.flagged[0].peak_second, 50);
        let limits: Vec<(u64, u64)> = r
            .alternatives
            .iter()
            .map(|a| (a.limit, a.clients_over))
            .collect();
        assert_eq!(limits, vec![(30, 1), (40, 1), (50, 1)]);
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    }

    #[test]
    fn a_huge_multiplier_saturates_instead_of_overflowing() {
        // Found by review: --multiplier 1e300 overflowed the burst arithmetic.
        let t = table();
        let s = StatsSettings {
            window: "1m".parse().unwrap(),
            top: 5,
            exclude: vec![],
            keep_counts: false,
        };
        let a = analyze(&t, &s);
        let r = recommend(&t, &a.overall, s.window, 1e300).unwrap();
        assert_eq!(r.limit, u64::MAX);
        assert_eq!(r.burst_floor, u64::MAX.div_ceil(60));
        assert_eq!(r.flagged_count, 0);
    }

    #[test]
    fn excluding_the_runaway_changes_nothing_but_the_flag() {
        let t = table();
        let s = StatsSettings {
            window: "1m".parse().unwrap(),
            top: 5,
            exclude: vec!["runaway".into()],
            keep_counts: false,
        };
        let a = analyze(&t, &s);
        let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
        assert_eq!((r.limit, r.flagged_count), (40, 0));
    }

    #[test]
    fn a_steep_tail_is_called_out() {
        let mut t = EventTable::default();
        let e = t.endpoints.intern("GET /x");
        // 998 clients with one request and two with 100: of 1000 samples, p99 is the
        // 990th (1) and p99.9 the 999th (100).
        for c in 0..998u32 {
            let id = t.clients.intern(&format!("c{c}"));
            t.push(Event {
                ts: 0,
                client: id,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
        }
        for heavy in ["h1", "h2"] {
            let id = t.clients.intern(heavy);
            for r in 0..100 {
                t.push(Event {
                    ts: r * 100,
                    client: id,
                    endpoint: e,
                    status: 200,
                    ..Event::default()
                });
            }
        }
        t.sort_by_time();
        let s = StatsSettings {
            window: "1m".parse().unwrap(),
            top: 5,
            exclude: vec![],
            keep_counts: false,
        };
        let a = analyze(&t, &s);
        assert_eq!(
            (a.overall.per_window.p99, a.overall.per_window.p999),
            (1, 100)
        );
        let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
        assert!(
            r.warnings.iter().any(|w| w.contains("tail is steep")),
            "{:?}",
            r.warnings
        );
    }

    #[test]
    fn no_traffic_no_recommendation() {
        let t = EventTable::default();
        let s = StatsSettings {
            window: "1m".parse().unwrap(),
            top: 5,
            exclude: vec![],
            keep_counts: false,
        };
        assert!(recommend(&t, &analyze(&t, &s).overall, s.window, 4.0).is_none());
    }
}
