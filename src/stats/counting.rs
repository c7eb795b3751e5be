//! One pass over time-ordered events that counts requests per key per window and
//! per second, closing each window into the distributions as time moves on.
//!
//! A key is a client (overall figures) or a (client, endpoint) pair (per-endpoint
//! figures). Windows are aligned to the Unix epoch: a request at t belongs to
//! window floor(t / W).

use crate::units::{Millis, Window};

use super::quantiles::CountDistribution;

/// The running counts of one key.
#[derive(Debug, Clone, Copy)]
pub struct KeyCounts {
    window: i64,
    in_window: u64,
    second: i64,
    in_second: u64,
    /// Requests of this key so far.
    pub requests: u64,
    /// Largest count in one window.
    pub peak_window: u64,
    /// Largest count in one second.
    pub peak_second: u64,
}

impl Default for KeyCounts {
    fn default() -> Self {
        KeyCounts {
            window: i64::MIN,
            in_window: 0,
            second: i64::MIN,
            in_second: 0,
            requests: 0,
            peak_window: 0,
            peak_second: 0,
        }
    }
}

/// The distributions of one scope (everything, or one endpoint).
#[derive(Debug, Clone, Default)]
pub struct ScopeDistributions {
    /// One sample per (key, window) with at least one request.
    pub per_window: CountDistribution,
    /// One sample per (key, second) with at least one request.
    pub per_second: CountDistribution,
}

/// A closed window of one key: (window index, count).
pub type ClosedWindow = (i64, u64);

impl KeyCounts {
    /// Counts a request at `t`; a window that closes is recorded in `into` and passed to `closed`.
    pub fn add(
        &mut self,
        t: Millis,
        window: Window,
        into: &mut ScopeDistributions,
        closed: &mut impl FnMut(ClosedWindow),
    ) {
        let w = window.index(t);
        if w != self.window {
            self.close_window(into, closed);
            self.window = w;
        }
        let s = t.div_euclid(1000);
        if s != self.second {
            self.close_second(into);
            self.second = s;
        }
        self.in_window += 1;
        self.in_second += 1;
        self.requests += 1;
    }

    fn close_window(
        &mut self,
        into: &mut ScopeDistributions,
        closed: &mut impl FnMut(ClosedWindow),
    ) {
        if self.in_window > 0 {
            into.per_window.record(self.in_window);
            self.peak_window = self.peak_window.max(self.in_window);
            closed((self.window, self.in_window));
            self.in_window = 0;
        }
    }

    fn close_second(&mut self, into: &mut ScopeDistributions) {
        if self.in_second > 0 {
            into.per_second.record(self.in_second);
            self.peak_second = self.peak_second.max(self.in_second);
            self.in_second = 0;
        }
    }

    /// Closes the open window and second at the end of input.
    pub fn finish(&mut self, into: &mut ScopeDistributions, closed: &mut impl FnMut(ClosedWindow)) {
        self.close_window(into, closed);
        self.close_second(into);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_seconds_close_as_time_moves() {
        let w: Window = "10s".parse().unwrap();
        let mut k = KeyCounts::default();
        let mut d = ScopeDistributions::default();
        let mut closed = Vec::new();
        // seconds 0,0,0.999 | 1 | 9.999 | 10 (new window)
        for t in [0, 500, 999, 1000, 9_999, 10_000] {
            k.add(t, w, &mut d, &mut |c| closed.push(c));
        }
        k.finish(&mut d, &mut |c| closed.push(c));
        assert_eq!(closed, vec![(0, 5), (1, 1)]);
        assert_eq!(d.per_window.rows(), vec![(1, 1), (5, 1)]);
        assert_eq!(d.per_second.rows(), vec![(1, 3), (3, 1)]);
        assert_eq!((k.peak_window, k.peak_second, k.requests), (5, 3, 6));
    }

    #[test]
    fn negative_times_align_to_the_epoch() {
        let w: Window = "1m".parse().unwrap();
        let mut k = KeyCounts::default();
        let mut d = ScopeDistributions::default();
        let mut closed = Vec::new();
        for t in [-1, 0] {
            k.add(t, w, &mut d, &mut |c| closed.push(c));
        }
        k.finish(&mut d, &mut |c| closed.push(c));
        assert_eq!(closed, vec![(-1, 1), (0, 1)]);
    }
}
