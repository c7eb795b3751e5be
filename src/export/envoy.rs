//! Envoy: the local rate limit HTTP filter (`envoy.filters.http.local_ratelimit`),
//! as YAML to merge into a listener's HTTP connection manager.
//!
//! Every rule is one descriptor of the virtual host's filter configuration: a
//! `rlctl_rule` entry naming the rule plus one wildcard entry per key part
//! (an empty value gives every client its own bucket; Envoy 1.34 or later).
//! The virtual host's `rate_limits` produce the descriptors of rules for every
//! request or for a method; rules with a route get an Envoy route (first match,
//! so they come before the catch-all) whose `rate_limits` add theirs. All
//! routes share the virtual host's buckets (`vh_rate_limits: INCLUDE`).
//!
//! Conversions: `max_tokens` = C; Envoy refills `tokens_per_fill` every
//! `fill_interval` (at least 50 ms): one token every W/L when that is 50 ms or
//! more, else k tokens, with intervals rounded down to 50 ms multiples (never
//! slower than the policy) and k − 1 extra tokens of capacity so a refill in
//! steps never falls behind a continuous one. Local limits are per Envoy instance.

use std::fmt::Write;

use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, comment, comment_block,
    describe, header_advice, identifiers, method, quoted, route,
};
use crate::policy::CheckedRule;
use crate::units::Limit;

/// The Envoy exporter.
pub struct Envoy;

/// Envoy's shortest fill interval, in milliseconds.
pub const MIN_FILL_MS: u64 = 50;

const FILTER_TYPE: &str =
    "type.googleapis.com/envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit";

/// An Envoy token bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenBucket {
    pub max_tokens: u64,
    pub tokens_per_fill: u64,
    pub fill_interval_ms: u64,
    /// Whether the refill rate equals the policy's exactly.
    pub exact: bool,
}

/// The bucket for L/W with capacity C (see the module doc).
pub fn token_bucket(limit: Limit, capacity: u64) -> TokenBucket {
    let (l, w_ms) = (limit.requests, u64::from(limit.window.secs()) * 1000);
    // The fewest tokens per fill that keep the interval at 50 ms or more.
    let tokens = super::mul_div_ceil(MIN_FILL_MS, l, w_ms).max(1);
    let interval = (u128::from(tokens) * u128::from(w_ms)) / u128::from(l);
    let interval = u64::try_from(interval).unwrap_or(u64::MAX);
    let rounded = interval / MIN_FILL_MS * MIN_FILL_MS;
    let exact = u128::from(rounded) * u128::from(l) == u128::from(tokens) * u128::from(w_ms);
    TokenBucket {
        max_tokens: capacity.saturating_add(tokens - 1),
        tokens_per_fill: tokens,
        fill_interval_ms: rounded,
        exact,
    }
}

