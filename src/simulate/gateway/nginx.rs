//! nginx `limit_req` as `rlctl export --target nginx` configures it: the
//! policy's rate in whole requests per second or per minute (rounded up), kept
//! by nginx in truncated milli-requests per second, `burst = C − 1` and
//! `nodelay`. Decisions are the existing [`LeakyBucket`], which reproduces
//! `ngx_http_limit_req_module.c` bit for bit (`ngx_http_limit_req_lookup`).
//!
//! Source: nginx `src/http/modules/ngx_http_limit_req_module.c`; the conversion
//! is the exporter's (`src/export/nginx.rs`: `rate`, `burst`).

use super::bounds::capacity;
use crate::simulate::leaky_bucket::LeakyBucket;
use crate::simulate::spec::{AlgorithmSpec, Delay};
use crate::units::{Limit, Window};

/// The exported `limit_req_zone rate=` and `limit_req burst=` of one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    /// Requests per minute, ⌈L·60/W⌉.
    pub per_minute: u64,
    /// Whether the rate is written `N r/s` (exact and a whole number per second).
    pub per_second: bool,
    /// `burst=`: C − 1.
    pub burst: u64,
}

impl Params {
    /// The exporter's conversion of `spec`.
    pub fn of(spec: &AlgorithmSpec) -> Params {
        let (l, w) = (
            u128::from(spec.limit.requests),
            u128::from(spec.limit.window.secs()),
        );
        let exact = (l * 60) % w == 0;
        let per_minute = u64::try_from((l * 60).div_ceil(w)).unwrap_or(u64::MAX);
        Params {
            per_minute,
            per_second: exact && per_minute % 60 == 0,
            burst: capacity(spec).saturating_sub(1),
        }
    }

    /// The `rate=` text: `10r/s` or `40r/m`.
    pub fn rate_text(&self) -> String {
        if self.per_second {
            format!("{}r/s", self.per_minute / 60)
        } else {
            format!("{}r/m", self.per_minute)
        }
    }

    /// nginx's bucket for these settings (`None` when they overflow).
    pub fn bucket(&self) -> Option<LeakyBucket> {
        let limit = if self.per_second {
            Limit {
                requests: self.per_minute / 60,
                window: Window::from_secs(1)?,
            }
        } else {
            Limit {
                requests: self.per_minute,
                window: Window::from_secs(60)?,
            }
        };
        LeakyBucket::new(limit, self.burst, Delay::NoDelay)
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "limit_req rate={} burst={} nodelay",
            self.rate_text(),
            self.burst
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, nginx::Nginx};
    use crate::policy::Policy;
    use crate::simulate::gateway::Gateway;
    use crate::simulate::test_util::{decisions, expect};
    use crate::simulate::{Algorithm, AlgorithmKind, AlgorithmSpec};

    #[test]
    fn parameters_match_the_exported_text() {
        for (limit, algo, burst) in [
            ("40/1m", "token-bucket", Some(7)),
            ("10/1s", "leaky-bucket", Some(5)),
            ("7/90s", "fixed-window", None),
            ("1/1h", "gcra", None),
        ] {
            let text = format!(
                "[[rule]]\nname='g'\nlimit='{limit}'\nalgorithm='{algo}'\n{}",
                burst.map(|b| format!("burst={b}")).unwrap_or_default()
            );
            let rules = Policy::parse(&text, "p").unwrap();
            let out = Nginx.render(&rules, &ExportOptions::default()).unwrap();
            let p = Params::of(&rules[0].spec);
            assert!(out.contains(&format!("rate={}", p.rate_text())), "{out}");
            let burst_arg = if p.burst > 0 {
                format!(" burst={}", p.burst)
            } else {
                String::new()
            };
            assert!(
                out.contains(&format!("limit_req zone=rl_g{burst_arg} nodelay;")),
                "{out}"
            );
        }
    }

    #[test]
    fn burst_minus_one_and_milli_request_truncation() {
        // 40/1m token bucket burst 7 → rate=40r/m (666 milli-requests/s, truncated
        // from 666.67), burst=6: admits 7 at once, then one per 1000/0.666 s:
        // 1000 milli-requests drain in ⌈1000·1000/666⌉ = 1502 ms (1501 ms drains 999).
        let spec = AlgorithmSpec {
            burst: Some(7),
            ..AlgorithmSpec::new(AlgorithmKind::TokenBucket, "40/1m".parse().unwrap())
        };
        let model = Gateway::Nginx.model(&spec).unwrap();
        assert_eq!(model.parameters(), "limit_req rate=40r/m burst=6 nodelay");
        let mut times = vec![0; 8];
        times.extend([1501, 1502]);
        assert_eq!(decisions(&model, &times), expect("yyyyyyy n n y"));
        assert_eq!(model.instant_capacity(), 7);
    }
}
