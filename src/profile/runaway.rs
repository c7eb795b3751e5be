//! **Runaway loop**: a sustained rate far above the baseline over consecutive
//! windows, on few endpoints, for part of the log (an episode; a client above
//! the threshold nearly all the time is a [`super::steady`] client instead).
//!
//! Thresholds: at least [`MIN_RUN`] windows in a row above T = 5 × the
//! baseline's p99; at least [`ENDPOINT_SHARE`] of its requests on its
//! [`FEW_ENDPOINTS`] busiest endpoints; above T in fewer than
//! [`super::steady::STEADY_SHARE`] of the windows the log spans. The test
//! and the evidence are functions of their own, which `rlctl watch` shares.

use super::steady::mostly_above;
use super::{Finding, Kind, Profile, Subject, WindowFacts};
use crate::units::Window;

/// Windows in a row above T.
pub const MIN_RUN: u64 = 3;
/// Share of requests on the busiest endpoints.
pub const ENDPOINT_SHARE: f64 = 0.8;
/// How many endpoints "few" is.
pub const FEW_ENDPOINTS: usize = 2;
const _: () = assert!(FEW_ENDPOINTS <= super::facts::TOP_ENDPOINTS);

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
        if !is_runaway(w.longest_run, share, w.windows_above, ctx.span_windows) {
            return None;
        }
        Some(finding(
            &w,
            ctx.window,
            ctx.p99,
            ctx.threshold,
            share,
            &names,
        ))
    }
}

/// Whether a client with this `longest_run` of windows above T, this `share`
/// of its requests on its [`FEW_ENDPOINTS`] busiest endpoints, and
/// `windows_above` T of the `span_windows` spanned is a runaway loop.
pub fn is_runaway(longest_run: u64, share: f64, windows_above: u64, span_windows: u64) -> bool {
    longest_run >= MIN_RUN && share >= ENDPOINT_SHARE && !mostly_above(windows_above, span_windows)
}

/// The finding, with its evidence: the peak, the run above T = `threshold`
/// (5 × `p99`) and the `share` of requests on the endpoints `names`.
pub fn finding(
    w: &WindowFacts,
    window: Window,
    p99: u64,
    threshold: u64,
    share: f64,
    names: &[&str],
) -> Finding {
    Finding {
        kind: Kind::RunawayLoop,
        evidence: format!(
            "peak {}/{window}; {} windows in a row above 5 x p99 {p99} = {threshold}/{window}; {:.0}% of its requests on {}",
            w.peak_window,
            w.longest_run,
            share * 100.0,
            names.join(", ")
        ),
        suggestion: "a client stuck in a loop: the limit should stop it; tell its owner".into(),
    }
}
