//! Sliding log: remembers the time of every admitted request and admits a request
//! at t while fewer than L were admitted in (t − W, t]. Exact, at the price of
//! memory proportional to L per key.

use std::collections::VecDeque;

use super::Algorithm;
use crate::units::{Limit, Millis};

/// A sliding log of L requests per W.
#[derive(Debug, Clone)]
pub struct SlidingLog {
    limit: u64,
    window_ms: i64,
}

/// Times of the requests admitted in the last W, oldest first.
pub type State = VecDeque<Millis>;

impl SlidingLog {
    /// At most L admitted requests in any span (t − W, t].
    pub fn new(limit: Limit) -> Self {
        SlidingLog {
            limit: limit.requests,
            window_ms: limit.window.millis(),
        }
    }
}

impl Algorithm for SlidingLog {
    type State = State;

    fn allows(&self, log: &mut State, t: Millis) -> bool {
        let oldest_kept = t - self.window_ms; // entries at or before this have left (t − W, t]
        while log.front().is_some_and(|&admitted| admitted <= oldest_kept) {
            log.pop_front();
        }
        (log.len() as u64) < self.limit
    }

    fn record(&self, log: &mut State, t: Millis) -> u64 {
        log.push_back(t);
        0
    }

    /// Every logged request has left (t − W, t].
    fn is_idle(&self, log: &State, t: Millis) -> bool {
        log.back()
            .is_none_or(|&newest| newest <= t - self.window_ms)
    }

    fn instant_capacity(&self) -> u64 {
        self.limit
    }

    fn burst_convention(&self) -> String {
        "no burst: admits L at once and never more than L in any window W".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn log(limit: &str) -> SlidingLog {
        SlidingLog::new(limit.parse().unwrap())
    }

    #[test]
    fn window_is_half_open_on_the_left() {
        // 2/1s.
        //   t=0     log []        -> admitted, log [0]
        //   t=500   log [0]       -> admitted, log [0, 500]
        //   t=999   (−1, 999] holds 0 and 500: 2 = L -> rejected
        //   t=1000  (0, 1000]: 0 has left, holds 500 -> admitted, log [500, 1000]
        //   t=1499  (499, 1499] holds 500, 1000 -> rejected
        //   t=1500  (500, 1500] holds 1000 -> admitted
        let alg = log("2/1s");
        assert_eq!(
            decisions(&alg, &[0, 500, 999, 1000, 1499, 1500]),
            expect("yy n y n y")
        );
    }

    #[test]
    fn no_boundary_effect() {
        // 5/1m, same traffic as the fixed window's boundary test: only 5 admitted,
        // because all eleven requests fall within one minute.
        let alg = log("5/1m");
        let mut times: Vec<Millis> = (0..5).map(|i| 59_990 + 2 * i).collect();
        times.extend((0..5).map(|i| 60_000 + 2 * i));
        times.push(60_010);
        assert_eq!(decisions(&alg, &times), expect("yyyyy nnnnn n"));
    }

    #[test]
    fn rejected_requests_are_not_logged() {
        // 1/1s: t=0 admitted; t=100..900 rejected and not logged, so t=1000 is
        // admitted ((0, 1000] is empty), not pushed back by the rejected ones.
        let alg = log("1/1s");
        assert_eq!(
            decisions(&alg, &[0, 100, 500, 900, 1000]),
            expect("y nnn y")
        );
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&log("3/1s"), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = log("2/1s");
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        for t in [0, 500] {
            assert!(alg.decide(&mut state, t));
        }
        assert!(!alg.is_idle(&state, 1499));
        assert!(alg.is_idle(&state, 1500));
        // A sequence with long gaps drops the state between bursts.
        assert!(check_idle_drops(&alg, &[0, 0, 1, 90_000, 90_001, 200_000]) >= 2);
    }
}
