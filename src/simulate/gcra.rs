//! GCRA, the generic cell rate algorithm (governor, redis-cell, Stripe): one
//! timestamp per key, the theoretical arrival time (TAT).
//!
//! Emission interval T = W/L, tolerance τ = T·(B − 1) (B defaults to L). A request
//! at t is admitted when t ≥ TAT − τ; then TAT = max(TAT, t) + T.
//!
//! Exact arithmetic: time is scaled by L, so t becomes t·L and T becomes W_ms, an
//! integer; 128-bit integers keep t·L exact for any epoch time. Decisions equal the
//! token bucket's for the same L, W and B (see the property tests).

use super::Algorithm;
use crate::units::{Limit, Millis};

/// GCRA with L per W and burst B.
#[derive(Debug, Clone)]
pub struct Gcra {
    burst: u64,
    /// L: the time scale.
    scale: i128,
    /// T = W/L, scaled by L: W_ms.
    emission: i128,
    /// τ = T·(B − 1), scaled by L.
    tolerance: i128,
}

/// The theoretical arrival time, scaled by L. The default is the empty state.
#[derive(Debug, Clone)]
pub struct State {
    tat: i128,
}

impl Default for State {
    /// No request yet: any time is at or after TAT − τ.
    fn default() -> Self {
        State { tat: i128::MIN }
    }
}

impl Gcra {
    /// L per W with burst `burst`; `None` when `burst` is 0.
    pub fn new(limit: Limit, burst: u64) -> Option<Self> {
        let emission = i128::from(limit.window.millis());
        (burst > 0).then(|| Gcra {
            burst,
            scale: i128::from(limit.requests),
            emission,
            tolerance: emission * i128::from(burst - 1),
        })
    }
}

impl Algorithm for Gcra {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        i128::from(t) * self.scale >= state.tat.saturating_sub(self.tolerance)
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        state.tat = state.tat.max(i128::from(t) * self.scale) + self.emission;
        0
    }

    /// TAT is not after t: the next request sets TAT = t·L + T, as from empty.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        i128::from(t) * self.scale >= state.tat
    }

    fn instant_capacity(&self) -> u64 {
        self.burst
    }

    fn burst_convention(&self) -> String {
        format!(
            "GCRA with burst B={}: admits B at once like governor (redis-cell's max_burst=B admits B+1)",
            self.burst
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn gcra(limit: &str, burst: u64) -> Gcra {
        Gcra::new(limit.parse().unwrap(), burst).unwrap()
    }

    #[test]
    fn emission_interval_and_tolerance() {
        // 2/1s, B=2: T = 500 ms, τ = 500 ms. Scaled by L=2: T = 1000, τ = 1000, t·2.
        //   t=0     first: TAT = 0 + 1000 (500 ms)       admitted
        //   t=0     0 ≥ 1000 − 1000: TAT = 2000           admitted
        //   t=0     0 ≥ 2000 − 1000? no                   rejected
        //   t=499   998 ≥ 1000? no                        rejected
        //   t=500   1000 ≥ 1000: TAT = 3000               admitted
        //   t=999   1998 ≥ 2000? no                       rejected
        //   t=1000  2000 ≥ 2000: TAT = 4000               admitted
        //   t=5000  10000 ≥ 3000: TAT = max(4000, 10000) + 1000 = 11000   admitted
        //   t=5000  10000 ≥ 10000: TAT = 12000            admitted
        //   t=5000  10000 ≥ 11000? no                     rejected
        let alg = gcra("2/1s", 2);
        let times = [0, 0, 0, 499, 500, 999, 1000, 5000, 5000, 5000];
        assert_eq!(decisions(&alg, &times), expect("yy n n y n y yy n"));
    }

    #[test]
    fn fractional_emission_interval_is_exact() {
        // 3/1s, B=1: T = 333⅓ ms, τ = 0. Scaled by 3: T = 1000, t·3.
        //   t=0     TAT = 1000                 admitted
        //   t=333   999 ≥ 1000? no             rejected
        //   t=334   1002 ≥ 1000: TAT = 2002    admitted
        //   t=667   2001 ≥ 2002? no            rejected
        //   t=668   2004: TAT = 3004           admitted
        //   t=1001  3003 ≥ 3004? no            rejected
        //   t=1002  3006: admitted
        let alg = gcra("3/1s", 1);
        let times = [0, 333, 334, 667, 668, 1001, 1002];
        assert_eq!(decisions(&alg, &times), expect("y n y n y n y"));
    }

    #[test]
    fn works_before_the_epoch_and_refuses_zero_burst() {
        let alg = gcra("1/1s", 1);
        assert_eq!(decisions(&alg, &[-5000, -4001, -4000]), expect("y n y"));
        assert!(Gcra::new("1/1s".parse().unwrap(), 0).is_none());
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&gcra("2/1s", 3), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = gcra("2/1s", 2);
        let mut state = State::default();
        assert!(alg.is_idle(&state, 0));
        for t in [0, 0] {
            assert!(alg.decide(&mut state, t));
        }
        assert!(!alg.is_idle(&state, 999));
        assert!(alg.is_idle(&state, 1000));
        // A sequence with long gaps drops the state between bursts.
        assert!(check_idle_drops(&alg, &[0, 0, 1, 90_000, 90_001, 200_000]) >= 2);
    }
}
