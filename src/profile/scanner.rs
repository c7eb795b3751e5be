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
        if !is_scanner(f.client_errors, f.requests, f.client_error_endpoints) {
            return None;
        }
        Some(finding(
            f.client_errors,
            f.requests,
            f.client_error_endpoints,
        ))
    }
}

/// The share of `requests` answered 4xx (429 aside).
fn error_share(client_errors: u64, requests: u64) -> f64 {
    client_errors as f64 / requests.max(1) as f64
}

/// Whether `client_errors` of `requests`, on `error_endpoints` distinct
/// endpoints, make a scanner.
pub fn is_scanner(client_errors: u64, requests: u64, error_endpoints: u64) -> bool {
    error_share(client_errors, requests) >= MIN_SHARE && error_endpoints >= MIN_ENDPOINTS
}

/// The finding, with its evidence.
pub fn finding(client_errors: u64, requests: u64, error_endpoints: u64) -> Finding {
    Finding {
        kind: Kind::Scanner,
        evidence: format!(
            "{client_errors} of {requests} answers 4xx ({:.0}%, 429 not counted) on {error_endpoints} distinct endpoints",
            error_share(client_errors, requests) * 100.0,
        ),
        suggestion: "a vulnerability scanner: block or limit it hard; it is not a user".into(),
    }
}
