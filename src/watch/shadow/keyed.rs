//! One rule's limiter states, one per key, whatever the algorithm: the
//! [`Algorithm`] calls of the replay loop, keyed by client, with idle states
//! dropped on a sweep.
//!
//! A request is decided only where it can be placed in its key's own time
//! order, as the replay of the sorted log decides it: when the key's state
//! holds no later decision, or when the key has no state and the request is
//! not older than the last sweep (a key without state is then new, or was
//! dropped idle at a time the request is not older than, where an empty
//! state decides the same). Any other request cannot be placed: deciding it
//! later than its time would put a backlog's minutes into one instant.

use std::collections::HashMap;

use crate::simulate::Algorithm;
use crate::units::Millis;

/// The states of one rule's keys, whatever the algorithm.
pub(super) trait KeyedStates: Send + std::fmt::Debug {
    /// Whether a request of the key at `t` can be placed in its time order
    /// (see the module).
    fn placeable(&self, key: &str, t: Millis) -> bool;
    /// Whether the key's limiter admits a request at `t`, one that
    /// [`KeyedStates::placeable`] places.
    fn allows(&mut self, key: &str, t: Millis) -> bool;
    fn record(&mut self, key: &str, t: Millis);
    fn rejected(&mut self, key: &str, t: Millis);
    /// Drops the states idle at `t` whose last decision is not later;
    /// returns how many are left.
    fn sweep(&mut self, t: Millis) -> usize;
    fn len(&self) -> usize;
}

#[derive(Debug)]
pub(super) struct Keyed<A: Algorithm> {
    pub(super) alg: A,
    /// Per key: its state and the time of its last decision.
    pub(super) states: HashMap<Box<str>, (A::State, Millis)>,
    /// The time of the last sweep: a key without state may have been dropped
    /// before it.
    pub(super) swept_until: Millis,
}

impl<A: Algorithm> Keyed<A> {
    pub(super) fn new(alg: A) -> Self {
        Keyed {
            alg,
            states: HashMap::new(),
            swept_until: Millis::MIN,
        }
    }
}

impl<A: Algorithm + std::fmt::Debug> KeyedStates for Keyed<A>
where
    A::State: std::fmt::Debug,
{
    fn placeable(&self, key: &str, t: Millis) -> bool {
        match self.states.get(key) {
            Some((_, last)) => *last <= t,
            None => t >= self.swept_until,
        }
    }

    fn allows(&mut self, key: &str, t: Millis) -> bool {
        if let Some((state, last)) = self.states.get_mut(key) {
            *last = t;
            return self.alg.allows(state, t);
        }
        let mut state = A::State::default();
        let allowed = self.alg.allows(&mut state, t);
        self.states.insert(key.into(), (state, t));
        allowed
    }

    fn record(&mut self, key: &str, t: Millis) {
        if let Some((state, _)) = self.states.get_mut(key) {
            self.alg.record(state, t);
        }
    }

    fn rejected(&mut self, key: &str, t: Millis) {
        if let Some((state, _)) = self.states.get_mut(key) {
            self.alg.rejected(state, t);
        }
    }

    fn sweep(&mut self, t: Millis) -> usize {
        let alg = &self.alg;
        self.swept_until = self.swept_until.max(t);
        self.states
            .retain(|_, (state, last)| *last > t || !alg.is_idle(state, t));
        self.states.len()
    }

    fn len(&self) -> usize {
        self.states.len()
    }
}
