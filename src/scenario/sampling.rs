//! Estimates for all clients from a replay of a key sample (`simulate --events
//! sample.parquet --key-sample-rate P`).
//!
//! Limiters keep state per client key, so clients are independent: every
//! decision about a sampled client is exactly what the full replay decides.
//! What a sample cannot give exactly are totals over all clients. The sample
//! of `rlctl sql --sample-keys` has two strata: the heaviest clients (`certain`
//! = 1: top peak window and peak second), taken whole and counted as they are,
//! and the others, each kept with probability P (a hash of its key). So, with
//! sums over the certain clients C and the hash-sampled clients S:
//!
//! - a total (requests, rejected) is Σ_C y + Σ_S y / P, with the
//!   Horvitz–Thompson standard error sqrt((1 − P) · Σ_S y²) / P;
//! - the reject rate is the ratio of the estimated rejected and requests, with
//!   the linearised standard error sqrt((1 − P) · Σ_S e²) / P / requests, where
//!   e = rejected − rate · requests of each client of S;
//! - the clients are |C| + |S| / P (standard error sqrt((1 − P) · |S|) / P);
//!   the clients hit are the certain ones hit plus the hit share of S (a Wilson
//!   score interval) times S's estimated size; the share of clients hit takes
//!   the widest combination of both intervals.
//!
//! Intervals are 95% (normal approximation: ± 1.96 standard errors, clamped at
//! 0 and at the rate's bounds). They assume the hash-sampled clients stand for
//! the clients left out; heavy clients outside the certain stratum (raise
//! `--sample-top`) or few sampled clients make them wide or, at worst, wrong.

use serde::Serialize;

use super::execute::ScenarioResult;
use crate::events::EventTable;

/// The z value of a two-sided 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// An estimate with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    fn normal(estimate: f64, se: f64, floor: f64, ceiling: f64) -> Self {
        Estimate {
            estimate,
            low: (estimate - Z95 * se).max(floor),
            high: (estimate + Z95 * se).min(ceiling),
        }
    }

    /// True when `value` lies in the interval.
    pub fn covers(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}

/// One scenario's estimates for all clients.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioEstimate {
    pub scenario: String,
    /// Clients in the sample.
    pub sampled_clients: u64,
    /// Of them, taken whole whatever their hash (the heaviest).
    pub certain_clients: u64,
    pub requests: Estimate,
    pub rejected: Estimate,
    pub reject_rate: Estimate,
    /// Clients: the certain ones plus the hash-sampled ones / rate.
    pub clients: Estimate,
    pub clients_rejected: Estimate,
    pub clients_rejected_share: Estimate,
}

/// What `sampling` holds in the JSON report.
#[derive(Debug, Clone, Serialize)]
pub struct Sampling {
    pub key_sample_rate: f64,
    pub confidence: f64,
    pub note: &'static str,
    pub scenarios: Vec<ScenarioEstimate>,
}

/// The sentence every sampled report carries.
pub const NOTE: &str = "a sample of client keys: each sampled client's decisions are exact (limiters keep state per client, so clients are independent); totals and rates for all clients are estimates with 95% intervals";

/// The Wilson score interval of `k` successes in `n` trials.
pub fn wilson(k: u64, n: u64) -> Estimate {
    if n == 0 {
        return Estimate {
            estimate: 0.0,
            low: 0.0,
            high: 1.0,
        };
    }
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z95 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Estimate {
        estimate: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    }
}

/// One sampled client under a scenario.
#[derive(Debug, Clone, Copy, Default)]
struct ClientTally {
    requests: f64,
    rejected: f64,
    certain: bool,
}

/// Per sampled client: its requests and rejections under `allowed`.
fn per_client(table: &EventTable, allowed: &[bool], certain: &[bool]) -> Vec<ClientTally> {
    let mut tally = vec![ClientTally::default(); table.clients.len()];
    for (i, &ok) in allowed.iter().enumerate() {
        let t = &mut tally[table.client[i] as usize];
        t.requests += 1.0;
        t.rejected += if ok { 0.0 } else { 1.0 };
    }
    for (t, &c) in tally.iter_mut().zip(certain) {
        t.certain = c;
    }
    tally.retain(|t| t.requests > 0.0);
    tally
}

