//! The time enough decided requests have reached for the states to be swept
//! there: the [`REACHED_BY`]th newest time decided. One line far ahead of the
//! others (a host whose clock is off, a stray timestamp in the past that the
//! future guard lets by) moves the newest time; sweeping there would drop the
//! states its neighbours' requests are placed against and leave every
//! client without one unplaced until the log catches up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::Millis;

/// How many decided requests must reach a time before states are swept there.
pub const REACHED_BY: usize = 64;

/// The newest `by` times decided.
#[derive(Debug)]
pub(super) struct Reached {
    by: usize,
    newest: BinaryHeap<Reverse<Millis>>,
}

impl Default for Reached {
    fn default() -> Self {
        Reached::by(REACHED_BY)
    }
}

impl Reached {
    /// The time `by` requests have reached (the tests' short sequences
    /// sweep at the newest time with 1).
    pub(super) fn by(by: usize) -> Self {
        Reached {
            by: by.max(1),
            newest: BinaryHeap::with_capacity(by + 1),
        }
    }

    pub(super) fn push(&mut self, t: Millis) {
        if self.newest.len() < self.by {
            self.newest.push(Reverse(t));
        } else if let Some(mut least) = self.newest.peek_mut()
            && least.0 < t
        {
            *least = Reverse(t);
        }
    }

    /// The oldest of the newest times kept: a time `by` requests have
    /// reached (every request decided, while fewer were).
    pub(super) fn time(&self) -> Option<Millis> {
        self.newest.peek().map(|least| least.0)
    }
}
