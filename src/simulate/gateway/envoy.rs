//! Envoy's local rate limit filter as `rlctl export --target envoy` configures
//! it: per client (a wildcard descriptor), `max_tokens` = C + k − 1 and
//! `tokens_per_fill` = k every `fill_interval` (k the fewest tokens that keep
//! the interval at 50 ms or more, the interval rounded down to 50 ms).
//!
//! - Envoy ≥ 1.31 ([`Continuous`]): `AtomicTokenBucket`, no timer. The bucket is
//!   created full when the client's descriptor first appears (its time is set
//!   `max_tokens / fill_rate` seconds in the past); a request at `now` (seconds,
//!   a double) sees `min(max_tokens, (now − time)·fill_rate)` tokens, is admitted
//!   when that is ≥ 1, and then `time = now − (tokens − 1)/fill_rate`; a
//!   rejection changes nothing. `fill_rate = tokens_per_fill / (fill_interval_ms
//!   / 1000.0)`. Sources: `source/common/common/token_bucket_impl.{h,cc}`
//!   (`AtomicTokenBucketImpl::consume`),
//!   `source/extensions/filters/common/local_ratelimit/local_ratelimit_impl.cc`
//!   (`AtomicTokenBucket`; runtime guard `no_timer_based_rate_limit_token_bucket`).
//! - Envoy < 1.31, or that guard off ([`Timer`]): `TimerTokenBucket`, an integer
//!   count starting at `max_tokens`, `+ tokens_per_fill` (capped) on every fill
//!   timer tick; a request takes one token when there is one. The timer runs from
//!   Envoy's start, which a log does not show: ticks are taken at epoch-aligned
//!   multiples of the fill interval.
//!
//! The doubles use the log's epoch milliseconds as seconds where Envoy uses its
//! monotonic clock: the arithmetic is Envoy's, the rounding of the last bit may
//! differ. One place where that rounding would decide: a new bucket is taken
//! as holding exactly `max_tokens` (Envoy's intent: the constructor with
//! `init_fill` sets `time_in_seconds -= max_tokens_ / fill_rate_`: a full
//! bucket, on a monotonic clock whose smaller values round far less), because
//! `(now − (now − max_tokens/fill_rate))·fill_rate` with epoch-sized `now`
//! rounds on the grid of `now` (2⁻²² s) and can land below `max_tokens`; with
//! a one-token bucket that alone would reject every new client's first
//! request (1 token per 300 ms did at each of 100,000 random times of
//! 2024–2027). Not reproduced: the LRU of dynamic descriptors (an evicted client
//! comes back with a full bucket).

use super::bounds::{capacity, mul_div_ceil};
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// Envoy's shortest fill interval, in ms.
const MIN_FILL_MS: u64 = 50;

/// The exported `token_bucket` of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// `max_tokens`.
    pub max_tokens: u64,
    /// `tokens_per_fill`.
    pub tokens_per_fill: u64,
    /// `fill_interval`, in ms.
    pub fill_interval_ms: u64,
}

impl Params {
    /// The exporter's conversion of `spec` (`None` beyond Envoy's 32-bit counts).
    pub fn of(spec: &AlgorithmSpec) -> Option<Params> {
        let l = spec.limit.requests;
        let w_ms = u64::from(spec.limit.window.secs()) * 1000;
        let tokens = mul_div_ceil(MIN_FILL_MS, l, w_ms).max(1);
        let interval = u128::from(tokens) * u128::from(w_ms) / u128::from(l);
        let interval = u64::try_from(interval).unwrap_or(u64::MAX);
        let p = Params {
            max_tokens: capacity(spec).saturating_add(tokens - 1),
            tokens_per_fill: tokens,
            fill_interval_ms: interval / MIN_FILL_MS * MIN_FILL_MS,
        };
        let fits = p.max_tokens <= u64::from(u32::MAX)
            && p.tokens_per_fill <= u64::from(u32::MAX)
            && p.fill_interval_ms > 0;
        fits.then_some(p)
    }

