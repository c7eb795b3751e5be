//! The reorder buffer: requests from several files, each in time order but
//! interleaved a few seconds apart, go out in time order.
//!
//! A request is held until the time
//! [`REACHED_BY`](super::reached::REACHED_BY) requests have reached
//! ([`Reached`]) is at least `max_delay` past its own, then released in
//! (time, file, arrival) order, so that files come out exactly as a stable
//! sort by time of the files one after the other would put them (what
//! ingestion does with the files in the order given). Releasing by the
//! newest time instead would let one line far ahead (a stray timestamp, a
//! host whose clock jumped) release everything and make every line after it
//! late; it is held until the log reaches it. A request older than one
//! already released is late: it is counted and released right away (at the
//! place of the last request released), with its own time, not dropped; the
//! shadow decides it in its client's own time where it can
//! ([`super::shadow`]).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::reached::Reached;
use crate::units::Millis;

/// One held item.
#[derive(Debug)]
struct Held<T> {
    /// Where it goes out: its time, or for a late item the last time released.
    ts: Millis,
    /// Its own time.
    own: Millis,
    /// Which file it comes from (ties go in file order).
    file: usize,
    seq: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        (self.ts, self.file, self.seq) == (other.ts, other.file, other.seq)
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    /// Reversed, so that the max-heap pops the earliest (time, file,
    /// arrival) first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.ts, other.file, other.seq).cmp(&(self.ts, self.file, self.seq))
    }
}