/// A protobuf JSON duration: `1.500s`, `60s`.
pub fn duration(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

/// The rate-limit action and descriptor key of one key part.
fn action(part: &ClientPart) -> Option<(String, String)> {
    match part {
        ClientPart::Address | ClientPart::ForwardedFor => {
            Some(("remote_address: {}".into(), "remote_address".into()))
        }
        ClientPart::User => Some(header_action("authorization")),
        ClientPart::Header(h) => Some(header_action(&h.to_ascii_lowercase())),
        ClientPart::Cookie(_) | ClientPart::QueryArg(_) | ClientPart::Variable(_) => None,
    }
}

fn header_action(header: &str) -> (String, String) {
    let key = format!("header_{}", header.replace('-', "_"));
    (
        format!(
            "request_headers: {{header_name: {}, descriptor_key: {}}}",
            quoted(header),
            quoted(&key)
        ),
        key,
    )
}

const U32_MAX: u64 = u32::MAX as u64;

impl Exporter for Envoy {
    fn target(&self) -> &'static str {
        "envoy"
    }

    fn render(&self, rules: &[CheckedRule], opts: &ExportOptions) -> Result<String, ExportError> {
        let ids = identifiers(rules);
        let unsupported = |rule: &CheckedRule, message: String| ExportError::Unsupported {
            target: "envoy",
            rule: rule.name.clone(),
            message,
        };
        let mut descriptors = String::new();
        let mut vhost_limits = String::new();
        let mut routes = String::new();
        let mut uses_xff = false;
        for (rule, id) in rules.iter().zip(&ids) {
            let shape = Shape::of(rule)?;
            let parts = client_parts(rule)?;
            uses_xff |= parts.contains(&ClientPart::ForwardedFor);
            let mut actions = Vec::new();
            let mut keys = Vec::new();
            for part in &parts {
                let (a, k) = action(part).ok_or_else(|| {
                    unsupported(rule, format!("Envoy's local rate limit cannot key on {part}; use ip, xff, user or a header"))
                })?;
                actions.push(a);
                keys.push(k);
            }
            let bucket = token_bucket(rule.spec.limit, shape.capacity);
            if bucket.max_tokens > U32_MAX || bucket.tokens_per_fill > U32_MAX {
                return Err(unsupported(
                    rule,
                    "the bucket exceeds Envoy's 32-bit token counts".into(),
                ));
            }
            let mut lines = vec![describe(rule)];
            lines.push(format!("  max_tokens: {}.", shape.capacity_note));
            lines.push(if bucket.tokens_per_fill > 1 {
                format!(
                    "  max_tokens = {} + {} extra, as Envoy refills in steps of {} and must not fall behind.",
                    shape.capacity,
                    bucket.tokens_per_fill - 1,
                    bucket.tokens_per_fill
                )
            } else {
                format!("  max_tokens = {}.", shape.capacity)
            });
            lines.push(format!(
                "  refill: {} = {} token(s) every {}{}.",
                rule.spec.limit,
                bucket.tokens_per_fill,
                duration(bucket.fill_interval_ms),
                if bucket.exact {
                    " exactly"
                } else {
                    " (interval rounded down to 50 ms steps: slightly faster)"
                }
            ));
            if parts.len() > 1 {
                lines.push(
                    "  A request missing any key part makes no descriptor and is not limited."
                        .into(),
                );
            }
            descriptors.push_str(&comment_block("      # ", &lines));
            let _ = write!(
                descriptors,
                "      - entries:\n        - {{key: \"rlctl_rule\", value: {}}}\n",
                quoted(id)
            );
            for key in &keys {
                let _ = writeln!(
                    descriptors,
                    "        - {{key: {}, value: \"\"}}",
                    quoted(key)
                );
            }
            let _ = writeln!(
                descriptors,
                "        token_bucket: {{max_tokens: {}, tokens_per_fill: {}, fill_interval: {}}}",
                bucket.max_tokens,
                bucket.tokens_per_fill,
                duration(bucket.fill_interval_ms)
            );
            let rule_action = match method(rule)? {
                Some(m) if route(rule)?.is_none() => format!(
                    "header_value_match: {{descriptor_key: \"rlctl_rule\", descriptor_value: {}, headers: [{{name: \":method\", string_match: {{exact: {}}}}}]}}",
                    quoted(id),
                    quoted(&m)
                ),
                _ => format!(
                    "generic_key: {{descriptor_key: \"rlctl_rule\", descriptor_value: {}}}",
                    quoted(id)
                ),
            };
            let mut limit = format!(
                "  - actions:  # rule {}\n    - {rule_action}\n",
                comment(&rule.name)
            );
            for a in &actions {
                let _ = writeln!(limit, "    - {a}");
            }
            match route(rule)? {
                None => vhost_limits.push_str(&limit),
                Some(r) => {
                    let _ = write!(
                        routes,
                        "  # rule {}: Envoy matches the whole path, so the route is wrapped in .*(?:...).*\n  - match:\n      safe_regex: {{regex: {}}}\n",
                        comment(&rule.name),
                        quoted(&format!(".*(?:{r}).*"))
                    );
                    if let Some(m) = method(rule)? {
                        let _ = writeln!(
                            routes,
                            "      headers:\n      - {{name: \":method\", string_match: {{exact: {}}}}}",
                            quoted(&m)
                        );
                    }
                    let _ = writeln!(
                        routes,
                        "    route:\n      cluster: backend  # your upstream cluster\n      rate_limits:"
                    );
                    for line in limit.lines() {
                        let _ = writeln!(routes, "    {line}");
                    }
                }
            }
        }
        let mut head = vec![
            format!(
                "rlctl export --target envoy: {} rules for Envoy's local rate limit filter.",
                rules.len()
            ),
            "Local rate limiting is per Envoy instance: N instances admit up to N times these"
                .into(),
            "limits. Wildcard descriptor values (one bucket per client) need Envoy 1.34 or later."
                .into(),
            "Routes match first to last: merge the routes below before your catch-all routes."
                .into(),
            "Where two routed rules overlap, Envoy picks one route, so only its rule applies."
                .into(),
            "Safe conversions: where Envoy cannot express a rule exactly, the setting never".into(),
            "rejects a request the policy admits (it may admit a little more).".into(),
            String::new(),
            "Response headers describing each rule (response_headers_to_add, or your app):".into(),
        ];
        head.extend(
            rules
                .iter()
                .map(|r| format!("  {}: {}", r.name, header_advice(r))),
        );
        head.push(
            "enable_x_ratelimit_headers below sends X-RateLimit-* from the bucket (max_tokens)."
                .into(),
        );
        head.extend(
            [
                "remote_address is Envoy's trusted client address: with use_remote_address: true",
                "on the connection manager it is the connection's address (ip keys); with",
                "xff_num_trusted_hops N as well, it comes from X-Forwarded-For (xff keys).",
            ]
            .map(String::from),
        );
        if uses_xff {
            head.push(
                "Set xff_num_trusted_hops to the number of proxies before Envoy for xff keys."
                    .into(),
            );
        }
        let mut out = comment_block("# ", &head);
        let enforced = if opts.dry_run { 0 } else { 100 };
        out.push_str(&[
            "",
            "# 1. In the HTTP connection manager, before envoy.filters.http.router:",
            "http_filters:",
            "- name: envoy.filters.http.local_ratelimit",
            "  typed_config:",
            &format!("    \"@type\": {FILTER_TYPE}"),
            "    stat_prefix: http_local_rate_limiter",
            "# 2. The virtual host (merge into your route_config):",
            "virtual_hosts:",
            "- name: rlctl",
            "  domains: [\"*\"]",
            "  typed_per_filter_config:",
            "    envoy.filters.http.local_ratelimit:",
            &format!("      \"@type\": {FILTER_TYPE}"),
            "      stat_prefix: rlctl",
            "      # Requests that match no rule fall to this default bucket: effectively unlimited.",
            &format!("      token_bucket: {{max_tokens: {U32_MAX}, tokens_per_fill: {U32_MAX}, fill_interval: 0.050s}}"),
            "      always_consume_default_token_bucket: false",
            "      vh_rate_limits: INCLUDE",
            "      # One bucket per client and rule, least recently used evicted (--clients sizes it;",
            "      # an evicted client restarts with a full bucket).",
            &format!("      max_dynamic_descriptors: {}", opts.clients.clamp(1, U32_MAX)),
            "      filter_enabled:",
            "        runtime_key: rlctl_local_rate_limit_enabled",
            "        default_value: {numerator: 100, denominator: HUNDRED}",
            "",
        ]
        .join("\n"));
        if opts.dry_run {
            out.push_str("      # Dry run: nothing is enforced; would-be rejections count in the rate_limited\n      # stat and reach the upstream with x-rlctl-over-limit: true.\n");
        }
        let _ = write!(
            out,
            "      filter_enforced:\n        runtime_key: rlctl_local_rate_limit_enforced\n        default_value: {{numerator: {enforced}, denominator: HUNDRED}}\n"
        );
        if opts.dry_run {
            out.push_str("      request_headers_to_add_when_not_enforced:\n      - header: {key: \"x-rlctl-over-limit\", value: \"true\"}\n");
        }
        out.push_str("      enable_x_ratelimit_headers: DRAFT_VERSION_03\n      descriptors:\n");
        out.push_str(&descriptors);
        if !vhost_limits.is_empty() {
            out.push_str("  rate_limits:\n");
            out.push_str(&vhost_limits);
        }
        out.push_str("  routes:\n");
        out.push_str(&routes);
        out.push_str(
            "  - match: {prefix: \"/\"}\n    route: {cluster: backend}  # your upstream cluster\n",
        );
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(limit: &str, capacity: u64) -> TokenBucket {
        token_bucket(limit.parse().unwrap(), capacity)
    }

    #[test]
    fn refill_one_token_per_interval_when_it_fits() {
        let b = bucket("40/1m", 7);
        assert_eq!(
            (b.max_tokens, b.tokens_per_fill, b.fill_interval_ms, b.exact),
            (7, 1, 1500, true)
        );
        let b = bucket("600/1m", 100);
        assert_eq!(
            (b.tokens_per_fill, b.fill_interval_ms, b.exact),
            (1, 100, true)
        );
    }

    #[test]
    fn fast_rates_refill_several_tokens_and_add_capacity() {
        // 100/s: a token every 10 ms is below Envoy's 50 ms floor: 5 every 50 ms.
        let b = bucket("100/s", 100);
        assert_eq!(
            (b.max_tokens, b.tokens_per_fill, b.fill_interval_ms, b.exact),
            (104, 5, 50, true)
        );
    }

    #[test]
    fn keys_envoy_cannot_read_are_refused() {
        let rules = crate::policy::Policy::parse(
            "[[rule]]\nname='c'\nkey='field:cookie_sid'\nlimit='1/s'",
            "p",
        )
        .unwrap();
        let err = Envoy.render(&rules, &ExportOptions::default()).unwrap_err();
        assert!(
            err.to_string().contains("cannot key on cookie sid"),
            "{err}"
        );
    }

    #[test]
    fn inexact_intervals_round_down() {
        // 7/1m: one token every 8571.4 ms, rounded down to 8550 ms (faster, safe).
        let b = bucket("7/1m", 7);
        assert_eq!(
            (b.tokens_per_fill, b.fill_interval_ms, b.exact),
            (1, 8550, false)
        );
        assert_eq!(duration(8550), "8.550s");
        assert_eq!(duration(60_000), "60s");
        assert_eq!(duration(50), "0.050s");
    }
}
