//! Traefik's RateLimit middleware as `rlctl export --target traefik` configures
//! it: `average: L`, `period: W`, `burst: C`, one bucket per source.
//!
//! Traefik (`pkg/middlewares/ratelimiter/rate_limiter.go`, `in_memory_limiter.go`,
//! `ttlmap/ttlmap.go`):
//! - `rate = float64(average·1e9) / float64(period_ns)` requests per second;
//!   `maxDelay` = 500 ms when rate < 1, else `1 s / (int(rate)·2)` (integer ns);
//! - each request `Reserve()`s one token of the source's `rate.Limiter`; when
//!   the reservation's delay exceeds `maxDelay` it is cancelled and the request
//!   gets a 429, else the request waits `delay` and is served (delayed, not
//!   rejected);
//! - a source's bucket lives in a TTL map refreshed by every request (rejected
//!   ones too): `ttl` = 2 s when rate ≥ 1, else `1 + int(1/rate)` s, with expiry
//!   `Unix(now + ttl)` in whole seconds, expired once `expiry ≤ Unix(now)`; an
//!   expired (or new) source gets a new, full bucket.
//!
//! golang.org/x/time/rate (`rate/rate.go`: `NewLimiter`, `reserveN`, `advance`,
//! `CancelAt`, `durationFromTokens`, `tokensFromDuration`), in float64 tokens and
//! integer nanoseconds: `advance(t)` = `min(burst, tokens + (t − last).Seconds()·rate)`;
//! a reservation takes one token (`tokens − 1`, possibly negative) and waits
//! `Duration((−tokens / rate)·1e9)` when negative; `last = t`. Cancelling at the
//! same instant gives the token back: `tokens = min(burst, (tokens − 1) + 1)`.
//!
//! One model is one middleware on one router: Traefik builds each router's
//! middlewares anew (`buildHTTPHandler` in `pkg/server/router/router.go`), so
//! a rule on several routers has a bucket map on each; the routers are the
//! exported ones (`crate::scenario::traefik`).
//!
//! Several rules: Traefik chains one middleware per rule, and a middleware
//! that rejects stops the chain, so the ones after it never see the request
//! while the ones before it keep their reservation. The model takes every
//! other rule's rejection as coming first (this middleware's state is left
//! alone); with overlapping rules that can differ from Traefik's order.
//!
//! Not reproduced: the 65 536-source capacity of the TTL map (a full map evicts
//! the source closest to expiry), and the few microseconds between the
//! reservation and its cancellation.

use super::bounds::capacity;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

const SECOND_NS: i64 = 1_000_000_000;

/// One middleware's limiter settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Bucket {
    average: u64,
    period_s: u64,
    /// Requests per second (`rate.Limit`).
    rate: f64,
    burst: u64,
    max_delay_ns: i64,
    ttl_s: i64,
}

/// One source's `rate.Limiter` and its TTL-map expiry (Unix seconds).
#[derive(Debug, Clone, Default)]
pub struct State {
    tokens: f64,
    last_ns: i64,
    expiry_s: i64,
    seen: bool,
}

/// What one request does to a source.
struct Outcome {
    admitted: bool,
    delay_ns: i64,
    after: State,
}

impl Bucket {
    /// The middleware for `spec` (`None` when the numbers overflow Go's int64).
    pub fn of(spec: &AlgorithmSpec) -> Option<Bucket> {
        let average = spec.limit.requests;
        let period_s = u64::from(spec.limit.window.secs());
        let average_ns = i64::try_from(average).ok()?.checked_mul(SECOND_NS)?;
        let period_ns = i64::try_from(period_s).ok()?.checked_mul(SECOND_NS)?;
        let rate = average_ns as f64 / period_ns as f64;
        let max_delay_ns = if rate < 1.0 {
            500_000_000
        } else {
            SECOND_NS / (rate as i64).checked_mul(2)?
        };
        let ttl_s = if rate >= 1.0 {
            2
        } else {
            1 + (1.0 / rate) as i64
        };
        let burst = capacity(spec).max(1);
        i32::try_from(burst).ok()?;
        Some(Bucket {
            average,
            period_s,
            rate,
            burst,
            max_delay_ns,
            ttl_s,
        })
    }

