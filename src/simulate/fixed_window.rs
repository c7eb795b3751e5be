//! Fixed window: windows aligned to the Unix epoch, index floor(t/W), a counter per
//! window; a request is admitted while the window's count is below L.
//!
//! Its known weakness is the boundary: L at the end of one window and L at the
//! start of the next are 2L admitted within far less than W.

use super::Algorithm;
use crate::units::{Limit, Millis};

/// A fixed-window counter of L requests per W.
#[derive(Debug, Clone)]
pub struct FixedWindow {
    limit: u64,
    window_ms: i64,
}

/// The window a key last counted in and how many requests it admitted there.
/// The zero state is empty: a zero count in any window admits like a fresh one.
#[derive(Debug, Clone, Default)]
pub struct State {
    window: i64,
    count: u64,
}

impl FixedWindow {
    /// L requests per epoch-aligned window W.
    pub fn new(limit: Limit) -> Self {
        FixedWindow {
            limit: limit.requests,
            window_ms: limit.window.millis(),
        }
    }
}

impl Algorithm for FixedWindow {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        let window = t.div_euclid(self.window_ms);
        if window != state.window {
            *state = State { window, count: 0 };
        }
        state.count < self.limit
    }

    fn record(&self, state: &mut State, _t: Millis) -> u64 {
        state.count += 1;
        0
    }

    /// A window that has passed, or holds nothing, admits like the empty state.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        state.count == 0 || state.window < t.div_euclid(self.window_ms)
    }

    fn instant_capacity(&self) -> u64 {
        self.limit
    }

    fn burst_convention(&self) -> String {
        "no burst: admits L at once per epoch-aligned window, so up to 2L across a window boundary"
            .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn fw(limit: &str) -> FixedWindow {
        FixedWindow::new(limit.parse().unwrap())
    }

    #[test]
    fn counts_per_epoch_aligned_window() {
        // 3/1s. Window 0 is [0, 1000), window 1 is [1000, 2000).
        //   t=0, 10, 999  -> counts 1, 2, 3: admitted
        //   t=999         -> count is 3 = L: rejected (not counted)
        //   t=1000        -> new window 1, count 1: admitted
        //   t=2500        -> window 2, count 1: admitted
        let alg = fw("3/1s");
        let times = [0, 10, 999, 999, 1000, 2500];
        assert_eq!(decisions(&alg, &times), expect("yyy n y y"));
    }

    #[test]
    fn admits_twice_the_limit_around_a_boundary() {
        // 5/1m. Five requests in the last 10 ms of window 0 ([59_990, 59_999]) fill it;
        // five in the first 10 ms of window 1 fill that one: 10 = 2L admitted
        // within a span of 20 ms, far less than W = 60 s. The 11th is rejected.
        let alg = fw("5/1m");
        let mut times: Vec<Millis> = (0..5).map(|i| 59_990 + 2 * i).collect();
        times.extend((0..5).map(|i| 60_000 + 2 * i));
        times.push(60_010);
        assert_eq!(decisions(&alg, &times), expect("yyyyy yyyyy n"));
        assert!(times[9] - times[0] < 60_000);
    }

    #[test]
    fn windows_are_aligned_before_the_epoch_too() {
        // 1/1s: t=-1 is in window -1 ([-1000, 0)), t=0 in window 0.
        let alg = fw("1/1s");
        assert_eq!(decisions(&alg, &[-1000, -1, 0, 1]), expect("y n y n"));
    }

    #[test]
    fn rejected_requests_are_not_counted() {
        // 2/1s: t=0, 1 admitted; t=2..5 rejected; t=1000 admitted (fresh window).
        let alg = fw("2/1s");
        assert_eq!(
            decisions(&alg, &[0, 1, 2, 3, 4, 5, 1000, 1001, 1002]),
            expect("yy nnnn yy n")
        );
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&fw("3/1s"), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = fw("2/1s");
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        assert!(alg.decide(&mut state, 0));
        assert!(!alg.is_idle(&state, 999));
        assert!(alg.is_idle(&state, 1000));
        // A sequence with long gaps drops the state between bursts.
        assert!(check_idle_drops(&alg, &[0, 0, 1, 90_000, 90_001, 200_000]) >= 2);
    }
}
