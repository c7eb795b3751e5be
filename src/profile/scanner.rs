//! **Scanner**: most answers 4xx over many distinct endpoints (probing for
//! `/.env`, `/wp-admin`, …). 429 answers are not counted: they are a limiter's
//! answer, not the client's mistake.
//!
//! Thresholds: at least [`MIN_SHARE`] of its requests answered 400–499 (not
//! 429), on at least [`MIN_ENDPOINTS`] distinct endpoints.

use super::{Finding, Kind, Profile, Subject};

/// Share of requests answered 4xx (429 aside).
pub const MIN_SHARE: f64 = 0.5;
/// Distinct endpoints answered 4xx.
pub const MIN_ENDPOINTS: u64 = 20;

/// See the module documentation.
pub struct Scanner;

impl Profile for Scanner {
    fn among_all(&self) -> bool {
        true
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let f = s.facts;
        let share = f.client_errors as f64 / f.requests.max(1) as f64;
        if share < MIN_SHARE || f.client_error_endpoints < MIN_ENDPOINTS {
            return None;
        }
        Some(Finding {
            kind: Kind::Scanner,
            evidence: format!(
                "{} of {} answers 4xx ({:.0}%, 429 not counted) on {} distinct endpoints",
                f.client_errors,
                f.requests,
                share * 100.0,
                f.client_error_endpoints
            ),
            suggestion: "a vulnerability scanner: block or limit it hard; it is not a user".into(),
        })
    }
}