    /// Tokens per second, as Envoy computes it.
    pub fn fill_rate(&self) -> f64 {
        self.tokens_per_fill as f64 / (self.fill_interval_ms as f64 / 1000.0)
    }

    /// One line for reports.
    pub fn describe(&self, timer: bool) -> String {
        format!(
            "local rate limit max_tokens={} tokens_per_fill={} fill_interval={}ms ({})",
            self.max_tokens,
            self.tokens_per_fill,
            self.fill_interval_ms,
            if timer {
                "timer fill, Envoy < 1.31"
            } else {
                "continuous fill in doubles, Envoy >= 1.31"
            }
        )
    }
}

/// Envoy ≥ 1.31: `AtomicTokenBucketImpl`.
#[derive(Debug, Clone)]
pub struct Continuous {
    params: Params,
    max_tokens: f64,
    fill_rate: f64,
}

/// `time_in_seconds_` of the client's bucket; `None` before its first request.
#[derive(Debug, Clone, Default)]
pub struct ContinuousState {
    time: Option<f64>,
}

/// Envoy's monotonic time in seconds, from the log's milliseconds.
fn seconds(t: Millis) -> f64 {
    t as f64 / 1000.0
}

impl Continuous {
    /// The bucket for `params`.
    pub fn new(params: Params) -> Continuous {
        Continuous {
            params,
            max_tokens: params.max_tokens as f64,
            fill_rate: params.fill_rate(),
        }
    }

    /// The bucket's tokens at `now`: a new bucket is full.
    fn tokens(&self, state: &ContinuousState, now: f64) -> f64 {
        match state.time {
            Some(time) => self.max_tokens.min((now - time) * self.fill_rate),
            None => self.max_tokens,
        }
    }
}

impl Algorithm for Continuous {
    type State = ContinuousState;

    fn allows(&self, state: &mut ContinuousState, t: Millis) -> bool {
        self.tokens(state, seconds(t)) >= 1.0
    }

    fn record(&self, state: &mut ContinuousState, t: Millis) -> u64 {
        let now = seconds(t);
        let total = self.tokens(state, now);
        state.time = Some(now - (total - 1.0) / self.fill_rate);
        0
    }

    // A rejection changes nothing: a bucket created by a rejected request is
    // full, as a new one is.

    /// A bucket full at `t` is full at every later time (`now − time` and the
    /// product only grow), so it holds exactly `max_tokens`, as a new one.
    fn is_idle(&self, state: &ContinuousState, t: Millis) -> bool {
        self.tokens(state, seconds(t)) >= self.max_tokens
    }

    fn instant_capacity(&self) -> u64 {
        self.params.max_tokens
    }

    fn burst_convention(&self) -> String {
        format!(
            "Envoy token bucket of {} tokens, refilled continuously at {} per {} ms",
            self.params.max_tokens, self.params.tokens_per_fill, self.params.fill_interval_ms
        )
    }
}

/// Envoy < 1.31: `TimerTokenBucket`.
#[derive(Debug, Clone)]
pub struct Timer {
    params: Params,
    interval: i64,
}

/// Tokens left and the fill tick they were last brought up to.
#[derive(Debug, Clone, Default)]
pub struct TimerState {
    tokens: u64,
    tick: i64,
    seen: bool,
}

impl Timer {
    /// The bucket for `params`.
    pub fn new(params: Params) -> Timer {
        Timer {
            params,
            interval: params.fill_interval_ms as i64,
        }
    }

    /// Tokens at `t` after the fill ticks since the last look.
    fn filled(&self, state: &TimerState, t: Millis) -> (u64, i64) {
        let tick = t.div_euclid(self.interval);
        if !state.seen {
            return (self.params.max_tokens, tick);
        }
        let ticks = u64::try_from(tick - state.tick).unwrap_or(0);
        let added = ticks.saturating_mul(self.params.tokens_per_fill);
        (
            state
                .tokens
                .saturating_add(added)
                .min(self.params.max_tokens),
            tick.max(state.tick),
        )
    }
}

