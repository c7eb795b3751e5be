//! **Heavy steady client**: above the threshold in nearly every window the log
//! spans (a batch job, an integration, or a loop that never stopped). It may
//! be legitimate, so the suggestion is a rule of its own, not a block.
//!
//! Thresholds: above T = 5 × the baseline's p99 in at least [`STEADY_SHARE`]
//! of the windows the log spans, and in at least [`MIN_WINDOWS`] windows. The
//! test and the evidence are functions of their own, which `rlctl watch` shares.

use super::{Finding, Kind, Profile, Subject, WindowFacts};
use crate::units::Window;

/// Share of the spanned windows above T.
pub const STEADY_SHARE: f64 = 0.9;
/// Windows above T at least.
pub const MIN_WINDOWS: u64 = 3;

/// See the module documentation.
pub struct HeavySteady;

impl Profile for HeavySteady {
    fn among_all(&self) -> bool {
        false
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let w = s.windows?;
        let ctx = s.ctx;
        if !is_steady(w.windows_above, ctx.span_windows) {
            return None;
        }
        Some(finding(
            &w,
            ctx.window,
            ctx.p99,
            ctx.threshold,
            ctx.span_windows,
        ))
    }
}

/// Whether `windows_above` T is at least [`STEADY_SHARE`] of `span_windows`.
pub fn mostly_above(windows_above: u64, span_windows: u64) -> bool {
    windows_above as f64 >= STEADY_SHARE * span_windows as f64
}

/// Whether a client above T in `windows_above` of the `span_windows` spanned
/// is a heavy steady client.
pub fn is_steady(windows_above: u64, span_windows: u64) -> bool {
    windows_above >= MIN_WINDOWS && mostly_above(windows_above, span_windows)
}

/// The finding, with its evidence: the windows above T = `threshold` (5 ×
/// `p99`) among the `span_windows` spanned, and the peak.
pub fn finding(
    w: &WindowFacts,
    window: Window,
    p99: u64,
    threshold: u64,
    span_windows: u64,
) -> Finding {
    Finding {
        kind: Kind::HeavySteady,
        evidence: format!(
            "above 5 x p99 {p99} = {threshold}/{window} in {} of {span_windows} windows; peak {}/{window}",
            w.windows_above, w.peak_window,
        ),
        suggestion: "a batch job or integration: if legitimate, give it a rule of its own (a client rule with exempt = true or a higher limit)".into(),
    }
}
