//! Where the policy and a gateway's enforcement of it part: the requests on
//! which the two replays decide differently, each with the reason
//! (`rlctl export --target X --check LOG`).
//!
//! The reason comes from a third replay, the gateway model with rejected
//! requests ignored ([`Model::ignoring_rejections`](super::Model::ignoring_rejections)):
//! where that one agrees with the policy, the gateway differs only because it
//! counts rejected requests; elsewhere the difference is the gateway's own
//! arithmetic: window alignment for the window-counting gateways, rounding
//! (of the converted rate and burst, integer or double arithmetic, fill steps)
//! for the bucket ones.

use std::fmt;

use super::Gateway;

/// Why the gateway decides a request differently from the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// The gateway counted earlier rejected requests of the client.
    CountedRejections,
    /// The gateway's windows start elsewhere (epoch, calendar, first request)
    /// or are longer or shorter than the policy's.
    WindowAlignment,
    /// The gateway's converted rate or burst, or its arithmetic, rounds.
    Rounding,
    /// The gateway reads the client's key otherwise: HAProxy and AWS WAF
    /// read only an address first in X-Forwarded-For.
    ClientKey,
    /// The gateway reads the method, path or HTTP version otherwise:
    /// nginx's decoded `$uri`, HAProxy's methods case and all, Envoy's 426
    /// to HTTP/1.0.
    MethodOrPath,
    /// The gateway reads both otherwise (not told apart).
    KeyMethodOrPath,
    /// The gateway runs one rule's limit on the request where the policy
    /// applies several (Kong's one plugin per request).
    OnePlugin,
    /// The gateway keeps a rule's buckets per router that chains it, where
    /// the policy keeps one (Traefik).
    PerRouter,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Reason::CountedRejections => "counted rejections",
            Reason::WindowAlignment => "window alignment",
            Reason::Rounding => "rounding",
            Reason::ClientKey => "client key",
            Reason::MethodOrPath => "method, path or version",
            Reason::KeyMethodOrPath => "client key, method, path or version",
            Reason::OnePlugin => "one plugin per request",
            Reason::PerRouter => "buckets per router",
        })
    }
}

/// One request decided differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Difference {
    /// The request's index in the replayed events.
    pub row: usize,
    /// The policy's decision.
    pub policy_allowed: bool,
    /// The gateway's decision.
    pub gateway_allowed: bool,
    /// Why they differ.
    pub reason: Reason,
}

/// How the gateway groups a policy's rules otherwise than one limit each:
/// Kong runs one plugin per request, Traefik keeps a rule's buckets per
/// router. The reason of a difference that its rules, each on their own, do
/// not make; `None` for a gateway that runs each rule once.
pub fn regrouping(gateway: Gateway) -> Option<Reason> {
    match gateway {
        g if g.runs_one_plugin() => Some(Reason::OnePlugin),
        Gateway::Traefik => Some(Reason::PerRouter),
        _ => None,
    }
}

/// The difference that is the gateway's own arithmetic (not counting).
pub fn own_reason(gateway: Gateway) -> Reason {
    match gateway {
        Gateway::Nginx | Gateway::Envoy | Gateway::EnvoyTimer | Gateway::Traefik => {
            Reason::Rounding
        }
        Gateway::Haproxy
        | Gateway::HaproxyReqRate
        | Gateway::EnvoyRatelimit
        | Gateway::Kong
        | Gateway::KongRedis
        | Gateway::AwsWaf
        | Gateway::Cloudflare
        | Gateway::RedisSwc => Reason::WindowAlignment,
    }
}

/// A gateway's replays that [`differences`] reads beside the policy's: each
/// request's decision, in the policy replay's order.
#[derive(Debug, Clone, Copy)]
pub struct GatewayReplays<'a> {
    /// As the gateway enforces the configuration, keys read its way.
    pub enforced: &'a [bool],
    /// The same with its rules each limiting on its own, when the gateway
    /// runs one plugin per request or keeps buckets per router (`None`: it
    /// runs them so).
    pub each_rule: Option<&'a [bool]>,
    /// The same with the policy's keys, methods and paths, when the gateway
    /// reads some otherwise (`None`: it reads them as the policy does).
    pub on_policy_keys: Option<&'a [bool]>,
    /// What the gateway reads otherwise: the reason of a difference that
    /// `on_policy_keys` does not make.
    pub read_otherwise: Reason,
    /// With the policy's keys and rejected requests ignored.
    pub uncounted: &'a [bool],
}

