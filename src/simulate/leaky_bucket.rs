//! Leaky bucket as nginx `limit_req` implements it, bit for bit
//! (`ngx_http_limit_req_lookup` / `ngx_http_limit_req_account`).
//!
//! Units are nginx's: rate in milli-requests per second, `rate = L·1000 / W_secs`
//! truncated (so `10r/m` is 166, not 166.67), excess and burst in milli-requests
//! (`burst_scaled = B·1000`). Per key, with `ms = t − last`:
//! - `ms < −60000` → `ms = 1`; else `ms < 0` → `ms = 0` (clock went backwards);
//! - `excess = lr_excess − rate·ms/1000 + 1000` in `i64` (`/` truncates like C),
//!   then `excess = max(excess, 0)`;
//! - reject when `excess > burst_scaled` (state unchanged); otherwise store the
//!   excess, and `last = t` only when `ms ≠ 0`.
//!
//! A key's first request is admitted with excess 0 and `last = t`. With B = 0 (the
//! default, as in nginx) it admits one request per 1000/rate seconds; from empty it
//! admits B + 1 at once.
//!
//! Delays (`delay=N` or `nodelay`) do not change decisions; an admitted request
//! with `excess > N·1000` would wait `(excess − N·1000)·1000/rate` ms (0 with
//! `nodelay`). Without either, N = 0.
//!
//! One nginx behaviour is not reproduced because it depends on other keys and on
//! zone memory: nginx may free a node that has been idle for at least 60 s and has
//! drained, when the zone allocates a node for another key. We never free a node.
//! A freed node restarts at excess 0 where a kept one restarts at
//! `max(0, excess − drained + 1000)`; these differ only when 60 s drain less than
//! `(B + 1)·1000`, i.e. for zones slower than B + 1 requests per minute.

use super::Algorithm;
use super::spec::Delay;
use crate::units::{Limit, Millis};

/// nginx `limit_req` with `rate`, `burst` and `delay`/`nodelay`.
#[derive(Debug, Clone)]
pub struct LeakyBucket {
    burst: u64,
    /// Milli-requests per second.
    rate: i64,
    /// B · 1000.
    burst_scaled: i64,
    /// N · 1000 for `delay=N`; `None` for `nodelay`.
    delay_scaled: Option<i64>,
}

/// nginx's node: `excess` in milli-requests and `last` in ms; `seen` is false
/// until the key's first request (no node yet).
#[derive(Debug, Clone, Default)]
pub struct State {
    excess: i64,
    last: Millis,
    seen: bool,
}

impl LeakyBucket {
    /// nginx's zone rate and `burst`/`delay` for a limit of L per W; `None` when the
    /// scaled values do not fit in 64 bits.
    pub fn new(limit: Limit, burst: u64, delay: Delay) -> Option<Self> {
        let per_window = i64::try_from(limit.requests).ok()?.checked_mul(1000)?;
        let scale = |n: u64| i64::try_from(n).ok()?.checked_mul(1000);
        let delay_scaled = match delay {
            Delay::NoDelay => None,
            Delay::After(n) => Some(scale(n)?),
        };
        Some(LeakyBucket {
            burst,
            rate: per_window / i64::from(limit.window.secs()),
            burst_scaled: scale(burst)?,
            delay_scaled,
        })
    }

    /// The zone rate in milli-requests per second (0 when nginx cannot express it).
    pub fn rate(&self) -> i64 {
        self.rate
    }

    /// nginx's clamped `ms` and the excess a request at `t` would bring the key to.
    fn step(&self, state: &State, t: Millis) -> (i64, i64) {
        if !state.seen {
            return (0, 0);
        }
        let ms = match t.saturating_sub(state.last) {
            ms if ms < -60_000 => 1,
            ms if ms < 0 => 0,
            ms => ms,
        };
        let drained = self.rate.saturating_mul(ms) / 1000;
        let excess = (state.excess - drained).saturating_add(1000).max(0);
        (ms, excess)
    }

    /// How long nginx would hold a request admitted at `excess`.
    fn delay_for(&self, excess: i64) -> u64 {
        match self.delay_scaled {
            Some(threshold) if excess > threshold => {
                ((excess - threshold) * 1000 / self.rate) as u64
            }
            _ => 0,
        }
    }
}

