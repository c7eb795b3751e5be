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
//!
//! Exemptions are routes before all others that turn the filter off
//! ([`exempt`]); exemptions of client addresses wrap the filter in a matcher
//! that skips it ([`skip`]).

mod exempt;
mod rule;
mod skip;

use super::yaml::{Map, Seq, Value, flow, plain, string};
use super::{ExportError, ExportOptions, Exporter, comment_block, conf, identifiers};
use crate::policy::{CheckedRule, Exemption};
use crate::text::counted;
use crate::units::Limit;
use rule::{RuleConfig, bucket_value, rule_config};

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

/// The regex of a route as Envoy's `safe_regex` takes it, which must match
/// the whole path: a route anchored at both ends with no alternation
/// (`^/api/x/[^/]+$`, as `analyze --write-policy` writes them) without its
/// anchors, any other one wrapped in `.*(?:...).*`. The wrapper of a long
/// route can pass RE2's program size of 100, which Envoy refuses by default
/// (`re2.max_program_size.error_level`).
pub fn path_regex(route: &str) -> String {
    let inner = route.strip_prefix('^').and_then(|r| r.strip_suffix('$'));
    match inner {
        Some(inner) if !inner.contains('|') && !crate::text::ends_in_escape(inner.as_bytes()) => {
            inner.to_string()
        }
        _ => format!(".*(?:{route}).*"),
    }
}

/// A protobuf JSON duration: `1.500s`, `60s`.
pub fn duration(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{}.{:03}s", ms / 1000, ms % 1000)
    }
}

const U32_MAX: u64 = u32::MAX as u64;

/// The comment head: what the export holds and how Envoy reads it.
fn head(rules: &[CheckedRule], uses_xff: bool) -> Vec<String> {
    let first = format!(
        "rlctl export --target envoy: {} for Envoy's local rate limit filter.",
        counted(rules.len(), "rule")
    );
    let mut lines = conf::head(
        &[
            &first,
            "Local rate limiting is per Envoy instance: N instances admit up to N times these",
            "limits. Wildcard descriptor values (one bucket per client) need Envoy 1.34 or later.",
            "Routes match first to last: merge the routes below before your catch-all routes.",
            "Where two routed rules overlap, Envoy picks one route, so only its rule applies.",
            "Safe conversions: where Envoy cannot express a rule exactly, the setting is never",
            "stricter than the policy: given the same requests admitted so far, it admits",
            "every request the policy admits (it may admit a little more).",
        ],
        &["Response headers describing each rule (response_headers_to_add, or your app):"],
        rules,
    );
    lines.extend(
        [
            "enable_x_ratelimit_headers below sends X-RateLimit-* from the bucket (max_tokens).",
            "remote_address is Envoy's trusted client address: with use_remote_address: true",
            "on the connection manager it is the connection's address (ip keys); with",
            "xff_num_trusted_hops N as well, it comes from X-Forwarded-For (xff keys).",
            "Envoy answers HTTP/1.0 requests (health checkers, ab) 426 before any filter",
            "unless the connection manager has http_protocol_options: {accept_http_10: true}.",
        ]
        .map(String::from),
    );
    if uses_xff {
        lines.push(
            "Set xff_num_trusted_hops to the number of proxies before Envoy for xff keys.".into(),
        );
    }
    lines
}

/// `{runtime_key: .., default_value: {numerator: .., denominator: HUNDRED}}` as a block.
fn runtime_fraction(key: &str, percent: u64) -> Map {
    let mut map = Map::new();
    map.set("runtime_key", plain(key)).set(
        "default_value",
        flow([
            ("numerator", plain(percent)),
            ("denominator", plain("HUNDRED")),
        ]),
    );
    map
}

