//! One rule's limiter states, one per key, whatever the algorithm: the
//! [`Algorithm`] calls of the replay loop, keyed by client, with idle states
//! dropped on a sweep.

use std::collections::HashMap;

use crate::simulate::Algorithm;
use crate::units::Millis;

/// The states of one rule's keys, whatever the algorithm.
pub(super) trait KeyedStates: Send + std::fmt::Debug {
    fn allows(&mut self, key: &str, t: Millis) -> bool;
    fn record(&mut self, key: &str, t: Millis);
    fn rejected(&mut self, key: &str, t: Millis);
    /// Drops idle states; returns how many are left.
    fn sweep(&mut self, t: Millis) -> usize;
    fn len(&self) -> usize;
}

#[derive(Debug)]
pub(super) struct Keyed<A: Algorithm> {
    pub(super) alg: A,
    pub(super) states: HashMap<Box<str>, A::State>,
}

impl<A: Algorithm + std::fmt::Debug> KeyedStates for Keyed<A>
where
    A::State: std::fmt::Debug,
{
    fn allows(&mut self, key: &str, t: Millis) -> bool {
        if let Some(state) = self.states.get_mut(key) {
            return self.alg.allows(state, t);
        }
        let mut state = A::State::default();
        let allowed = self.alg.allows(&mut state, t);
        self.states.insert(key.into(), state);
        allowed
    }

    fn record(&mut self, key: &str, t: Millis) {
        if let Some(state) = self.states.get_mut(key) {
            self.alg.record(state, t);
        }
    }

    fn rejected(&mut self, key: &str, t: Millis) {
        if let Some(state) = self.states.get_mut(key) {
            self.alg.rejected(state, t);
        }
    }

    fn sweep(&mut self, t: Millis) -> usize {
        let alg = &self.alg;
        self.states.retain(|_, state| !alg.is_idle(state, t));
        self.states.len()
    }

    fn len(&self) -> usize {
        self.states.len()
    }
}
