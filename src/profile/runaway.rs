//! **Runaway loop**: a sustained rate far above the baseline over consecutive
//! windows, on few endpoints, for part of the log (an episode; a client above
//! the threshold nearly all the time is a [`super::steady`] client instead).
//!
//! Thresholds: at least [`MIN_RUN`] windows in a row above T = 5 × the
//! baseline's p99; at least [`ENDPOINT_SHARE`] of its requests on its
//! [`FEW_ENDPOINTS`] busiest endpoints; above T in fewer than
//! [`super::steady::STEADY_SHARE`] of the windows the log spans.

use super::steady::STEADY_SHARE;
use super::{Finding, Kind, Profile, Subject};

/// Windows in a row above T.
pub const MIN_RUN: u64 = 3;
/// Share of requests on the busiest endpoints.
pub const ENDPOINT_SHARE: f64 = 0.8;
/// How many endpoints "few" is.
pub const FEW_ENDPOINTS: usize = 2;

/// See the module documentation.
pub struct RunawayLoop;

impl Profile for RunawayLoop {
    fn among_all(&self) -> bool {
        false
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let w = s.windows?;
        let ctx = s.ctx;
        let (share, names) = s.top_endpoints(FEW_ENDPOINTS);
        let steady = w.windows_above as f64 >= STEADY_SHARE * ctx.span_windows as f64;
        if w.longest_run < MIN_RUN || share < ENDPOINT_SHARE || steady {
            return None;
        }
        Some(Finding {
            kind: Kind::RunawayLoop,
            evidence: format!(
                "peak {}/{}; {} windows in a row above 5 x p99 {} = {}/{}; {:.0}% of its requests on {}",
                w.peak_window,
                ctx.window,
                w.longest_run,
                ctx.p99,
                ctx.threshold,
                ctx.window,
                share * 100.0,
                names.join(", ")
            ),
            suggestion: "a client stuck in a loop: the limit should stop it; tell its owner".into(),
        })
    }
}