impl Algorithm for Timer {
    type State = TimerState;

    fn allows(&self, state: &mut TimerState, t: Millis) -> bool {
        self.filled(state, t).0 > 0
    }

    fn record(&self, state: &mut TimerState, t: Millis) -> u64 {
        let (tokens, tick) = self.filled(state, t);
        *state = TimerState {
            tokens: tokens.saturating_sub(1),
            tick,
            seen: true,
        };
        0
    }

    fn rejected(&self, state: &mut TimerState, t: Millis) {
        let (tokens, tick) = self.filled(state, t);
        *state = TimerState {
            tokens,
            tick,
            seen: true,
        };
    }

    /// A bucket full at `t` stays full until a request takes a token, and
    /// takes it at the same tick as a new bucket would.
    fn is_idle(&self, state: &TimerState, t: Millis) -> bool {
        self.filled(state, t).0 >= self.params.max_tokens
    }

    fn instant_capacity(&self) -> u64 {
        self.params.max_tokens
    }

    fn burst_convention(&self) -> String {
        format!(
            "Envoy token bucket of {} tokens, {} added every {} ms tick",
            self.params.max_tokens, self.params.tokens_per_fill, self.params.fill_interval_ms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, envoy::Envoy, envoy::duration};
    use crate::policy::Policy;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect};

    fn params(max: u64, per_fill: u64, interval: u64) -> Params {
        Params {
            max_tokens: max,
            tokens_per_fill: per_fill,
            fill_interval_ms: interval,
        }
    }

    #[test]
    fn token_fill_matches_the_exported_text() {
        for (limit, burst) in [("40/1m", Some(7)), ("600/1s", None), ("7/90s", None)] {
            let text = format!(
                "[[rule]]\nname='g'\nlimit='{limit}'\n{}",
                burst.map(|b| format!("burst={b}")).unwrap_or_default()
            );
            let rules = Policy::parse(&text, "p").unwrap();
            let out = Envoy.render(&rules, &ExportOptions::default()).unwrap();
            let p = Params::of(&rules[0].spec).unwrap();
            let line = format!(
                "token_bucket: {{max_tokens: {}, tokens_per_fill: {}, fill_interval: {}}}",
                p.max_tokens,
                p.tokens_per_fill,
                duration(p.fill_interval_ms)
            );
            assert!(out.contains(&line), "{line}\n{out}");
        }
        // 600/1s: 30 tokens per 50 ms, 29 extra tokens of capacity.
        let rules = Policy::parse("[[rule]]\nname='g'\nlimit='600/1s'", "p").unwrap();
        assert_eq!(Params::of(&rules[0].spec), Some(params(629, 30, 50)));
    }

    #[test]
    fn continuous_refill_on_access_from_a_full_bucket() {
        // 2 tokens, 1 per 1000 ms (rate 1.0/s). Starts full.
        //   t=0, 0        2 → 1 → 0: admitted twice
        //   t=0           0 tokens: rejected
        //   t=500         0.5: rejected (nothing stored)
        //   t=999         0.999: rejected
        //   t=1000        1.0: admitted, time = 1.0 − 0 = 1.0
        //   t=1500        0.5: rejected
        //   t=3500        min(2, 2.5) = 2: admitted (time = 3.5 − 1 = 2.5)
        //   t=3500        1: admitted
        //   t=3500        0: rejected
        let alg = Continuous::new(params(2, 1, 1000));
        let times = [0, 0, 0, 500, 999, 1000, 1500, 3500, 3500, 3500];
        assert_eq!(decisions(&alg, &times), expect("yy nnn y n yy n"));
    }