/// Estimates of one scenario's totals for all clients, from a sample taken at
/// `rate` (`certain` per client id: taken whole).
pub fn estimate(
    table: &EventTable,
    result: &ScenarioResult,
    rate: f64,
    certain: &[bool],
) -> ScenarioEstimate {
    let clients = per_client(table, &result.allowed, certain);
    let fpc = (1.0 - rate).max(0.0);
    let (whole, hashed): (Vec<ClientTally>, Vec<ClientTally>) =
        clients.iter().partition(|c| c.certain);
    let sum =
        |set: &[ClientTally], pick: fn(&ClientTally) -> f64| -> f64 { set.iter().map(pick).sum() };
    let total = |pick: fn(&ClientTally) -> f64| {
        let squares: f64 = hashed.iter().map(|c| pick(c).powi(2)).sum();
        Estimate::normal(
            sum(&whole, pick) + sum(&hashed, pick) / rate,
            (fpc * squares).sqrt() / rate,
            0.0,
            f64::INFINITY,
        )
    };
    let requests = total(|c| c.requests);
    let rejected = total(|c| c.rejected);
    let ratio = if requests.estimate > 0.0 {
        rejected.estimate / requests.estimate
    } else {
        0.0
    };
    let residuals: f64 = hashed
        .iter()
        .map(|c| (c.rejected - ratio * c.requests).powi(2))
        .sum();
    let ratio_se = if requests.estimate > 0.0 {
        (fpc * residuals).sqrt() / rate / requests.estimate
    } else {
        0.0
    };
    let hit = |set: &[ClientTally]| set.iter().filter(|c| c.rejected > 0.0).count() as u64;
    let share = wilson(hit(&hashed), hashed.len() as u64);
    let whole_n = whole.len() as f64;
    let hashed_n = hashed.len() as f64;
    let scaled = Estimate::normal(
        hashed_n / rate,
        (fpc * hashed_n).sqrt() / rate,
        0.0,
        f64::INFINITY,
    );
    let clients_estimate = Estimate {
        estimate: whole_n + scaled.estimate,
        low: whole_n + scaled.low,
        high: whole_n + scaled.high,
    };
    let hit_whole = hit(&whole) as f64;
    let clients_rejected = Estimate {
        estimate: hit_whole + share.estimate * scaled.estimate,
        low: hit_whole + share.low * scaled.estimate,
        high: hit_whole + share.high * scaled.estimate,
    };
    // The share of all clients hit: (hit_C + q · M) / (|C| + M) at every corner
    // of the intervals of q (the hit share of S) and M (S's estimated size).
    let share_at = |q: f64, m: f64| {
        let all = whole_n + m;
        if all > 0.0 {
            (hit_whole + q * m) / all
        } else {
            0.0
        }
    };
    let corners =
        [scaled.low, scaled.high].map(|m| (share_at(share.low, m), share_at(share.high, m)));
    let clients_rejected_share = Estimate {
        estimate: share_at(share.estimate, scaled.estimate),
        low: corners.iter().map(|c| c.0).fold(1.0, f64::min),
        high: corners.iter().map(|c| c.1).fold(0.0, f64::max),
    };
    ScenarioEstimate {
        scenario: result.scenario.clone(),
        sampled_clients: clients.len() as u64,
        certain_clients: whole.len() as u64,
        requests,
        rejected,
        reject_rate: Estimate::normal(ratio, ratio_se, 0.0, 1.0),
        clients: clients_estimate,
        clients_rejected,
        clients_rejected_share,
    }
}

/// The estimates of every scenario.
pub fn sampling(
    table: &EventTable,
    results: &[ScenarioResult],
    rate: f64,
    certain: &[bool],
) -> Sampling {
    Sampling {
        key_sample_rate: rate,
        confidence: 0.95,
        note: NOTE,
        scenarios: results
            .iter()
            .map(|r| estimate(table, r, rate, certain))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::simulate::Totals;

    #[test]
    fn wilson_by_hand() {
        // 2 of 10: centre (0.2 + 1.9208/10) / 1.38415 = 0.28327; half 0.22700.
        let w = wilson(2, 10);
        assert!((w.low - 0.05668).abs() < 1e-4, "{w:?}");
        assert!((w.high - 0.50984).abs() < 1e-4, "{w:?}");
        assert_eq!(wilson(0, 0).high, 1.0);
        assert_eq!(wilson(0, 5).low, 0.0);
    }

    #[test]
    fn estimates_scale_totals_and_keep_rates() {
        // Two sampled clients at rate 0.5: a sends 4 (1 rejected), b sends 2 (none).
        let mut t = EventTable::default();
        let (a, b) = (t.clients.intern("a"), t.clients.intern("b"));
        for (ts, c) in [(0, a), (1, a), (2, b), (3, a), (4, b), (5, a)] {
            t.push(Event {
                ts,
                client: c,
                ..Event::default()
            });
        }
        let allowed = vec![true, true, true, true, true, false];
        let result = ScenarioResult {
            scenario: "x".into(),
            totals: Totals {
                requests: 6,
                allowed: 5,
                rejected: 1,
                reject_rate: 1.0 / 6.0,
                clients: 2,
                clients_rejected: 1,
                clients_rejected_share: 0.5,
                rejected_by_endpoint: vec![],
                top_rejected_clients: vec![],
                rejects_per_minute: vec![],
                first_reject: Some(5),
                last_reject: Some(5),
            },
            rules: vec![],
            allowed,
        };
        let e = estimate(&t, &result, 0.5, &[false, false]);
        assert_eq!(e.requests.estimate, 12.0);
        assert_eq!(e.rejected.estimate, 2.0);
        // SE of requests: sqrt(0.5 * (16 + 4)) / 0.5 = sqrt(10) * 2.
        let se = (10.0f64).sqrt() * 2.0;
        assert!((e.requests.high - (12.0 + Z95 * se)).abs() < 1e-9);
        assert!((e.reject_rate.estimate - 1.0 / 6.0).abs() < 1e-12);
        // residuals: a 1 - 4/6, b 0 - 2/6 → (1/3)² + (1/3)²; SE = sqrt(0.5 * 2/9) / 6.
        let rate_se = (0.5f64 * 2.0 / 9.0).sqrt() / 6.0;
        assert!((e.reject_rate.high - (1.0 / 6.0 + Z95 * rate_se)).abs() < 1e-12);
        assert_eq!((e.sampled_clients, e.clients.estimate), (2, 4.0));
        assert_eq!(e.clients_rejected.estimate, 2.0);
        let full = estimate(&t, &result, 1.0, &[false, false]);
        assert_eq!(
            (full.rejected.low, full.rejected.high),
            (1.0, 1.0),
            "a full table has no sampling error"
        );
        // a taken whole: its 4 requests and 1 rejection count once, b's are scaled.
        let strata = estimate(&t, &result, 0.5, &[true, false]);
        assert_eq!(strata.requests.estimate, 4.0 + 2.0 / 0.5);
        assert_eq!(strata.rejected.estimate, 1.0);
        assert_eq!((strata.rejected.low, strata.rejected.high), (1.0, 1.0));
        assert_eq!((strata.certain_clients, strata.clients.estimate), (1, 3.0));
        assert_eq!(strata.clients_rejected.estimate, 1.0);
    }
}
