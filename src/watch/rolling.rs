//! One rule's figures over the last hour of log time, in fixed-size
//! structures: a ring of 60 one-minute slots, each with the distinct clients
//! seen and hit ([`Distinct`]) and the distribution of requests per client per
//! window of the rule ([`CountDistribution`], an HDR histogram).
//!
//! A client's count for a window is recorded in the slot of the minute its
//! window ends, once it has ended (a client's next request in a later window,
//! or a sweep); windows still open are not part of the distribution, so a
//! partly elapsed window never drags the quantiles down. Beside it, a second
//! distribution leaves out the windows of clients in the rule's top table
//! when their window closed: the baseline the profiles' T rests on (as
//! `rlctl analyze` separates heavy clients before it takes the p99). Only the counters of
//! open windows grow with the number of clients, and a sweep closes them.

use std::collections::HashMap;

use super::distinct::Distinct;
use crate::stats::quantiles::CountDistribution;
use crate::units::Millis;

/// Slots in the ring: one hour of minutes.
pub const SLOTS: i64 = 60;
const MINUTE_MS: Millis = 60_000;

/// The quantiles exported, as (label, numerator, denominator).
pub const QUANTILES: [(&str, u64, u64); 4] = [
    ("0.5", 1, 2),
    ("0.9", 9, 10),
    ("0.99", 99, 100),
    ("0.999", 999, 1000),
];

#[derive(Debug, Clone, Default)]
struct Slot {
    minute: i64,
    seen: Distinct,
    hit: Distinct,
    per_window: CountDistribution,
    /// The windows of clients outside the top table.
    baseline: CountDistribution,
}

/// The last hour's figures of one rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HourFigures {
    /// Distinct clients the rule applied to.
    pub clients_seen: u64,
    /// Distinct clients with at least one request the rule would reject.
    pub clients_hit: u64,
    /// False once a count comes from the sketch (more than 1024 clients in a part).
    pub exact: bool,
    /// Client windows that ended in the hour.
    pub windows: u64,
    /// The requests of those windows.
    pub requests: u64,
    /// Requests per client per window at each of [`QUANTILES`].
    pub quantiles: Vec<(String, u64)>,
    /// The p99 of the windows of clients outside the top table (the
    /// baseline of the top clients' profiles); of every window when all the
    /// clients with a window in the hour were in it.
    pub baseline_p99: u64,
}

/// The rolling figures of one rule.
#[derive(Debug, Clone)]
pub struct Rolling {
    window_ms: Millis,
    slots: Vec<Slot>,
    /// Per client: its open window and the requests in it.
    open: HashMap<Box<str>, (i64, u64)>,
}

impl Rolling {
    /// Figures for a rule whose window is `window_ms`.
    pub fn new(window_ms: Millis) -> Self {
        Rolling {
            window_ms: window_ms.max(1),
            slots: vec![
                Slot {
                    minute: i64::MIN,
                    ..Slot::default()
                };
                SLOTS as usize
            ],
            open: HashMap::new(),
        }
    }

    /// The slot for `minute`, emptied when it held an older minute; `None`
    /// for a minute older than the one the slot holds.
    fn slot(&mut self, minute: i64) -> Option<&mut Slot> {
        let slot = &mut self.slots[minute.rem_euclid(SLOTS) as usize];
        if slot.minute < minute {
            *slot = Slot {
                minute,
                ..Slot::default()
            };
        }
        (slot.minute == minute).then_some(slot)
    }

    /// Records a request of `key` (hashed as `hash`) at `t`, rejected or not;
    /// `tracked`: `key` is in the rule's top table.
    pub fn observe(&mut self, key: &str, hash: u64, t: Millis, rejected: bool, tracked: bool) {
        let minute = t.div_euclid(MINUTE_MS);
        if let Some(slot) = self.slot(minute) {
            slot.seen.insert(hash);
            if rejected {
                slot.hit.insert(hash);
            }
        }
        let window = t.div_euclid(self.window_ms);
        let closed = match self.open.get_mut(key) {
            Some((open, count)) if *open == window => {
                *count += 1;
                None
            }
            Some(entry) => Some(std::mem::replace(entry, (window, 1))),
            None => {
                self.open.insert(key.into(), (window, 1));
                None
            }
        };
        if let Some((w, count)) = closed {
            self.close(w, count, tracked);
        }
    }

    fn close(&mut self, window: i64, count: u64, tracked: bool) {
        let end = (window + 1).saturating_mul(self.window_ms) - 1;
        if let Some(slot) = self.slot(end.div_euclid(MINUTE_MS)) {
            slot.per_window.record(count);
            if !tracked {
                slot.baseline.record(count);
            }
        }
    }

    /// Closes every window that ended before `t`; `tracked` tells which
    /// clients are in the rule's top table.
    pub fn sweep(&mut self, t: Millis, tracked: impl Fn(&str) -> bool) {
        let current = t.div_euclid(self.window_ms);
        let mut closed = Vec::new();
        self.open.retain(|key, &mut (w, count)| {
            let keep = w >= current;
            if !keep {
                closed.push((w, count, tracked(key)));
            }
            keep
        });
        for (w, count, tracked) in closed {
            self.close(w, count, tracked);
        }
    }