    #[test]
    fn continuous_fill_is_in_doubles() {
        // 1 token, 1 per 300 ms: fill_rate = 1 / (300 / 1000.0) = 3.3333333333333335.
        // Admitted at 0 from full (time becomes 0.0); at 299 ms the bucket holds
        // 0.299·3.3333333333333335 = 0.9966…: rejected; at 300 ms
        // 0.3·3.3333333333333335 rounds to exactly 1.0: admitted.
        let alg = Continuous::new(params(1, 1, 300));
        assert_eq!(decisions(&alg, &[0, 299, 300]), expect("y n y"));
        let fill = params(1, 1, 300).fill_rate();
        assert_eq!(fill, 1.0 / 0.3);
        assert!((0.3 - 0.0) * fill >= 1.0);
    }

    #[test]
    fn a_new_bucket_is_full_at_epoch_times() {
        // 1 token per 300 ms. Setting the time max_tokens/fill_rate back and
        // subtracting again rounds on the grid of an epoch-sized `now`: here
        // below one token, which would reject the first request.
        let p = params(1, 1, 300);
        let now = 1_764_500_000.123_f64;
        let fill = p.fill_rate();
        assert!((now - (now - 1.0 / fill)) * fill < 1.0);
        let alg = Continuous::new(p);
        let t = 1_764_500_000_123;
        assert_eq!(
            decisions(&alg, &[t, t, t + 299, t + 300]),
            expect("y n n y")
        );
    }

    #[test]
    fn a_bucket_is_idle_once_full_again() {
        // 2 tokens, 1 per second: after two requests at t it is full at t + 2 s.
        let cont = Continuous::new(params(2, 1, 1000));
        let timer = Timer::new(params(2, 1, 1000));
        let t = 1_764_500_000_000;
        let (mut c, mut s) = (ContinuousState::default(), TimerState::default());
        assert!(cont.is_idle(&c, t) && timer.is_idle(&s, t));
        for _ in 0..2 {
            cont.decide(&mut c, t);
            timer.decide(&mut s, t);
        }
        assert!(!cont.is_idle(&c, t + 1999) && cont.is_idle(&c, t + 2000));
        // The timer adds a token at each whole second.
        assert!(!timer.is_idle(&s, t + 1999) && timer.is_idle(&s, t + 2000));
        assert!(check_idle_drops(&cont, &[t, t, t + 500, t + 2600, t + 9000]) >= 2);
        assert!(check_idle_drops(&timer, &[t, t, t + 500, t + 2600, t + 9000]) >= 2);
    }

    #[test]
    fn timer_fill_adds_tokens_on_ticks() {
        // 2 tokens, +1 every 1000 ms tick (epoch-aligned). Full at first request.
        //   t=900, 900  2 → 0: admitted twice
        //   t=999       no tick yet: rejected
        //   t=1000      tick 1: 1 token: admitted
        //   t=1999      rejected
        //   t=5000      ticks 2..5: +4, capped at 2: admitted twice, then rejected
        let alg = Timer::new(params(2, 1, 1000));
        let times = [900, 900, 999, 1000, 1999, 5000, 5000, 5000];
        assert_eq!(decisions(&alg, &times), expect("yy n y n yy n"));
    }

    #[test]
    fn timer_and_continuous_differ_on_a_tick_boundary() {
        // The bucket emptied at t=900: the timer refills at t=1000 (100 ms
        // later), the continuous bucket only a full second later. (At exactly
        // t=1900 it holds (1.9 − 0.9)·1.0 = 0.9999999999999999 in doubles: still
        // rejected.)
        let cont = Continuous::new(params(1, 1, 1000));
        let timer = Timer::new(params(1, 1, 1000));
        assert_eq!(
            decisions(&cont, &[900, 1000, 1900, 1901]),
            expect("y n n y")
        );
        assert_eq!(
            decisions(&timer, &[900, 1000, 1900, 1901]),
            expect("y y n n")
        );
    }
}
