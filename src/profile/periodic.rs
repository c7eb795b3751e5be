//! **Periodic probe** (health check, uptime monitor): requests at a
//! near-constant spacing on one or two paths. A rate-limited health check
//! makes a load balancer take every node out, so the suggestion is an
//! exemption, whatever the rate.
//!
//! Thresholds: at least [`MIN_GAPS`] gaps between requests to its busiest
//! endpoint, a mean gap of at least [`MIN_MEAN_GAP_MS`] ms, a coefficient of
//! variation (standard deviation / mean of the gaps) of at most [`MAX_CV`],
//! and at least [`ENDPOINT_SHARE`] of its requests on its two busiest endpoints.

use super::{Finding, Kind, Profile, Subject};

/// Gaps between requests to the busiest endpoint.
pub const MIN_GAPS: u64 = 20;
/// The mean gap: a probe waits between checks.
pub const MIN_MEAN_GAP_MS: f64 = 1000.0;
/// How much the gaps may vary.
pub const MAX_CV: f64 = 0.1;
/// Share of requests on the two busiest endpoints.
pub const ENDPOINT_SHARE: f64 = 0.9;

/// See the module documentation.
pub struct PeriodicProbe;

impl Profile for PeriodicProbe {
    fn among_all(&self) -> bool {
        true
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let f = s.facts;
        let (share, names) = s.top_endpoints(2);
        if f.gaps < MIN_GAPS
            || f.gap_mean_ms < MIN_MEAN_GAP_MS
            || f.gap_cv > MAX_CV
            || share < ENDPOINT_SHARE
        {
            return None;
        }
        Some(Finding {
            kind: Kind::PeriodicProbe,
            evidence: format!(
                "a request every {:.1} s (variation {:.0}%) on {}, {} requests",
                f.gap_mean_ms / 1000.0,
                f.gap_cv * 100.0,
                names.join(", "),
                f.requests
            ),
            suggestion: exemption(names.first().copied().unwrap_or_default()),
        })
    }
}

/// The exemption suggested for a probe on `endpoint`: for the client, and
/// for the route only when it is a literal path. A template's parameter
/// (`GET /:name`, which a scanner's paths can make of `/healthz`) matches
/// every path at its place, so exempting that route would exempt them all.
pub(super) fn exemption(endpoint: &str) -> String {
    match endpoint.contains(':') {
        false => format!(
            "a health check or monitor: exempt it (a rule with exempt = true for this client or route {endpoint})"
        ),
        true => format!(
            "a health check or monitor: exempt this client (a rule with exempt = true; not the route {endpoint}, whose parameter matches other paths too)"
        ),
    }
}
