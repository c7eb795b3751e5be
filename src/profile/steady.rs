//! **Heavy steady client**: above the threshold in nearly every window the log
//! spans (a batch job, an integration, or a loop that never stopped). It may
//! be legitimate, so the suggestion is a rule of its own, not a block.
//!
//! Thresholds: above T = 5 × the baseline's p99 in at least [`STEADY_SHARE`]
//! of the windows the log spans, and in at least [`MIN_WINDOWS`] windows.

use super::{Finding, Kind, Profile, Subject};

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
        if w.windows_above < MIN_WINDOWS
            || (w.windows_above as f64) < STEADY_SHARE * ctx.span_windows as f64
        {
            return None;
        }
        Some(Finding {
            kind: Kind::HeavySteady,
            evidence: format!(
                "above 5 x p99 {} = {}/{} in {} of {} windows; peak {}/{}",
                ctx.p99,
                ctx.threshold,
                ctx.window,
                w.windows_above,
                ctx.span_windows,
                w.peak_window,
                ctx.window
            ),
            suggestion: "a batch job or integration: if legitimate, give it a rule of its own (a client rule with exempt = true or a higher limit)".into(),
        })
    }
}
