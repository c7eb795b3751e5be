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

/// The samples of one scope while counting: exact, cheap to add to, and
/// mergeable, so that parts of the table can be counted in parallel.
#[derive(Debug, Clone, Default)]
pub struct ScopeTally {
    pub per_window: Tally,
    pub per_second: Tally,
}

impl ScopeTally {
    /// Adds the samples of `other`.
    pub fn absorb(&mut self, other: &ScopeTally) {
        self.per_window.absorb(&other.per_window);
        self.per_second.absorb(&other.per_second);
    }

    /// The distributions of these samples.
    pub fn distributions(&self) -> ScopeDistributions {
        ScopeDistributions {
            per_window: self.per_window.distribution(),
            per_second: self.per_second.distribution(),
        }
    }
}

/// Counts below this are tallied in a dense array; larger ones are listed.
const DENSE_COUNTS: u64 = 4096;

/// A multiset of counts: how many samples had each count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// `dense[c]`: samples with count `c`, for `c` below [`DENSE_COUNTS`].
    dense: Vec<u64>,
    /// Samples of [`DENSE_COUNTS`] or more, one entry each.
    large: Vec<u64>,
}

impl Tally {
    /// Adds one sample.
    pub fn record(&mut self, count: u64) {
        if count < DENSE_COUNTS {
            let c = count as usize;
            if c >= self.dense.len() {
                self.dense.resize(c + 1, 0);
            }
            self.dense[c] += 1;
        } else {
            self.large.push(count);
        }
    }

    /// Adds the samples of `other`.
    pub fn absorb(&mut self, other: &Tally) {
        if self.dense.len() < other.dense.len() {
            self.dense.resize(other.dense.len(), 0);
        }
        for (mine, theirs) in self.dense.iter_mut().zip(&other.dense) {
            *mine += theirs;
        }
        self.large.extend_from_slice(&other.large);
    }

    /// The same samples as a distribution.
    pub fn distribution(&self) -> CountDistribution {
        let mut d = CountDistribution::default();
        for (count, &n) in self.dense.iter().enumerate() {
            d.record_n(count as u64, n);
        }
        for &count in &self.large {
            d.record(count);
        }
        d
    }
}

/// A closed window of one key: (window index, count).
pub type ClosedWindow = (i64, u64);

impl KeyCounts {
    /// Counts a request at `t`; a window that closes is recorded in `into` and passed to `closed`.
    pub fn add(
        &mut self,
        t: Millis,
        window: Window,
        into: &mut ScopeTally,
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

    fn close_window(&mut self, into: &mut ScopeTally, closed: &mut impl FnMut(ClosedWindow)) {
        if self.in_window > 0 {
            into.per_window.record(self.in_window);
            self.peak_window = self.peak_window.max(self.in_window);
            closed((self.window, self.in_window));
            self.in_window = 0;
        }
    }

    fn close_second(&mut self, into: &mut ScopeTally) {
        if self.in_second > 0 {
            into.per_second.record(self.in_second);
            self.peak_second = self.peak_second.max(self.in_second);
            self.in_second = 0;
        }
    }

    /// Closes the open window and second at the end of input.
    pub fn finish(&mut self, into: &mut ScopeTally, closed: &mut impl FnMut(ClosedWindow)) {
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
        let mut d = ScopeTally::default();
        let mut closed = Vec::new();
        // seconds 0,0,0.999 | 1 | 9.999 | 10 (new window)
        for t in [0, 500, 999, 1000, 9_999, 10_000] {
            k.add(t, w, &mut d, &mut |c| closed.push(c));
        }
        k.finish(&mut d, &mut |c| closed.push(c));
        assert_eq!(closed, vec![(0, 5), (1, 1)]);
        let d = d.distributions();
        assert_eq!(d.per_window.rows(), vec![(1, 1), (5, 1)]);
        assert_eq!(d.per_second.rows(), vec![(1, 3), (3, 1)]);
        assert_eq!((k.peak_window, k.peak_second, k.requests), (5, 3, 6));
    }

    #[test]
    fn tallies_merge_into_the_distribution_of_all_samples() {
        let samples = [1, 3, 1, 5000, 2, 4095, 4096, 1];
        let (mut all, mut left, mut right) = (Tally::default(), Tally::default(), Tally::default());
        let mut direct = CountDistribution::default();
        for (i, &c) in samples.iter().enumerate() {
            all.record(c);
            direct.record(c);
            if i % 2 == 0 {
                left.record(c)
            } else {
                right.record(c)
            }
        }
        left.absorb(&right);
        assert_eq!(left.distribution().rows(), direct.rows());
        assert_eq!(left.distribution().quantiles(), direct.quantiles());
        assert_eq!(all.distribution().quantiles(), direct.quantiles());
    }

    #[test]
    fn negative_times_align_to_the_epoch() {
        let w: Window = "1m".parse().unwrap();
        let mut k = KeyCounts::default();
        let mut d = ScopeTally::default();
        let mut closed = Vec::new();
        for t in [-1, 0] {
            k.add(t, w, &mut d, &mut |c| closed.push(c));
        }
        k.finish(&mut d, &mut |c| closed.push(c));
        assert_eq!(closed, vec![(-1, 1), (0, 1)]);
    }
}