/// The filter configuration of the virtual host: default bucket, runtime
/// switches and the descriptors of every rule.
fn vhost_filter(configs: &[RuleConfig], opts: &ExportOptions) -> Map {
    let mut filter = Map::new();
    filter
        .set("\"@type\"", plain(FILTER_TYPE))
        .set("stat_prefix", plain("rlctl"))
        .comment("Requests that match no rule fall to this default bucket: effectively unlimited.")
        .set("token_bucket", bucket_value(U32_MAX, U32_MAX, MIN_FILL_MS))
        .set("always_consume_default_token_bucket", plain("false"))
        .set("vh_rate_limits", plain("INCLUDE"))
        .comments(&[
            "One bucket per client and rule, least recently used evicted (--clients sizes it;"
                .into(),
            "an evicted client restarts with a full bucket).".into(),
        ])
        .set(
            "max_dynamic_descriptors",
            plain(opts.clients.clamp(1, U32_MAX)),
        )
        .set(
            "filter_enabled",
            runtime_fraction("rlctl_local_rate_limit_enabled", 100),
        );
    if opts.dry_run {
        filter.comments(&[
            "Dry run: nothing is enforced; would-be rejections count in the rate_limited".into(),
            "stat and reach the upstream with x-rlctl-over-limit: true.".into(),
        ]);
    }
    let enforced = if opts.dry_run { 0 } else { 100 };
    filter.set(
        "filter_enforced",
        runtime_fraction("rlctl_local_rate_limit_enforced", enforced),
    );
    if opts.dry_run {
        let mut header = Map::new();
        header.set(
            "header",
            flow([
                ("key", string("x-rlctl-over-limit")),
                ("value", string("true")),
            ]),
        );
        let mut headers = Seq::new();
        headers.push(header);
        filter.set("request_headers_to_add_when_not_enforced", headers);
    }
    let mut descriptors = Seq::new();
    for config in configs {
        descriptors
            .comments(&config.notes)
            .push(config.descriptor.clone());
    }
    filter
        .set("enable_x_ratelimit_headers", plain("DRAFT_VERSION_03"))
        .set("descriptors", descriptors);
    filter
}

impl Exporter for Envoy {
    fn target(&self) -> &'static str {
        "envoy"
    }

    /// The configuration of `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        let configs = rules
            .iter()
            .zip(identifiers(rules))
            .map(|(rule, id)| rule_config(rule, &id))
            .collect::<Result<Vec<_>, _>>()?;
        let uses_xff = configs.iter().any(|c| c.uses_xff);

        let mut typed_config = Map::new();
        typed_config
            .set("\"@type\"", plain(FILTER_TYPE))
            .set("stat_prefix", plain("http_local_rate_limiter"));
        let mut http_filter = Map::new();
        http_filter
            .set("name", plain("envoy.filters.http.local_ratelimit"))
            .set("typed_config", typed_config);
        let mut http_filters = Seq::new();
        http_filters.push(skip::wrap(http_filter, exemptions)?);

        let mut per_filter = Map::new();
        per_filter.set(
            "envoy.filters.http.local_ratelimit",
            vhost_filter(&configs, opts),
        );
        let mut vhost = Map::new();
        vhost
            .set("name", plain("rlctl"))
            .set("domains", Value::FlowSeq(vec![string("*")]))
            .set("typed_per_filter_config", per_filter);
        let mut vhost_limits = Seq::new();
        let mut routes = Seq::new();
        for route in exempt::routes(exemptions, rules)? {
            routes.push(route);
        }
        for config in &configs {
            match &config.route {
                None => vhost_limits.push(config.rate_limit.clone()),
                Some(route) => routes.push(route.clone()),
            };
        }
        if !vhost_limits.is_empty() {
            vhost.set("rate_limits", vhost_limits);
        }
        let mut catch_all = Map::new();
        catch_all
            .set("match", flow([("prefix", string("/"))]))
            .set("route", flow([("cluster", plain("backend"))]))
            .note("your upstream cluster");
        routes.push(catch_all);
        vhost.set("routes", routes);
        let mut virtual_hosts = Seq::new();
        virtual_hosts.push(vhost);

        let mut doc = Map::new();
        doc.comment("1. In the HTTP connection manager, before envoy.filters.http.router:")
            .set("http_filters", http_filters)
            .comment("2. The virtual host (merge into your route_config):")
            .set("virtual_hosts", virtual_hosts);
        let mut out = comment_block("# ", &head(rules, uses_xff));
        out.push('\n');
        out.push_str(&doc.render());
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
