//! The limits of Kong's `rate-limiting` plugin for a rule (one per fixed
//! window, [`PERIODS`]), and for several rules merged into one plugin.

use std::collections::BTreeMap;

use super::super::Shape;

/// Kong's fixed windows: config field and length in seconds.
pub const PERIODS: [(&str, u64); 4] = [
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
];

/// Kong's longest period set: a day (periods nest in it).
pub const DAY: u64 = 86_400;

/// Per-period limits: index into [`PERIODS`] → requests.
pub type Limits = BTreeMap<usize, u64>;

/// The limits for one rule: every Kong period within a factor 60 of W.
pub fn limits(shape: &Shape) -> Limits {
    let w = u64::from(shape.limit.window.secs());
    PERIODS
        .iter()
        .enumerate()
        // The day also for a window beyond 60 days: Kong needs one period.
        .filter(|(_, (_, p))| {
            (p.saturating_mul(60) >= w || *p == DAY) && *p <= w.saturating_mul(60)
        })
        .map(|(i, (_, p))| (i, shape.most_in_aligned_window(*p)))
        .collect()
}

/// Several rules' limits on one plugin: the smallest per period, then each
/// lowered to the limit of every longer period, so that a longer period
/// never allows less than a shorter one (Kong's schema requires it). Lowering
/// stays exact: Kong's periods are aligned and nest (each second lies in one
/// minute, each minute in one hour...), so no aligned second can hold more
/// than its minute allows. (Raising the shorter periods' limits would also
/// satisfy Kong, but loosen them: 100/1s with 10/1h would let 100 an hour.)
pub fn merge(all: &[Limits]) -> Limits {
    let mut merged = Limits::new();
    for limits in all {
        for (&i, &n) in limits {
            merged
                .entry(i)
                .and_modify(|m: &mut u64| *m = (*m).min(n))
                .or_insert(n);
        }
    }
    let mut ceiling = u64::MAX;
    for n in merged.values_mut().rev() {
        *n = (*n).min(ceiling);
        ceiling = *n;
    }
    merged
}
