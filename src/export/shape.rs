//! A rule in product-neutral terms ([`Shape`]): its rate, how much it admits
//! at once, and the most it admits in a span or an aligned window, the bounds
//! the exporters' safe conversions rest on (see the module doc of `export`).

use super::ExportError;
use crate::policy::CheckedRule;
use crate::simulate::AlgorithmKind;
use crate::units::Limit;

/// Which family of algorithm a rule uses, for the bounds of the module doc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// token-bucket, gcra, leaky-bucket: a bucket of `capacity` refilled at L/W.
    Bucket,
    /// sliding-log: at most L in any span of W.
    SlidingLog,
    /// fixed-window, sliding-counter: at most L per epoch-aligned window.
    AlignedWindow,
}

/// A rule in product-neutral terms: its rate and how much it admits at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    /// L per W.
    pub limit: Limit,
    /// C: requests an idle client may send at once.
    pub capacity: u64,
    /// The algorithm's family.
    pub family: Family,
    /// How C follows from the rule, for comments.
    pub capacity_note: String,
}

impl Shape {
    /// The shape of `rule`; an error when its burst admits nothing.
    pub fn of(rule: &CheckedRule) -> Result<Shape, ExportError> {
        let limit = rule.spec.limit;
        let l = limit.requests;
        let (family, capacity, capacity_note) = match rule.spec.kind {
            AlgorithmKind::TokenBucket | AlgorithmKind::Gcra => {
                // A checked policy never has a burst of 0 here.
                let c = rule.spec.burst.unwrap_or(l);
                let note = match rule.spec.burst {
                    Some(b) => format!("{} burst {b} admits {b} at once", rule.spec.kind),
                    None => format!("{} without a burst holds L = {l}", rule.spec.kind),
                };
                (Family::Bucket, c, note)
            }
            AlgorithmKind::LeakyBucket => {
                let b = rule.spec.burst.unwrap_or(0);
                let c = b.saturating_add(1);
                let note = format!("leaky-bucket burst {b} (nginx convention) admits {c} at once");
                (Family::Bucket, c, note)
            }
            AlgorithmKind::SlidingLog => {
                let note = format!("sliding-log admits at most {l} at once");
                (Family::SlidingLog, l, note)
            }
            other => {
                let c = l.saturating_mul(2);
                let note = format!(
                    "{other} admits {l} at the end of one window and {l} more at the start of the next: {c} at once"
                );
                (Family::AlignedWindow, c, note)
            }
        };
        Ok(Shape {
            limit,
            capacity,
            family,
            capacity_note,
        })
    }

    /// The most requests the rule admits from one client in any span of `secs` seconds.
    pub fn most_in_span(&self, secs: u64) -> u64 {
        let (l, w) = (self.limit.requests, u64::from(self.limit.window.secs()));
        let refill = mul_div_ceil(l, secs, w);
        let bucket = self.capacity.saturating_add(refill).saturating_sub(1);
        let windows = secs.div_ceil(w);
        match self.family {
            Family::Bucket => bucket,
            Family::SlidingLog => bucket.min(l.saturating_mul(windows)),
            Family::AlignedWindow => bucket.min(l.saturating_mul(windows + 1)),
        }
    }

    /// The most requests the rule admits from one client in one epoch-aligned
    /// window of `secs` seconds (windows of the rule are epoch-aligned too).
    pub fn most_in_aligned_window(&self, secs: u64) -> u64 {
        let (l, w) = (self.limit.requests, u64::from(self.limit.window.secs()));
        let span = self.most_in_span(secs);
        if self.family == Family::Bucket {
            return span;
        }
        if secs.is_multiple_of(w) {
            span.min(l.saturating_mul(secs / w))
        } else if w % secs == 0 {
            span.min(l)
        } else {
            span
        }
    }
}

/// ⌈a·b/c⌉ without overflow (saturating at `u64::MAX`).
pub fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    let q = (u128::from(a) * u128::from(b)).div_ceil(u128::from(c.max(1)));
    u64::try_from(q).unwrap_or(u64::MAX)
}
