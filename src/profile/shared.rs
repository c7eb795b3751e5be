//! **Shared address** (NAT, carrier-grade NAT, corporate proxy): many distinct
//! user agents and/or users behind one client key, so one limit would throttle
//! many people at once. The suggestion is a finer key.
//!
//! Thresholds: at least [`MIN_USER_AGENTS`] distinct user agents, or at least
//! [`MIN_USERS`] distinct users (`$remote_user`, or the JSON user field).

use super::{Finding, Kind, Profile, Subject};

/// Distinct user agents behind one key.
pub const MIN_USER_AGENTS: u64 = 10;
/// Distinct users behind one key.
pub const MIN_USERS: u64 = 5;

/// See the module documentation.
pub struct SharedAddress;

impl Profile for SharedAddress {
    fn among_all(&self) -> bool {
        false
    }

    fn detect(&self, s: &Subject<'_>) -> Option<Finding> {
        let f = s.facts;
        if f.distinct_user_agents < MIN_USER_AGENTS && f.distinct_users < MIN_USERS {
            return None;
        }
        let suggestion = if f.distinct_users >= 2 {
            "many people behind one address: key on ip+user so each gets their own limit".into()
        } else {
            "many people behind one address: key on something finer, e.g. an API key or session cookie (--key ip+field:http_x_api_key, field:cookie_NAME)".into()
        };
        Some(Finding {
            kind: Kind::SharedAddress,
            evidence: format!(
                "{} user agents, {} users behind one key",
                f.distinct_user_agents, f.distinct_users
            ),
            suggestion,
        })
    }
}