    /// The bucket size.
    pub fn burst(&self) -> u64 {
        self.burst
    }

    /// Seconds an idle source's bucket lives in the TTL map.
    pub fn ttl_secs(&self) -> i64 {
        self.ttl_s
    }

    /// `tokensFromDuration`: `d.Seconds()·rate`, with Go's `Seconds()`.
    fn tokens_from(&self, d_ns: i64) -> f64 {
        let (sec, nsec) = (d_ns / SECOND_NS, d_ns % SECOND_NS);
        (sec as f64 + nsec as f64 / 1e9) * self.rate
    }

    /// One request at `t` (ms) against `state`.
    fn step(&self, state: &State, t: Millis) -> Outcome {
        let now_ns = t.saturating_mul(1_000_000);
        let now_s = t.div_euclid(1000);
        let live = state.seen && state.expiry_s > now_s;
        let burst = self.burst as f64;
        // advance(t): a new limiter's zero `last` is centuries back: full.
        let tokens = if live {
            let last = state.last_ns.min(now_ns);
            (state.tokens + self.tokens_from(now_ns - last)).min(burst)
        } else {
            burst
        };
        let left = tokens - 1.0;
        let delay_ns = if left < 0.0 {
            ((-left / self.rate) * 1e9) as i64
        } else {
            0
        };
        let admitted = delay_ns <= self.max_delay_ns;
        let tokens = if admitted {
            left
        } else {
            (left + 1.0).min(burst)
        };
        Outcome {
            admitted,
            delay_ns,
            after: State {
                tokens,
                last_ns: now_ns,
                expiry_s: (now_ns + self.ttl_s * SECOND_NS).div_euclid(SECOND_NS),
                seen: true,
            },
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "rateLimit average={} period={}s burst={} (max delay {} ms, idle buckets expire after {} s)",
            self.average,
            self.period_s,
            self.burst,
            self.max_delay_ns as f64 / 1e6,
            self.ttl_s
        )
    }
}