impl Algorithm for LeakyBucket {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        self.step(state, t).1 <= self.burst_scaled
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        let (ms, excess) = self.step(state, t);
        if !state.seen || ms != 0 {
            state.last = t;
        }
        state.seen = true;
        state.excess = excess;
        self.delay_for(excess)
    }

    /// The node has drained so far that the next request gets excess 0, as a
    /// key's first request does (nginx counts a fresh node's first request as
    /// 0 and a kept node's as `excess − drained + 1000`, so drained must cover
    /// the excess and one more request).
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        let ms = t.saturating_sub(state.last).max(0);
        !state.seen || self.rate.saturating_mul(ms) / 1000 >= state.excess.saturating_add(1000)
    }

    fn instant_capacity(&self) -> u64 {
        self.burst + 1
    }

    fn burst_convention(&self) -> String {
        format!(
            "nginx limit_req burst={}: admits B+1 at once (the request itself plus B in the queue)",
            self.burst
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn nginx(limit: &str, burst: u64, delay: Delay) -> LeakyBucket {
        LeakyBucket::new(limit.parse().unwrap(), burst, delay).unwrap()
    }

    /// Decisions, delays and the excess after each request.
    fn trace(alg: &LeakyBucket, times: &[Millis]) -> Vec<(bool, u64, i64)> {
        let mut state = State::default();
        times
            .iter()
            .map(|&t| {
                let allowed = alg.allows(&mut state, t);
                let delay = if allowed {
                    alg.record(&mut state, t)
                } else {
                    0
                };
                (allowed, delay, state.excess)
            })
            .collect()
    }

    #[test]
    fn rates_are_truncated_like_nginx() {
        assert_eq!(nginx("5r/s", 0, Delay::After(0)).rate(), 5000);
        assert_eq!(nginx("600/1m", 0, Delay::After(0)).rate(), 10_000);
        assert_eq!(nginx("10r/m", 0, Delay::After(0)).rate(), 166);
        assert_eq!(nginx("1r/m", 0, Delay::After(0)).rate(), 16);
        assert_eq!(nginx("1/1h", 0, Delay::After(0)).rate(), 0);
    }

    #[test]
    fn full_bucket_then_requests_16ms_apart() {
        // 5r/s (rate 5000), burst=3 (3000). Drain per 16 ms: 5000·16/1000 = 80.
        //   t=0  first request: excess 0, last 0                       admitted
        //   t=0  ms 0: 0 + 1000 = 1000                                 admitted
        //   t=0  2000                                                  admitted
        //   t=0  3000 (= burst, not above it)                          admitted
        //   t=0  4000 > 3000                                           rejected
        //   t=16   ms 16:  3000 − 80 + 1000 = 3920                     rejected
        //   t=32   ms 32:  3000 − 160 + 1000 = 3840 (rejects do not move last)  rejected
        //   ... t=16k: 3000 − 80k + 1000, rejected while > 3000, i.e. k ≤ 12:
        //   t=192  ms 192: 3000 − 960 + 1000 = 3040                    rejected
        //   t=208  ms 208: 3000 − 1040 + 1000 = 2960                   admitted, last 208
        //   t=224  ms 16:  2960 − 80 + 1000 = 3880                     rejected
        //   t=240  ms 32:  2960 − 160 + 1000 = 3800                    rejected
        let alg = nginx("5r/s", 3, Delay::After(0));
        let mut times = vec![0; 5];
        times.extend((1..=15).map(|k| 16 * k));
        let got = trace(&alg, &times);
        let allowed: Vec<bool> = got.iter().map(|g| g.0).collect();
        // t=0 ×5, then t=16..192 (twelve), t=208, t=224 and t=240.
        assert_eq!(allowed, expect("yyyy n  nnnnnn nnnnnn  y nn"));
        let excess: Vec<i64> = got.iter().map(|g| g.2).collect();
        assert_eq!(&excess[..4], &[0, 1000, 2000, 3000]);
        assert_eq!(excess[4..17], [3000; 13]); // rejections leave it alone
        assert_eq!(&excess[17..], &[2960, 2960, 2960]);
        // Default delay=0: delay = excess·1000/5000 ms: 0, 200, 400, 600; t=208: 592.
        let delays: Vec<u64> = got.iter().filter(|g| g.0).map(|g| g.1).collect();
        assert_eq!(delays, vec![0, 200, 400, 600, 592]);
    }

    #[test]
    fn delay_threshold_and_nodelay() {
        // Same traffic; delay=1 (1000): (excess − 1000)·1000/5000 when above 1000:
        // 0, 0, 200, 400 and t=208: 1960·1000/5000 = 392. nodelay: all 0.
        let mut times = vec![0; 4];
        times.push(208);
        let delays = |delay| -> Vec<u64> {
            trace(&nginx("5r/s", 3, delay), &times)
                .iter()
                .map(|g| g.1)
                .collect()
        };
        assert_eq!(delays(Delay::After(1)), vec![0, 0, 200, 400, 392]);
        assert_eq!(delays(Delay::NoDelay), vec![0; 5]);
    }

    #[test]
    fn integer_drain_truncates() {
        // 10r/m: rate 166 (not 166.67), burst 0. Nominally one request per 6 s, but
        // nginx needs 166·ms/1000 ≥ 1000, i.e. ms ≥ 6024.1:
        //   t=0      first request                                        admitted
        //   t=6000   0 − 166·6000/1000 (= 996) + 1000 = 4 > 0             rejected
        //   t=6024   0 − 999 (999.98 truncated) + 1000 = 1 > 0             rejected
        //   t=6025   0 − 1000 (1000.15 truncated) + 1000 = 0               admitted, last 6025
        //   t=12049  ms 6024: 1 > 0                                        rejected
        //   t=12050  ms 6025: 0                                            admitted
        let alg = nginx("10r/m", 0, Delay::After(0));
        assert_eq!(
            decisions(&alg, &[0, 6000, 6024, 6025, 12_049, 12_050]),
            expect("y nn y n y")
        );
    }

    #[test]
    fn drain_is_measured_from_the_last_admitted_request() {
        // 10r/m (rate 166), burst=1. Admitting at t=3 restarts the clock (the 0.498
        // drained so far is truncated away); rejected requests do not.
        //   t=0     excess 0                                   admitted
        //   t=3     0 − 0 (0.498) + 1000 = 1000                admitted, last 3
        //   t=6     1000 − 0 (0.498) + 1000 = 2000 > 1000      rejected
        //   t=6027  ms 6024: 1000 − 999 + 1000 = 1001 > 1000   rejected
        //   t=6028  ms 6025: 1000 − 1000 + 1000 = 1000         admitted
        let alg = nginx("10r/m", 1, Delay::After(0));
        let got = trace(&alg, &[0, 3, 6, 6027, 6028]);
        let allowed: Vec<bool> = got.iter().map(|g| g.0).collect();
        assert_eq!(allowed, expect("yy nn y"));
        assert_eq!(got[4].2, 1000);
    }

    #[test]
    fn first_request_is_admitted_with_zero_excess() {
        // burst 0: the first request is admitted whatever the rate, the second at
        // the same ms has 1000 > 0.
        let alg = nginx("1r/m", 0, Delay::After(0));
        let got = trace(&alg, &[1_700_000_000_000, 1_700_000_000_000]);
        assert_eq!(got, vec![(true, 0, 0), (false, 0, 0)]);
    }

    #[test]
    fn clock_going_backwards() {
        // 5r/s, burst=3. State after t=100_000 (first) and t=100_000: excess 1000,
        // last 100_000.
        //   t=99_500   ms −500 → 0: 1000 + 1000 = 2000, last stays 100_000  admitted
        //   t=100_100  ms 100: 2000 − 500 + 1000 = 2500, last 100_100       admitted
        //   t=30_000   ms −70_100 < −60000 → 1: 2500 − 5 + 1000 = 3495 > 3000  rejected
        let alg = nginx("5r/s", 3, Delay::After(0));
        let mut s = State::default();
        let mut step = |t| {
            let ok = alg.allows(&mut s, t);
            if ok {
                alg.record(&mut s, t);
            }
            (ok, s.excess, s.last)
        };
        assert_eq!(step(100_000), (true, 0, 100_000));
        assert_eq!(step(100_000), (true, 1000, 100_000));
        assert_eq!(step(99_500), (true, 2000, 100_000));
        assert_eq!(step(100_100), (true, 2500, 100_100));
        assert_eq!(step(30_000), (false, 2500, 100_100));

        // A far jump back is treated as 1 ms, and since ms ≠ 0 last moves back:
        //   first at 100_000 (0); t=30_000: ms −70_000 → 1: 0 − 5 + 1000 = 995, last 30_000
        //   t=30_000: ms 0: 1995, last stays 30_000
        let mut s = State::default();
        let mut step = |t| {
            assert!(alg.allows(&mut s, t));
            alg.record(&mut s, t);
            (s.excess, s.last)
        };
        assert_eq!(step(100_000), (0, 100_000));
        assert_eq!(step(30_000), (995, 30_000));
        assert_eq!(step(30_000), (1995, 30_000));
        // Exactly −60000 is not below −60000: ms → 0, last unchanged.
        assert_eq!(step(-30_000), (2995, 30_000));
    }

    #[test]
    fn instant_capacity_is_burst_plus_one() {
        let alg = nginx("1r/s", 4, Delay::NoDelay);
        assert_eq!(alg.instant_capacity(), 5);
        assert_eq!(decisions(&alg, &[7; 6]), expect("yyyyy n"));
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&nginx("2r/s", 3, Delay::After(1)), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = nginx("1r/s", 0, Delay::NoDelay);
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        assert!(alg.decide(&mut state, 0));
        assert!(!alg.is_idle(&state, 999));
        assert!(alg.is_idle(&state, 1000));
        // A sequence with long gaps drops the state between bursts.
        assert!(check_idle_drops(&alg, &[0, 0, 1, 90_000, 90_001, 200_000]) >= 2);
    }
}
