//! Sliding window counter (the Redis Lua formulation): epoch-aligned windows, and
//! the previous window's count weighted by how much of it still overlaps (t − W, t].
//!
//! With r = t mod W: estimate = floor(prev · (W − r) / W) + cur, computed exactly in
//! integers; admitted when estimate < L, then cur += 1. Rejected requests are not
//! counted. prev is the count of window index − 1, 0 when the key's last window is
//! older than that.

use super::Algorithm;
use crate::units::{Limit, Millis};

/// A sliding window counter of L requests per W.
#[derive(Debug, Clone)]
pub struct SlidingCounter {
    limit: u64,
    window_ms: i64,
}

/// Counts of the current window and the one before it. The zero state is empty.
#[derive(Debug, Clone, Default)]
pub struct State {
    window: i64,
    prev: u64,
    cur: u64,
}

impl SlidingCounter {
    /// L requests per W, estimated from two epoch-aligned windows.
    pub fn new(limit: Limit) -> Self {
        SlidingCounter {
            limit: limit.requests,
            window_ms: limit.window.millis(),
        }
    }

    /// floor(prev · (W − r) / W) + cur with r = t mod W (exact).
    fn estimate(&self, state: &State, t: Millis) -> u64 {
        let into_window = t.rem_euclid(self.window_ms);
        let remaining = (self.window_ms - into_window) as u64;
        let window = self.window_ms as u64;
        let weighted = match state.prev.checked_mul(remaining) {
            Some(product) => product / window, // the usual case, and much faster
            None => (u128::from(state.prev) * u128::from(remaining) / u128::from(window)) as u64,
        };
        weighted + state.cur
    }
}

impl Algorithm for SlidingCounter {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        let window = t.div_euclid(self.window_ms);
        if window != state.window {
            let prev = if window == state.window + 1 {
                state.cur
            } else {
                0
            };
            *state = State {
                window,
                prev,
                cur: 0,
            };
        }
        self.estimate(state, t) < self.limit
    }

    fn record(&self, state: &mut State, _t: Millis) -> u64 {
        state.cur += 1;
        0
    }

    /// Rolled to t's window, both counts are 0 (they stay 0 later).
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        let window = t.div_euclid(self.window_ms);
        let (prev, cur) = if window == state.window {
            (state.prev, state.cur)
        } else if window == state.window + 1 {
            (state.cur, 0)
        } else {
            (0, 0)
        };
        prev == 0 && cur == 0
    }

    fn instant_capacity(&self) -> u64 {
        self.limit
    }

    fn burst_convention(&self) -> String {
        "no burst: admits L at once; the weighted estimate can let a little more than L through in a window W"
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn sc(limit: &str) -> SlidingCounter {
        SlidingCounter::new(limit.parse().unwrap())
    }

    #[test]
    fn previous_window_is_weighted_by_its_overlap() {
        // 4/1s. Window 0 = [0, 1000), window 1 = [1000, 2000).
        //   t=0,1,2,3     cur 0..3 < 4: admitted, cur = 4
        //   t=4           estimate 4: rejected
        //   t=1250 (w1)   prev 4, r 250: floor(4·750/1000) = 3, +0 = 3 < 4: admitted, cur 1
        //   t=1250        floor(3) + 1 = 4: rejected
        //   t=1500        floor(4·500/1000) = 2, +1 = 3: admitted, cur 2
        //   t=1501        floor(4·499/1000) = floor(1.996) = 1, +2 = 3: admitted, cur 3
        //   t=1502        floor(4·498/1000) = 1, +3 = 4: rejected
        //   t=1750        floor(4·250/1000) = 1, +3 = 4: rejected
        //   t=1751        floor(4·249/1000) = 0, +3 = 3: admitted, cur 4
        //   t=1999        0 + 4 = 4: rejected
        let alg = sc("4/1s");
        let times = [
            0, 1, 2, 3, 4, 1250, 1250, 1500, 1501, 1502, 1750, 1751, 1999,
        ];
        assert_eq!(decisions(&alg, &times), expect("yyyy n y n yy nn y n"));
    }

    #[test]
    fn older_windows_are_forgotten() {
        // 2/1s: window 0 full (t=0, 1); t=2500 is window 2, two windows later, so
        // prev = 0 (not window 0's 2): admitted twice, then rejected.
        let alg = sc("2/1s");
        assert_eq!(
            decisions(&alg, &[0, 1, 2500, 2600, 2700]),
            expect("yy yy n")
        );
    }

    #[test]
    fn estimate_is_exact_when_the_product_overflows_64_bits() {
        // prev · remaining = 18_446_744_073_709_551 · 500 > u64::MAX: the 128-bit
        // path gives floor(prev / 2) = 9_223_372_036_854_775.
        let alg = sc("1/1s");
        let state = State {
            window: 0,
            prev: 18_446_744_073_709_551,
            cur: 7,
        };
        assert_eq!(alg.estimate(&state, 500), 9_223_372_036_854_775 + 7);
        assert_eq!(alg.estimate(&State { prev: 3, ..state }, 500), 1 + 7);
    }

    #[test]
    fn rejected_requests_are_not_counted() {
        // 1/1s: t=0 admitted (cur 1). t=10..990 rejected, not counted.
        // t=1000: prev 1, r 0: floor(1·1000/1000) = 1 -> rejected.
        // t=1001: floor(999/1000) = 0, cur 0 -> admitted. Had the rejected ones
        // counted, prev would be 4 and t=1001 rejected.
        let alg = sc("1/1s");
        assert_eq!(
            decisions(&alg, &[0, 10, 500, 990, 1000, 1001]),
            expect("y nnn n y")
        );
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&sc("3/1s"), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = sc("2/1s");
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        assert!(alg.decide(&mut state, 0));
        assert!(!alg.is_idle(&state, 1999));
        assert!(alg.is_idle(&state, 2000));
        // A sequence with long gaps drops the state between bursts.
        assert!(check_idle_drops(&alg, &[0, 0, 1, 90_000, 90_001, 200_000]) >= 2);
    }
}
