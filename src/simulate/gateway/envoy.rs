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
//! The clock of [`Continuous`]. Envoy reads its monotonic clock (small values:
//! time since boot), whose origin a log does not show, and two requests never
//! reach it at the same nanosecond. The log's times are epoch milliseconds,
//! with many requests in one millisecond. Taken as seconds since the epoch
//! (about 1.8·10⁹, where a double's step is 2⁻²² s) they round
//! `now − (now − (tokens − 1)/fill_rate)` visibly: a bucket idle for ten
//! seconds, full at 2 tokens of 1 per 300 ms, held 0.99999985 tokens after
//! its first request and rejected the second one of the same millisecond,
//! which Envoy admits (the microseconds between them alone add more than
//! that rounding). A small origin is not enough either: with the clock at 0
//! at the bucket's last full instant, `((t − 1)/fill_rate)·fill_rate` still
//! loses the last token of a burst for about 7% of exported settings (121/1s
//! burst 50: 55 of 56). So the replay keeps Envoy's `time_in_seconds` as the
//! instant it stands for, the last admitted request and the tokens it left:
//! `time = last − left/fill_rate`, and `(now − time)·fill_rate` is computed
//! as `left + (now − last)·fill_rate`, with `now − last` the log's exact
//! milliseconds over 1000.0 (Envoy's formula with its clock read from the
//! last admitted request). Requests in one millisecond then take whole tokens
//! exactly, as Envoy's do, and a bucket full again is the same state as a new
//! one (`left = max_tokens − 1`). A new bucket holds exactly `max_tokens`
//! (Envoy's intent: the constructor with `init_fill` sets `time_in_seconds
//! −= max_tokens_ / fill_rate_`). The last bit may still differ from a real
//! Envoy's, where the exact value lands on a whole token (1 per 300 ms, 300 ms
//! later): there the sub-millisecond arrival times, which no log shows,
//! decide. Not reproduced: the LRU of dynamic descriptors (an evicted client
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

/// `time_in_seconds_` of the client's bucket, as the instant it stands for:
/// the last admitted request and the tokens it left (`time = last −
/// left/fill_rate`); `None` before the bucket's first admitted request.
#[derive(Debug, Clone, Default)]
pub struct ContinuousState {
    last: Option<(Millis, f64)>,
}

/// Seconds between two of the log's times, as a double.
fn seconds(from: Millis, to: Millis) -> f64 {
    to.saturating_sub(from) as f64 / 1000.0
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

    /// The bucket's tokens at `t`, `min(max_tokens, (now − time)·fill_rate)`
    /// with Envoy's clock read from the last admitted request: a new bucket
    /// is full.
    fn tokens(&self, state: &ContinuousState, t: Millis) -> f64 {
        match state.last {
            Some((last, left)) => self
                .max_tokens
                .min(left + seconds(last, t) * self.fill_rate),
            None => self.max_tokens,
        }
    }
}

impl Algorithm for Continuous {
    type State = ContinuousState;

    fn allows(&self, state: &mut ContinuousState, t: Millis) -> bool {
        self.tokens(state, t) >= 1.0
    }

    /// `time = now − (tokens − 1)/fill_rate`: the request at `t`, leaving
    /// `tokens − 1` (exact in doubles for any count of tokens ≥ 1).
    fn record(&self, state: &mut ContinuousState, t: Millis) -> u64 {
        let total = self.tokens(state, t);
        state.last = Some((t, total - 1.0));
        0
    }

    // A rejection changes nothing: a bucket created by a rejected request is
    // full, as a new one is.

    /// A bucket full at `t` is full at every later time (`now − last` and the
    /// product only grow), so it holds exactly `max_tokens`, and its next
    /// admitted request leaves the state a new bucket's would.
    fn is_idle(&self, state: &ContinuousState, t: Millis) -> bool {
        self.tokens(state, t) >= self.max_tokens
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
mod tests;
