//! envoyproxy/ratelimit, Envoy's global rate limit service, with its Redis
//! fixed-window cache: the counter key holds the epoch-aligned window
//! `(now / divider) · divider` (now in whole Unix seconds, divider 1, 60, 3600
//! or 86400 for second, minute, hour, day), every request `INCRBY`s it, over
//! limit ones too, and a request is over limit when the count after its own
//! increment exceeds `requests_per_unit`. So a client that keeps retrying
//! stays counted, and the window is the epoch's.
//!
//! Sources: `src/limiter/cache_key.go` (`GenerateCacheKey`),
//! `src/redis/fixed_cache_impl.go` (`DoLimit`: the increment pipeline skips
//! only keys the optional local cache already marks over limit),
//! `src/limiter/base_limiter.go` (`GetResponseDescriptorStatus`:
//! `limitAfterIncrease > overLimitThreshold`), `src/utils/utilities.go`
//! (`UnitToDivider`). Defaults assumed: no local cache, no
//! `STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT`, no shadow mode.
//!
//! `rlctl export` writes no configuration for this service; the conversion
//! used is the one `--target kong` uses for its fixed windows: the unit is the
//! longest of second/minute/hour/day not above W, and `requests_per_unit` the
//! most the rule admits in one such aligned window (never stricter).

use super::bounds::most_in_aligned_window;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// The service's units: name and divider in seconds.
const UNITS: [(&str, i64); 4] = [
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
];

/// One descriptor's limit: `requests_per_unit` per `unit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixedWindow {
    unit: &'static str,
    divider: i64,
    requests_per_unit: u64,
}

/// The current window's start (seconds) and its counter.
#[derive(Debug, Clone, Default)]
pub struct State {
    window: i64,
    count: u64,
    seen: bool,
}

impl FixedWindow {
    /// The descriptor for `spec` (see the module doc for the conversion).
    pub fn of(spec: &AlgorithmSpec) -> FixedWindow {
        let w = i64::from(spec.limit.window.secs());
        let (unit, divider) = UNITS
            .iter()
            .rev()
            .find(|(_, d)| *d <= w)
            .copied()
            .unwrap_or(UNITS[0]);
        FixedWindow {
            unit,
            divider,
            requests_per_unit: most_in_aligned_window(spec, divider as u64),
        }
    }

    /// The count of the window holding `t`, before this request.
    fn count(&self, state: &State, t: Millis) -> (i64, u64) {
        let now = t.div_euclid(1000);
        let window = now.div_euclid(self.divider) * self.divider;
        let count = if state.seen && state.window == window {
            state.count
        } else {
            0
        };
        (window, count)
    }

    fn increment(&self, state: &mut State, t: Millis) {
        let (window, count) = self.count(state, t);
        *state = State {
            window,
            count: count.saturating_add(1),
            seen: true,
        };
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "requests_per_unit {} per {}, epoch-aligned; over-limit requests counted",
            self.requests_per_unit, self.unit
        )
    }
}

impl Algorithm for FixedWindow {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        self.count(state, t).1 < self.requests_per_unit
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        self.increment(state, t);
        0
    }

    fn rejected(&self, state: &mut State, t: Millis) {
        self.increment(state, t);
    }

    /// Once `t` is past the counter's window, every later one counts from 0.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        self.count(state, t).1 == 0
    }

    fn instant_capacity(&self) -> u64 {
        self.requests_per_unit
    }

    fn burst_convention(&self) -> String {
        format!(
            "envoy ratelimit service: {} per epoch-aligned {}, rejected requests counted",
            self.requests_per_unit, self.unit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{decisions, expect};

    fn window(limit: &str) -> FixedWindow {
        FixedWindow::of(&AlgorithmSpec::new(
            AlgorithmKind::FixedWindow,
            limit.parse().unwrap(),
        ))
    }

    #[test]
    fn units_and_limits_follow_the_rule() {
        assert_eq!(
            window("100/1m").describe(),
            "requests_per_unit 100 per minute, epoch-aligned; over-limit requests counted"
        );
        assert_eq!(
            (window("5/1s").unit, window("5/1s").requests_per_unit),
            ("second", 5)
        );
        // 90 s: minute windows (the longest unit not above W).
        assert_eq!(window("7/90s").unit, "minute");
        let tb = FixedWindow::of(&AlgorithmSpec {
            burst: Some(10),
            ..AlgorithmSpec::new(AlgorithmKind::TokenBucket, "60/1m".parse().unwrap())
        });
        assert_eq!(tb.requests_per_unit, 69); // C + L − 1
    }

    #[test]
    fn windows_are_epoch_aligned() {
        // 2 per minute. t = 59.9 s and 60.0 s fall in different windows.
        let alg = window("2/1m");
        let times = [59_000, 59_900, 59_950, 60_000, 60_001, 60_002];
        assert_eq!(decisions(&alg, &times), expect("yy n yy n"));
    }

    #[test]
    fn over_limit_requests_are_counted() {
        // 2 per second: every request increments, so the count is 3, 4 … and the
        // client stays over limit for the rest of the window; only whole seconds
        // matter (999 ms is still second 0).
        let alg = window("2/1s");
        let times = [0, 1, 2, 500, 999, 1000, 1000, 1000];
        assert_eq!(decisions(&alg, &times), expect("yy nnn yy n"));
        let mut state = State::default();
        for &t in &times[..5] {
            alg.decide(&mut state, t);
        }
        assert_eq!(state.count, 5);
    }
}
