//! Token bucket: capacity B tokens (default L), refilled continuously at L/W tokens
//! per second, starting full; a request is admitted when at least one whole token
//! is available, and takes it.
//!
//! Exact arithmetic: tokens are counted in units of 1/W_ms of a token, so one
//! token is W_ms units, the capacity B·W_ms units, and each millisecond refills
//! exactly L units. No floating point, no drift: decisions equal GCRA's for the
//! same L, W and B (see the property tests).

use super::Algorithm;
use crate::units::{Limit, Millis};

/// A token bucket of B tokens refilled at L per W.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    burst: u64,
    /// Units one token is worth (W in ms).
    token: i64,
    /// Units refilled per millisecond (L).
    refill_per_ms: i64,
    /// B · W_ms units.
    capacity: i64,
}

/// How many units are missing from a full bucket, as of `last`. The zero state is
/// a full bucket.
#[derive(Debug, Clone, Default)]
pub struct State {
    missing: i64,
    last: Millis,
}

impl TokenBucket {
    /// L per W with a bucket of `burst` tokens; `None` when the scaled values do not
    /// fit in 64 bits or `burst` is 0.
    pub fn new(limit: Limit, burst: u64) -> Option<Self> {
        let token = limit.window.millis();
        let refill_per_ms = i64::try_from(limit.requests).ok()?;
        let capacity = i64::try_from(burst).ok()?.checked_mul(token)?;
        (burst > 0).then_some(TokenBucket {
            burst,
            token,
            refill_per_ms,
            capacity,
        })
    }
}

impl Algorithm for TokenBucket {
    type State = State;

    /// Refills up to `t` (tidying: refilling twice gives the same as once) and
    /// checks for a whole token.
    fn allows(&self, state: &mut State, t: Millis) -> bool {
        let elapsed = t.saturating_sub(state.last).max(0);
        let refilled = self.refill_per_ms.saturating_mul(elapsed);
        state.missing = state.missing.saturating_sub(refilled).max(0);
        // A full bucket does not depend on when it filled up: restart its clock
        // (this also makes the zero state empty for times before the epoch).
        if state.missing == 0 || t > state.last {
            state.last = t;
        }
        state.missing <= self.capacity - self.token
    }

    fn record(&self, state: &mut State, _t: Millis) -> u64 {
        state.missing += self.token;
        0
    }

    /// The bucket is full again at t (a full bucket forgets when it filled).
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        let elapsed = t.saturating_sub(state.last).max(0);
        state.missing <= self.refill_per_ms.saturating_mul(elapsed)
    }

    fn instant_capacity(&self) -> u64 {
        self.burst
    }

    fn burst_convention(&self) -> String {
        format!(
            "token bucket of B={} tokens, starting full: admits B at once (governor/Envoy convention)",
            self.burst
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::test_util::{check_idle_drops, decisions, expect, idle_test_times};

    fn tb(limit: &str, burst: u64) -> TokenBucket {
        TokenBucket::new(limit.parse().unwrap(), burst).unwrap()
    }

    #[test]
    fn starts_full_and_refills_continuously() {
        // 2/1s, B=2: one token = 1000 units, +2 units per ms, capacity 2000.
        //   t=0     missing 0    -> admitted, missing 1000
        //   t=0     missing 1000 -> admitted, missing 2000 (empty)
        //   t=0     missing 2000 -> rejected
        //   t=499   refill 998 -> missing 1002 > 1000 -> rejected (0.998 tokens)
        //   t=500   refill 2 more -> missing 1000 -> admitted, missing 2000
        //   t=999   missing 1002 -> rejected
        //   t=1000  missing 1000 -> admitted
        //   t=5000  refilled past capacity: missing 0 (full) -> admitted, missing 1000
        //   t=5000  -> admitted, missing 2000;  t=5000 -> rejected
        let alg = tb("2/1s", 2);
        let times = [0, 0, 0, 499, 500, 999, 1000, 5000, 5000, 5000];
        assert_eq!(decisions(&alg, &times), expect("yy n n y n y yy n"));
    }

    #[test]
    fn fractional_refill_is_exact() {
        // 3/1s, B=1: a token every 333⅓ ms. One token = 1000 units, +3 per ms.
        //   t=0    admitted (missing 1000)
        //   t=333  refill 999 -> missing 1 -> rejected
        //   t=334  refill 1002 from t=0 -> missing 0 -> admitted (missing 1000, last 334)
        //   t=667  refill 999 -> missing 1 -> rejected
        //   t=668  refill 1002 -> admitted;  t=1000: refill 996 -> missing 4 -> rejected
        //   t=1001 refill 999 -> missing 1 -> rejected;  t=1002 -> admitted
        let alg = tb("3/1s", 1);
        let times = [0, 333, 334, 667, 668, 1000, 1001, 1002];
        assert_eq!(decisions(&alg, &times), expect("y n y n y nn y"));
    }

    #[test]
    fn burst_larger_than_limit() {
        // 1/1s, B=3: three at once, then one per second.
        let alg = tb("1/1s", 3);
        let times = [0, 0, 0, 0, 999, 1000, 1999, 2000];
        assert_eq!(decisions(&alg, &times), expect("yyy n n y n y"));
    }

    #[test]
    fn works_before_the_epoch() {
        // 1/1s, B=1, times before the zero state's clock: t=-337 admitted, and the
        // bucket refills from -337, so t=663 is admitted and t=662 would not be.
        let alg = tb("1/1s", 1);
        assert_eq!(decisions(&alg, &[-337, 662, 663]), expect("y n y"));
    }

    #[test]
    fn zero_burst_or_overflow_is_refused() {
        assert!(TokenBucket::new("1/1s".parse().unwrap(), 0).is_none());
        assert!(TokenBucket::new("1/1h".parse().unwrap(), u64::MAX / 1000).is_none());
    }

    proptest::proptest! {
        #[test]
        fn dropping_an_idle_state_changes_no_decision(
            times in idle_test_times(),
        ) {
            check_idle_drops(&tb("2/1s", 3), &times);
        }
    }

    #[test]
    fn a_state_is_idle_once_it_decides_like_the_empty_one() {
        let alg = tb("2/1s", 2);
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
