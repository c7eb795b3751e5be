//! The time enough requests have reached: the [`REACHED_BY`]th newest time
//! seen. The reorder buffer releases by it rather than by the newest time,
//! so that one line far ahead of the others (a stray timestamp, a host whose
//! clock jumped) is held until the log reaches it, instead of making every
//! line after it late; and the shadow sweeps limiter states by it, so that
//! such a line, when it gets out anyway, does not drop the states its
//! neighbours are placed against.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::Millis;

/// How many requests must reach a time before it is released or swept by.
pub const REACHED_BY: usize = 64;

/// The newest `by` times seen.
#[derive(Debug)]
pub struct Reached {
    by: usize,
    newest: BinaryHeap<Reverse<Millis>>,
}

impl Default for Reached {
    fn default() -> Self {
        Reached::by(REACHED_BY)
    }
}

impl Reached {
    /// The time `by` requests have reached (1: the newest time).
    pub fn by(by: usize) -> Self {
        Reached {
            by: by.max(1),
            newest: BinaryHeap::with_capacity(by + 1),
        }
    }

    pub fn push(&mut self, t: Millis) {
        if self.newest.len() < self.by {
            self.newest.push(Reverse(t));
        } else if let Some(mut least) = self.newest.peek_mut()
            && least.0 < t
        {
            *least = Reverse(t);
        }
    }

    /// The oldest of the newest times kept: a time `by` requests have
    /// reached (every one seen, while fewer were).
    pub fn time(&self) -> Option<Millis> {
        self.newest.peek().map(|least| least.0)
    }
}
