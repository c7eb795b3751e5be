//! One rule's limiter states, one per key, whatever the algorithm: the
//! [`Algorithm`] calls of the replay loop, keyed by client, with idle states
//! dropped on a sweep.
//!
//! Each key keeps the time of its last decision, and a key's time never goes
//! back: a late request (older than one the key already decided) is decided
//! at that time. A late request of a key whose requests so far are all older
//! is decided at its own time, as the replay of the sorted log decides it.

use std::collections::HashMap;

use crate::simulate::Algorithm;
use crate::units::Millis;

/// The states of one rule's keys, whatever the algorithm.
pub(super) trait KeyedStates: Send + std::fmt::Debug {
    /// Whether the key's limiter admits a request at `t`, and the time it
    /// decided at: `t`, or the key's last decision when that is later.
    fn allows(&mut self, key: &str, t: Millis) -> (bool, Millis);
    /// The request decided at `at` (from [`KeyedStates::allows`]) was admitted.
    fn record(&mut self, key: &str, at: Millis);
    /// The request decided at `at` was rejected.
    fn rejected(&mut self, key: &str, at: Millis);
    /// Drops idle states; returns how many are left.
    fn sweep(&mut self, t: Millis) -> usize;
    fn len(&self) -> usize;
}

#[derive(Debug)]
pub(super) struct Keyed<A: Algorithm> {
    pub(super) alg: A,
    /// Per key: its state and the time of its last decision.
    pub(super) states: HashMap<Box<str>, (A::State, Millis)>,
}

impl<A: Algorithm + std::fmt::Debug> KeyedStates for Keyed<A>
where
    A::State: std::fmt::Debug,
{
    fn allows(&mut self, key: &str, t: Millis) -> (bool, Millis) {
        if let Some((state, last)) = self.states.get_mut(key) {
            *last = t.max(*last);
            return (self.alg.allows(state, *last), *last);
        }
        let mut state = A::State::default();
        let allowed = self.alg.allows(&mut state, t);
        self.states.insert(key.into(), (state, t));
        (allowed, t)
    }

    fn record(&mut self, key: &str, at: Millis) {
        if let Some((state, _)) = self.states.get_mut(key) {
            self.alg.record(state, at);
        }
    }

    fn rejected(&mut self, key: &str, at: Millis) {
        if let Some((state, _)) = self.states.get_mut(key) {
            self.alg.rejected(state, at);
        }
    }

    fn sweep(&mut self, t: Millis) -> usize {
        let alg = &self.alg;
        self.states.retain(|_, (state, _)| !alg.is_idle(state, t));
        self.states.len()
    }

    fn len(&self) -> usize {
        self.states.len()
    }
}