    /// The requests of `key` in its open window (0 when it has none).
    pub fn open_count(&self, key: &str) -> u64 {
        self.open.get(key).map_or(0, |&(_, count)| count)
    }

    /// Clients with a window still open.
    pub fn open_windows(&self) -> usize {
        self.open.len()
    }

    /// The figures of the hour ending at `t` (the 60 minutes up to t's).
    pub fn hour(&self, t: Millis) -> HourFigures {
        let now = t.div_euclid(MINUTE_MS);
        let recent: Vec<&Slot> = self
            .slots
            .iter()
            .filter(|s| s.minute <= now && s.minute > now - SLOTS)
            .collect();
        let seen = Distinct::union(recent.iter().map(|s| &s.seen));
        let hit = Distinct::union(recent.iter().map(|s| &s.hit));
        let mut per_window = CountDistribution::default();
        let mut baseline = CountDistribution::default();
        for slot in &recent {
            for (count, n) in slot.per_window.rows() {
                per_window.record_n(count, n);
            }
            for (count, n) in slot.baseline.rows() {
                baseline.record_n(count, n);
            }
        }
        HourFigures {
            clients_seen: seen.count(),
            clients_hit: hit.count().min(seen.count()),
            exact: seen.is_exact() && hit.is_exact(),
            windows: per_window.samples(),
            requests: (per_window.rows().iter())
                .map(|&(count, n)| count * n)
                .sum(),
            quantiles: QUANTILES
                .iter()
                .map(|&(label, num, den)| (label.to_string(), per_window.quantile(num, den)))
                .collect(),
            baseline_p99: if baseline.samples() > 0 {
                baseline.quantile(99, 100)
            } else {
                per_window.quantile(99, 100)
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::distinct::key_hash;

    fn observe(r: &mut Rolling, key: &str, t: Millis, rejected: bool) {
        r.observe(key, key_hash(key), t, rejected, key == "tracked");
    }

    #[test]
    fn counts_clients_and_windows_of_the_last_hour() {
        // Window 1 minute. Client a: 3 requests in minute 0, 1 in minute 1.
        // Client b: 5 in minute 0, one of them rejected.
        let mut r = Rolling::new(60_000);
        for t in [0, 10, 20] {
            observe(&mut r, "a", t, false);
        }
        for t in [1, 2, 3, 4, 5] {
            observe(&mut r, "b", t, t == 5);
        }
        observe(&mut r, "a", 60_000, false); // closes a's minute 0 (3)
        let h = r.hour(60_000);
        assert_eq!((h.clients_seen, h.clients_hit, h.windows), (2, 1, 1));
        r.sweep(60_001, |_| false); // closes b's minute 0 (5); a's minute 1 stays open
        let h = r.hour(60_001);
        assert_eq!(h.windows, 2);
        assert_eq!(
            h.quantiles,
            [("0.5", 3), ("0.9", 5), ("0.99", 5), ("0.999", 5)].map(|(q, v)| (q.to_string(), v))
        );
        assert_eq!(r.open_windows(), 1);
        assert!(h.exact);
    }

    #[test]
    fn the_baseline_leaves_out_the_windows_of_tracked_clients() {
        // Window 1 minute: a sends 3 in minute 0, b 5, "tracked" 50 (it is
        // in the top table when its window closes, at the sweep).
        let mut r = Rolling::new(60_000);
        for (key, n) in [("a", 3), ("b", 5), ("tracked", 50)] {
            for t in 0..n {
                observe(&mut r, key, t, false);
            }
        }
        r.sweep(60_000, |key| key == "tracked");
        let h = r.hour(60_000);
        assert_eq!(h.quantiles[2], ("0.99".to_string(), 50));
        assert_eq!((h.windows, h.baseline_p99), (3, 5));
        // With every client in the table, the baseline is every window.
        let mut r = Rolling::new(60_000);
        observe(&mut r, "tracked", 0, false);
        r.sweep(60_000, |_| true);
        assert_eq!(r.hour(60_000).baseline_p99, 1);
    }

    #[test]
    fn minutes_older_than_an_hour_leave_the_figures() {
        let mut r = Rolling::new(1000);
        observe(&mut r, "old", 0, true);
        r.sweep(5000, |_| false);
        let hour_ms = 3_600_000;
        assert_eq!(r.hour(hour_ms - 1).clients_hit, 1);
        assert_eq!(r.hour(hour_ms - 1).windows, 1);
        // Minute 0 is out of the hour that ends in minute 60.
        observe(&mut r, "new", hour_ms, false);
        let h = r.hour(hour_ms);
        assert_eq!((h.clients_seen, h.clients_hit, h.windows), (1, 0, 0));
        // The ring reused minute 0's slot for minute 60: memory does not grow.
        assert_eq!(r.slots.len(), SLOTS as usize);
    }

    #[test]
    fn a_late_request_for_a_reused_slot_is_not_counted_there() {
        let mut r = Rolling::new(1000);
        observe(&mut r, "a", 3_600_000, false);
        observe(&mut r, "b", 0, false); // minute 0 shares minute 60's slot
        assert_eq!(r.hour(3_600_000).clients_seen, 1);
    }
}