/// The requests where `gateway` differs from `policy`, with their reasons:
/// the gateway's [`regrouping`] where its rules each on their own agree with
/// the policy, else the client key where the gateway with the policy's keys
/// agrees with the policy, else counted rejections where it also agrees once
/// rejected requests are ignored, else the gateway's own arithmetic.
pub fn differences(
    gateway_name: Gateway,
    policy: &[bool],
    replays: GatewayReplays<'_>,
) -> Vec<Difference> {
    let reason = |row: usize, p: bool| {
        let each_agrees = replays.each_rule.is_some_and(|own| own[row] == p);
        match regrouping(gateway_name) {
            Some(regrouped) if each_agrees => regrouped,
            _ if replays.on_policy_keys.is_some_and(|same| same[row] == p) => {
                replays.read_otherwise
            }
            _ if replays.uncounted[row] == p => Reason::CountedRejections,
            _ => own_reason(gateway_name),
        }
    };
    policy
        .iter()
        .zip(replays.enforced)
        .enumerate()
        .filter(|(_, (p, g))| p != g)
        .map(|(row, (&p, &g))| Difference {
            row,
            policy_allowed: p,
            gateway_allowed: g,
            reason: reason(row, p),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::sliding_log::SlidingLog;
    use crate::simulate::test_util::decisions;
    use crate::simulate::token_bucket::TokenBucket;
    use crate::simulate::{AlgorithmKind, AlgorithmSpec, Limiter};

    fn replays<'a>(enforced: &'a [bool], uncounted: &'a [bool]) -> GatewayReplays<'a> {
        GatewayReplays {
            enforced,
            each_rule: None,
            on_policy_keys: None,
            read_otherwise: Reason::ClientKey,
            uncounted,
        }
    }

    fn model(gateway: Gateway, spec: &AlgorithmSpec) -> super::super::Model {
        match gateway.limiter(spec).unwrap() {
            Limiter::Gateway(m) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn counted_rejections_are_told_from_alignment() {
        // Policy: sliding log 2/1s; envoy-ratelimit: 2 per epoch second, every
        // request counted. Counting does not matter here (a count only matters
        // within its second, and the second's count is over the limit either
        // way): the differences are the windows'.
        let spec = AlgorithmSpec::new(AlgorithmKind::SlidingLog, "2/1s".parse().unwrap());
        let times = [0, 100, 200, 900, 1000, 1050, 1100, 1500];
        let policy = decisions(&SlidingLog::new(spec.limit), &times);
        let g = model(Gateway::EnvoyRatelimit, &spec);
        let counted = decisions(&g, &times);
        let uncounted = decisions(&g.ignoring_rejections(), &times);
        let diff = differences(
            Gateway::EnvoyRatelimit,
            &policy,
            replays(&counted, &uncounted),
        );
        // Policy (sliding log of 2 per 1 s): 0 y, 100 y, 200 n, 900 n, 1000 y
        // (0 left the window), 1050 n, 1100 y (100 left), 1500 n.
        assert_eq!(policy, [true, true, false, false, true, false, true, false]);
        // envoy-ratelimit (2 per epoch second, every request counted): second 0:
        // y y n n; second 1: 1000 y, 1050 y, 1100 n, 1500 n.
        assert_eq!(
            counted,
            [true, true, false, false, true, true, false, false]
        );
        assert_eq!(
            diff.iter().map(|d| (d.row, d.reason)).collect::<Vec<_>>(),
            vec![(5, Reason::WindowAlignment), (6, Reason::WindowAlignment)]
        );
    }

    #[test]
    fn a_retrying_client_stays_blocked_only_where_rejections_count() {
        // Policy: token bucket 1/1s, burst 1; haproxy-req-rate: deny above
        // T = C + L − 1 = 1 per 1 s period, every request counted. A client
        // retrying every 400 ms: the policy admits about one per second;
        // HAProxy keeps reading the retries into its rate and denies more.
        let spec = AlgorithmSpec {
            burst: Some(1),
            ..AlgorithmSpec::new(AlgorithmKind::TokenBucket, "1/1s".parse().unwrap())
        };
        let times: Vec<i64> = (0..12).map(|i| i * 400).collect();
        let policy = decisions(&TokenBucket::new(spec.limit, 1).unwrap(), &times);
        let g = model(Gateway::HaproxyReqRate, &spec);
        let counted = decisions(&g, &times);
        let uncounted = decisions(&g.ignoring_rejections(), &times);
        let diff = differences(
            Gateway::HaproxyReqRate,
            &policy,
            replays(&counted, &uncounted),
        );
        assert!(
            diff.iter().any(|d| d.reason == Reason::CountedRejections),
            "{policy:?}\n{counted:?}\n{uncounted:?}"
        );
        for d in &diff {
            assert_eq!(d.policy_allowed, policy[d.row]);
            assert_eq!(d.gateway_allowed, counted[d.row]);
        }
    }
}