/// Holds items until their time is `max_delay` behind the time enough
/// items have reached.
#[derive(Debug)]
pub struct Reorder<T> {
    heap: BinaryHeap<Held<T>>,
    max_delay: Millis,
    seq: u64,
    newest: Option<Millis>,
    /// The newest times of the items pushed in time.
    reached: Reached,
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
            reached: Reached::default(),
            released: None,
            late: 0,
        }
    }

    /// Releases by the time `by` items have reached (1: the newest; tests).
    #[cfg(test)]
    pub fn reached_by(mut self, by: usize) -> Self {
        self.reached = Reached::by(by);
        self
    }

    /// Adds an item of `file` at `ts`; returns true when it is late (older
    /// than an item already released), in which case it goes out with the
    /// items at that item's time, still with its own time `ts`.
    pub fn push(&mut self, ts: Millis, file: usize, item: T) -> bool {
        let late = self.released.is_some_and(|r| ts < r);
        let at = match self.released {
            Some(released) if late => {
                self.late += 1;
                released
            }
            _ => {
                self.reached.push(ts);
                ts
            }
        };
        self.newest = Some(self.newest.map_or(at, |n| n.max(at)));
        self.seq += 1;
        self.heap.push(Held {
            ts: at,
            own: ts,
            file,
            seq: self.seq,
            item,
        });
        late
    }

    /// Releases, in order, every item at least `max_delay` behind the time
    /// [`REACHED_BY`](super::reached::REACHED_BY) items have reached.
    pub fn release(&mut self, out: &mut Vec<(Millis, T)>) {
        if let Some(reached) = self.reached.time() {
            self.release_until(reached.saturating_sub(self.max_delay), out);
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
    use crate::watch::reached::REACHED_BY;

    fn drain(r: &mut Reorder<&'static str>) -> Vec<(Millis, &'static str)> {
        let mut out = Vec::new();
        r.release(&mut out);
        out
    }

    #[test]
    fn interleaved_files_come_out_in_time_order() {
        let mut r = Reorder::new(5000).reached_by(1);
        // File A (0) is 3 s ahead of file B (1).
        r.push(10_000, 0, "a1");
        r.push(13_000, 0, "a2");
        r.push(10_500, 1, "b1");
        assert_eq!(drain(&mut r), []);
        r.push(15_000, 0, "a3"); // releases up to 10 000
        assert_eq!(drain(&mut r), [(10_000, "a1")]);
        r.push(12_000, 1, "b2");
        r.push(20_000, 0, "a4"); // releases up to 15 000
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
    fn equal_times_go_in_file_order_then_arrival_order() {
        let mut r = Reorder::new(0).reached_by(1);
        for (file, name) in [(1, "b1"), (0, "a1"), (1, "b2"), (0, "a2")] {
            r.push(1000, file, name);
        }
        assert_eq!(
            drain(&mut r),
            [(1000, "a1"), (1000, "a2"), (1000, "b1"), (1000, "b2")]
        );
        // Same time after the release: not late, and after the others.
        assert!(!r.push(1000, 0, "w"));
        assert_eq!(drain(&mut r), [(1000, "w")]);
    }

    #[test]
    fn late_items_are_counted_and_released_at_once_with_their_own_time() {
        let mut r = Reorder::new(1000).reached_by(1);
        r.push(5000, 0, "a");
        r.push(7000, 0, "b"); // releases a
        assert_eq!(drain(&mut r), [(5000, "a")]);
        assert!(r.push(3000, 0, "late"));
        r.push(8000, 0, "c");
        assert_eq!(drain(&mut r), [(3000, "late"), (7000, "b")]);
        // A late item does not hold back nor move the newest time.
        assert_eq!(r.newest(), Some(8000));
        assert_eq!(r.late(), 1);
        let mut out = Vec::new();
        r.flush(&mut out);
        assert_eq!(out, [(8000, "c")]);
        assert!(r.is_empty());
    }

    #[test]
    fn a_line_far_ahead_is_held_until_the_log_reaches_it() {
        let mut r = Reorder::new(5000);
        let mut out = Vec::new();
        // A line a second, one of them half an hour ahead (fewer than
        // REACHED_BY such lines): it waits, and nothing after it is late.
        for s in 0..100 {
            r.push(s * 1000, 0, s);
            if s == 50 {
                r.push(1_800_000, 0, -1);
            }
            r.release(&mut out);
        }
        assert_eq!(r.late(), 0);
        assert!(out.iter().all(|&(_, s)| s >= 0), "{out:?}");
        // The time reached: the outlier and REACHED_BY - 1 seconds from 99 s
        // down; released 5 s behind it, from 0 s on.
        let reached = 99 - (REACHED_BY as i64 - 2);
        assert_eq!(out.len() as i64, reached - 5 + 1);
        r.flush(&mut out);
        assert_eq!(out.last(), Some(&(1_800_000, -1)));
        // REACHED_BY lines that far ahead, over more than the delay (a file
        // whose clock runs ahead), are released: what comes after them from
        // the other file is late.
        let mut r = Reorder::new(5000);
        for s in 0..50 {
            r.push(s * 1000, 0, s);
        }
        for i in 0..REACHED_BY as i64 + 5 {
            r.push(1_800_000 + i * 1000, 1, i);
        }
        r.release(&mut out);
        assert_eq!(r.released(), Some(1_800_000));
        assert!(r.push(50_000, 0, 50));
    }

    proptest::proptest! {
        /// When every item is at most max_delay behind the newest one before
        /// it, the output is the stable sort by time of the input's files one
        /// after the other, and nothing is late.
        #[test]
        fn within_the_delay_the_output_is_a_stable_sort(
            steps in proptest::collection::vec(
                (proptest::bool::ANY, 0i64..=2000, 0usize..3), 0..200
            ),
            by in 1usize..=REACHED_BY,
        ) {
            let mut r = Reorder::new(2000).reached_by(by);
            let mut input = Vec::new();
            let mut out = Vec::new();
            let mut newest = 0;
            for (i, (ahead, amount, file)) in steps.into_iter().enumerate() {
                let ts = if ahead { newest + amount } else { newest - amount };
                newest = newest.max(ts);
                input.push((ts, file, i));
                r.push(ts, file, (file, i));
                r.release(&mut out);
            }
            r.flush(&mut out);
            // Files one after the other, stably sorted by time.
            let mut sorted: Vec<(i64, (usize, usize))> =
                input.iter().map(|&(ts, file, i)| (ts, (file, i))).collect();
            sorted.sort_by_key(|&(ts, (file, _))| (ts, file));
            proptest::prop_assert_eq!(r.late(), 0);
            proptest::prop_assert_eq!(out, sorted);
        }
    }
}
