//! The widely deployed Redis Lua sliding window counter, bit for bit: callers
//! pass `now` in whole seconds (`time.Now().Unix()`), the script keeps one
//! counter per epoch-aligned window `now // W` and computes, in IEEE doubles
//! (Lua numbers) and in exactly this order:
//!
//! ```text
//! elapsed  = now % W
//! weight   = 1 - (elapsed / W)
//! estimate = math.floor(prev * weight) + cur
//! ```
//!
//! admitting when `estimate < L`, then `INCR cur`; rejected requests are not
//! counted. L and W are the policy rule's (the script has no burst). rlctl's own
//! `sliding-counter` computes the same estimate exactly, in integers and
//! milliseconds: `floor(100 × (1 − 33/60))` is 44 here and 45 there.
//!
//! Source: issue 15's formula, the common shape of the script (e.g. the
//! `sliding window counter` Lua scripts of Redis rate-limiting write-ups); the
//! test suite checks it against a real Redis running such a script.

use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// L per W seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisSwc {
    limit: u64,
    window_s: i64,
}

/// Counters of the current window and the one before it.
#[derive(Debug, Clone, Default)]
pub struct State {
    window: i64,
    prev: u64,
    cur: u64,
}

impl RedisSwc {
    /// The script's L and W for `spec`.
    pub fn of(spec: &AlgorithmSpec) -> RedisSwc {
        RedisSwc {
            limit: spec.limit.requests,
            window_s: i64::from(spec.limit.window.secs()),
        }
    }

    /// The script's estimate at `now` (seconds) from the two counters.
    pub fn estimate(&self, prev: u64, cur: u64, now: i64) -> f64 {
        let w = self.window_s as f64;
        let elapsed = now.rem_euclid(self.window_s) as f64;
        let weight = 1.0 - (elapsed / w);
        (prev as f64 * weight).floor() + cur as f64
    }

    /// The counters of the window holding `now`.
    fn counters(&self, state: &State, now: i64) -> (i64, u64, u64) {
        let window = now.div_euclid(self.window_s);
        if window == state.window {
            (window, state.prev, state.cur)
        } else if window == state.window + 1 {
            (window, state.cur, 0)
        } else {
            (window, 0, 0)
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "Lua sliding window counter L={} W={}s, whole seconds, IEEE doubles; rejected requests not counted",
            self.limit, self.window_s
        )
    }
}

impl Algorithm for RedisSwc {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        let now = t.div_euclid(1000);
        let (window, prev, cur) = self.counters(state, now);
        *state = State { window, prev, cur };
        self.estimate(prev, cur, now) < self.limit as f64
    }

    fn record(&self, state: &mut State, _t: Millis) -> u64 {
        state.cur = state.cur.saturating_add(1);
        0
    }

    /// Once both counters read at `t` are 0, they stay 0 until the next
    /// increment, and the estimate is computed from the same inputs as a new
    /// key's (so the doubles are the same bits).
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        let (_, prev, cur) = self.counters(state, t.div_euclid(1000));
        prev == 0 && cur == 0
    }

    fn instant_capacity(&self) -> u64 {
        self.limit
    }

    fn burst_convention(&self) -> String {
        format!(
            "Redis Lua sliding window counter: {} per {} s, weighted in doubles",
            self.limit, self.window_s
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::sliding_counter::SlidingCounter;
    use crate::simulate::test_util::{decisions, expect};

    fn swc(limit: &str) -> RedisSwc {
        RedisSwc::of(&AlgorithmSpec::new(
            AlgorithmKind::SlidingCounter,
            limit.parse().unwrap(),
        ))
    }

    #[test]
    fn doubles_round_where_integers_do_not() {
        // floor(100 × (1 − 33/60)): 1 − 0.55 is 0.44999999999999996 in doubles.
        let alg = swc("100/1m");
        assert_eq!(alg.estimate(100, 0, 60 + 33), 44.0);
        // The same traffic through both: window 0 full (100), then at 93 s the
        // doubles admit 56 (44 + 55 = 99 < 100), exact integers 55 (45 + 54 = 99).
        let mut times = vec![0; 100];
        times.extend([93_000; 60]);
        let doubles = decisions(&alg, &times);
        let exact = decisions(&SlidingCounter::new("100/1m".parse().unwrap()), &times);
        let count = |d: &[bool]| d[100..].iter().filter(|&&a| a).count();
        assert_eq!((count(&doubles), count(&exact)), (56, 55));
    }

    #[test]
    fn time_is_whole_seconds() {
        // 2/10s. 9.999 s is second 9 of window 0; 10.0 s starts window 1 with
        // prev 2 and elapsed 0: floor(2·1) = 2: rejected; 10.999 s still second 10.
        let alg = swc("2/10s");
        let times = [0, 9_999, 10_000, 10_999, 11_000];
        // 11 s: floor(2·0.9) = 1 < 2: admitted.
        assert_eq!(decisions(&alg, &times), expect("yy nn y"));
    }

    #[test]
    fn rejected_requests_are_not_counted() {
        // 1/1s: second 0 admits one; many rejections in second 0 do not make
        // prev larger than 1, so second 1 at elapsed 0 sees floor(1·1) = 1 (no),
        // and second 2 sees prev 0.
        let alg = swc("1/1s");
        let times = [0, 100, 200, 300, 1000, 2000];
        assert_eq!(decisions(&alg, &times), expect("y nnn n y"));
    }
}