impl Algorithm for Bucket {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        self.step(state, t).admitted
    }

    /// The delay, rounded up to whole milliseconds.
    fn record(&self, state: &mut State, t: Millis) -> u64 {
        let outcome = self.step(state, t);
        *state = outcome.after;
        (outcome.delay_ns.max(0) as u64).div_ceil(1_000_000)
    }

    /// A request this middleware rejects still refreshes the source's expiry
    /// (and its cancelled reservation rounds the tokens); one another rule
    /// rejects is taken as stopped before this middleware, leaving it alone.
    fn rejected(&self, state: &mut State, t: Millis) {
        let outcome = self.step(state, t);
        if !outcome.admitted {
            *state = outcome.after;
        }
    }

    /// Once the TTL map's entry has expired, the next request (and every
    /// later one) gets a new, full bucket, as an unseen source does.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        !state.seen || state.expiry_s <= t.div_euclid(1000)
    }

    fn instant_capacity(&self) -> u64 {
        // The burst, plus the requests whose wait stays within the max delay.
        let waiting = (self.max_delay_ns as f64 / 1e9 * self.rate) as u64;
        self.burst.saturating_add(waiting)
    }

    fn burst_convention(&self) -> String {
        format!(
            "Traefik bucket of {}: admits {} at once, then delays requests up to {} ms",
            self.burst,
            self.burst,
            self.max_delay_ns as f64 / 1e6
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, traefik::Traefik};
    use crate::policy::Policy;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{decisions, expect};

    fn bucket(limit: &str, burst: u64) -> Bucket {
        Bucket::of(&AlgorithmSpec {
            burst: Some(burst),
            ..AlgorithmSpec::new(AlgorithmKind::TokenBucket, limit.parse().unwrap())
        })
        .unwrap()
    }

    /// Decisions and delays (ms) of one source.
    fn trace(alg: &Bucket, times: &[Millis]) -> Vec<(bool, u64)> {
        let mut state = State::default();
        times
            .iter()
            .map(|&t| {
                if alg.allows(&mut state, t) {
                    (true, alg.record(&mut state, t))
                } else {
                    alg.rejected(&mut state, t);
                    (false, 0)
                }
            })
            .collect()
    }

    #[test]
    fn settings_match_the_exported_text() {
        let rules = Policy::parse("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7", "p").unwrap();
        let out = Traefik.render(&rules, &ExportOptions::default()).unwrap();
        let b = Bucket::of(&rules[0].spec).unwrap();
        let yaml = format!(
            "average: {}\n        period: 1m\n        burst: {}\n",
            b.average, b.burst
        );
        assert!(out.contains(&yaml), "{out}");
        // 40/60 s < 1 per second: max delay 500 ms, ttl 1 + int(1.5) = 2 s.
        assert_eq!((b.max_delay_ns, b.ttl_s), (500_000_000, 2));
        let fast = bucket("10/1s", 5);
        // 1 s / (10·2) = 50 ms.
        assert_eq!((fast.max_delay_ns, fast.ttl_s), (50_000_000, 2));
    }

    #[test]
    fn small_delays_are_served_late_not_rejected() {
        // 10/s, burst 2, max delay 50 ms. t=0: 2 tokens → 1 → 0 (no delay).
        //   t=0   third: tokens −1, wait 0.1 s = 100 ms > 50: cancelled, 429
        //   t=60  0 + 0.06·10 = 0.6 → −0.4: wait 40 ms ≤ 50: served 40 ms late
        //   t=61  −0.4 + 0.01 = −0.39 → −1.39: 139 ms: 429 (token given back)
        //   t=210 −0.39 + 1.49 = 1.1 → 0.1: served at once
        let alg = bucket("10/1s", 2);
        let got = trace(&alg, &[0, 0, 0, 60, 61, 210]);
        assert_eq!(
            got,
            vec![
                (true, 0),
                (true, 0),
                (false, 0),
                (true, 40),
                (false, 0),
                (true, 0)
            ]
        );
    }

    #[test]
    fn idle_buckets_expire_and_come_back_full() {
        // 1/1s burst 1 (rate 1, ttl 2 s, max delay 500 ms). t=0 empties the bucket.
        //   t=600: 0.6 → −0.4: wait 400 ms ≤ 500: served (bucket now −0.4)
        //   t=1100: −0.4 + 0.5 = 0.1 → −0.9: 900 ms: 429
        //   t=3000: expiry was Unix(1.1 + 2) = 3 ≤ 3: expired, new full bucket: served
        let alg = bucket("1/1s", 1);
        assert_eq!(decisions(&alg, &[0, 600, 1100, 3000]), expect("y y n y"));
        // 1/10 s, burst 1: rate 0.1, ttl 1 + int(10) = 11 s.
        //   t=0       served (0 tokens left, expiry 11)
        //   t=11_000  expiry 11 ≤ 11: expired, a new full bucket: served (expiry 22)
        //   t=11_100  0.01 → −0.99: 9.9 s > 500 ms: 429 (expiry 22)
        //   t=20_000  alive: 0.01 + 0.89 = 0.9 → −0.1: 1 s: 429 (expiry 31)
        //   t=33_200  expired: full again: served
        let slow = bucket("1/10s", 1);
        assert_eq!(slow.ttl_s, 11);
        assert_eq!(
            decisions(&slow, &[0, 11_000, 11_100, 20_000, 33_200]),
            expect("y y n n y")
        );
    }

    #[test]
    fn rejected_requests_refresh_the_expiry() {
        // rate 1/10 s (ttl 11 s): rejected requests every 10 s keep the source
        // alive, so it never comes back full; a gap of 11 s lets it expire.
        let slow = bucket("1/10s", 1);
        let mut state = State::default();
        assert!(slow.decide(&mut state, 0));
        // t=5000: 0.5 → −0.5 → 5 s wait: 429 (state refreshed: expiry 16).
        assert!(!slow.decide(&mut state, 5_000));
        assert_eq!(state.expiry_s, 16);
        // t=14_000: tokens 0.5 + 0.9 = 1.4 → min 1 → 0: served.
        assert!(slow.decide(&mut state, 14_000));
    }
}
