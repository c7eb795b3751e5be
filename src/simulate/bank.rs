//! The state of one rule for all its keys, behind an enum so the replay loop over
//! several rules dispatches with a `match`, not a virtual call per decision.

use super::{Algorithm, Limiter};
use super::{
    fixed_window, gateway, gcra, leaky_bucket, sliding_counter, sliding_log, token_bucket,
};
use crate::units::Millis;

/// One rule's algorithm and the states of its keys.
pub(crate) struct States<A: Algorithm> {
    alg: A,
    states: Vec<A::State>,
}

/// [`States`] for any algorithm.
pub(crate) enum Bank {
    FixedWindow(States<fixed_window::FixedWindow>),
    SlidingLog(States<sliding_log::SlidingLog>),
    SlidingCounter(States<sliding_counter::SlidingCounter>),
    TokenBucket(States<token_bucket::TokenBucket>),
    LeakyBucket(States<leaky_bucket::LeakyBucket>),
    Gcra(States<gcra::Gcra>),
    Gateway(States<gateway::Model>),
}

macro_rules! on_bank {
    ($bank:expr, $s:ident => $body:expr) => {
        match $bank {
            Bank::FixedWindow($s) => $body,
            Bank::SlidingLog($s) => $body,
            Bank::SlidingCounter($s) => $body,
            Bank::TokenBucket($s) => $body,
            Bank::LeakyBucket($s) => $body,
            Bank::Gcra($s) => $body,
            Bank::Gateway($s) => $body,
        }
    };
}

fn states<A: Algorithm + Clone>(alg: &A, keys: usize) -> States<A> {
    States {
        alg: alg.clone(),
        states: vec![A::State::default(); keys],
    }
}

impl Bank {
    pub(crate) fn new(limiter: &Limiter, keys: usize) -> Bank {
        match limiter {
            Limiter::FixedWindow(a) => Bank::FixedWindow(states(a, keys)),
            Limiter::SlidingLog(a) => Bank::SlidingLog(states(a, keys)),
            Limiter::SlidingCounter(a) => Bank::SlidingCounter(states(a, keys)),
            Limiter::TokenBucket(a) => Bank::TokenBucket(states(a, keys)),
            Limiter::LeakyBucket(a) => Bank::LeakyBucket(states(a, keys)),
            Limiter::Gcra(a) => Bank::Gcra(states(a, keys)),
            Limiter::Gateway(a) => Bank::Gateway(states(a, keys)),
        }
    }

    pub(crate) fn allows(&mut self, slot: usize, t: Millis) -> bool {
        on_bank!(self, s => s.alg.allows(&mut s.states[slot], t))
    }

    pub(crate) fn record(&mut self, slot: usize, t: Millis) -> u64 {
        on_bank!(self, s => s.alg.record(&mut s.states[slot], t))
    }

    pub(crate) fn rejected(&mut self, slot: usize, t: Millis) {
        on_bank!(self, s => s.alg.rejected(&mut s.states[slot], t))
    }

    /// Every key back to the empty state.
    pub(crate) fn reset(&mut self) {
        on_bank!(self, s => s.states.iter_mut().for_each(|state| *state = Default::default()))
    }
}
