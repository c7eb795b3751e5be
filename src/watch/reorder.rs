//! The reorder buffer: requests from several files, each in time order but
//! interleaved a few seconds apart, go out in time order.
//!
//! A request is held until the newest timestamp seen is at least `max_delay`
//! past its own, then released in (time, arrival) order, so that a single file
//! comes out exactly as a stable sort by time would put it (what ingestion
//! does). A request older than one already released is late: it is counted and
//! released right away (at the place of the last request released), with its
//! own time, not dropped; the shadow decides it in its client's own time
//! ([`super::shadow`]).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::units::Millis;

/// One held item.
#[derive(Debug)]
struct Held<T> {
    /// Where it goes out: its time, or for a late item the last time released.
    ts: Millis,
    /// Its own time.
    own: Millis,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.ts, self.seq) == (other.ts, other.seq)
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    /// Reversed, so that the max-heap pops the earliest (time, arrival) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.ts, other.seq).cmp(&(self.ts, self.seq))
    }
}

/// Holds items until their time is `max_delay` behind the newest.
#[derive(Debug)]
pub struct Reorder<T> {
    heap: BinaryHeap<Held<T>>,
    max_delay: Millis,
    seq: u64,
    newest: Option<Millis>,
    released: Option<Millis>,
    late: u64,
}

impl<T> Reorder<T> {
    /// A buffer that waits `max_delay` ms for stragglers.
    pub fn new(max_delay: Millis) -> Self {
        Reorder {
            heap: BinaryHeap::new(),
            max_delay: max_delay.max(0),
            seq: 0,
            newest: None,
            released: None,
            late: 0,
        }
    }

    /// Adds an item at `ts`; returns true when it is late (older than an item
    /// already released), in which case it goes out with the items at that
    /// item's time, still with its own time `ts`.
    pub fn push(&mut self, ts: Millis, item: T) -> bool {
        let late = self.released.is_some_and(|r| ts < r);
        let at = match self.released {
            Some(released) if late => {
                self.late += 1;
                released
            }
            _ => ts,
        };
        self.newest = Some(self.newest.map_or(at, |n| n.max(at)));
        self.seq += 1;
        self.heap.push(Held {
            ts: at,
            own: ts,
            seq: self.seq,
            item,
        });
        late
    }

    /// Releases, in order, every item at least `max_delay` behind the newest.
    pub fn release(&mut self, out: &mut Vec<(Millis, T)>) {
        if let Some(newest) = self.newest {
            self.release_until(newest.saturating_sub(self.max_delay), out);
        }
    }

    /// Releases, in order, every item at or before `until`, each with its
    /// own time.
    pub fn release_until(&mut self, until: Millis, out: &mut Vec<(Millis, T)>) {
        while self.heap.peek().is_some_and(|h| h.ts <= until) {
            let held = self.heap.pop().expect("peeked");
            self.released = Some(held.ts);
            out.push((held.own, held.item));
        }
    }

    /// Releases everything (the end of a replay).
    pub fn flush(&mut self, out: &mut Vec<(Millis, T)>) {
        self.release_until(Millis::MAX, out);
    }

    /// Items held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Late items so far.
    pub fn late(&self) -> u64 {
        self.late
    }

    /// The newest time pushed.
    pub fn newest(&self) -> Option<Millis> {
        self.newest
    }

    /// The time of the last item released.
    pub fn released(&self) -> Option<Millis> {
        self.released
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(r: &mut Reorder<&'static str>) -> Vec<(Millis, &'static str)> {
        let mut out = Vec::new();
        r.release(&mut out);
        out
    }

    #[test]
    fn interleaved_files_come_out_in_time_order() {
        let mut r = Reorder::new(5000);
        // File A is 3 s ahead of file B.
        r.push(10_000, "a1");
        r.push(13_000, "a2");
        r.push(10_500, "b1");
        assert_eq!(drain(&mut r), []);
        r.push(15_000, "a3"); // releases up to 10 000
        assert_eq!(drain(&mut r), [(10_000, "a1")]);
        r.push(12_000, "b2");
        r.push(20_000, "a4"); // releases up to 15 000
        assert_eq!(
            drain(&mut r),
            [
                (10_500, "b1"),
                (12_000, "b2"),
                (13_000, "a2"),
                (15_000, "a3")
            ]
        );
        assert_eq!((r.late(), r.len()), (0, 1));
    }

    #[test]
    fn equal_times_keep_arrival_order() {
        let mut r = Reorder::new(0);
        for name in ["x", "y", "z"] {
            r.push(1000, name);
        }
        assert_eq!(drain(&mut r), [(1000, "x"), (1000, "y"), (1000, "z")]);
        // Same time after the release: not late, and after the others.
        assert!(!r.push(1000, "w"));
        assert_eq!(drain(&mut r), [(1000, "w")]);
    }

    #[test]
    fn late_items_are_counted_and_released_at_once_with_their_own_time() {
        let mut r = Reorder::new(1000);
        r.push(5000, "a");
        r.push(7000, "b"); // releases a
        assert_eq!(drain(&mut r), [(5000, "a")]);
        assert!(r.push(3000, "late"));
        r.push(8000, "c");
        assert_eq!(drain(&mut r), [(3000, "late"), (7000, "b")]);
        // A late item does not hold back nor move the newest time.
        assert_eq!(r.newest(), Some(8000));
        assert_eq!(r.late(), 1);
        let mut out = Vec::new();
        r.flush(&mut out);
        assert_eq!(out, [(8000, "c")]);
        assert!(r.is_empty());
    }

    proptest::proptest! {
        /// When every item is at most max_delay behind the newest one before
        /// it, the output is the stable sort of the input by time, and nothing
        /// is late.
        #[test]
        fn within_the_delay_the_output_is_a_stable_sort(
            steps in proptest::collection::vec((proptest::bool::ANY, 0i64..=2000), 0..200)
        ) {
            let mut r = Reorder::new(2000);
            let mut input = Vec::new();
            let mut out = Vec::new();
            let mut newest = 0;
            for (i, (ahead, amount)) in steps.into_iter().enumerate() {
                let ts = if ahead { newest + amount } else { newest - amount };
                newest = newest.max(ts);
                input.push((ts, i));
                r.push(ts, i);
                r.release(&mut out);
            }
            r.flush(&mut out);
            let mut sorted = input.clone();
            sorted.sort_by_key(|&(ts, _)| ts);
            proptest::prop_assert_eq!(r.late(), 0);
            proptest::prop_assert_eq!(out, sorted);
        }
    }
}
