//! One policy rule's part of the Envoy configuration ([`RuleConfig`]): its
//! descriptor (with the conversion notes), the `rate_limits` entry whose
//! actions produce that descriptor, and, for a rule with a route, the Envoy
//! route carrying it.

use super::super::yaml::{Map, Seq, Value, flow, plain, single, string};
use super::super::{ClientPart, ExportError, Shape, client_parts, describe, route};
use super::{TokenBucket, U32_MAX, duration, path_regex, token_bucket};
use crate::policy::CheckedRule;
use crate::units::Limit;

/// The rate-limit action and descriptor key of one key part.
fn action(part: &ClientPart) -> Option<(Value, String)> {
    match part {
        ClientPart::Address | ClientPart::ForwardedFor => {
            Some((single("remote_address", flow([])), "remote_address".into()))
        }
        ClientPart::User => Some(header_action("authorization")),
        ClientPart::Header(h) => Some(header_action(&h.to_ascii_lowercase())),
        ClientPart::Cookie(_) | ClientPart::QueryArg(_) | ClientPart::Variable(_) => None,
    }
}

fn header_action(header: &str) -> (Value, String) {
    let key = format!("header_{}", header.replace('-', "_"));
    let matcher = flow([
        ("header_name", string(header)),
        ("descriptor_key", string(&key)),
    ]);
    (single("request_headers", matcher), key)
}

/// `{name: ":method", string_match: {exact: "GET"}}`.
pub(super) fn method_matcher(method: &str) -> Value {
    flow([
        ("name", string(":method")),
        ("string_match", flow([("exact", string(method))])),
    ])
}

/// `{max_tokens: .., tokens_per_fill: .., fill_interval: ..}`.
pub(super) fn bucket_value(max_tokens: u64, tokens_per_fill: u64, fill_interval_ms: u64) -> Value {
    flow([
        ("max_tokens", plain(max_tokens)),
        ("tokens_per_fill", plain(tokens_per_fill)),
        ("fill_interval", plain(duration(fill_interval_ms))),
    ])
}

/// One rule's part of the configuration.
pub(super) struct RuleConfig {
    /// The comment lines of its descriptor: the rule and its conversions.
    pub notes: Vec<String>,
    /// Its entry of the virtual host filter's `descriptors`.
    pub descriptor: Map,
    /// The `rate_limits` entry producing the descriptor.
    pub rate_limit: Map,
    /// The route carrying `rate_limit`, for rules with a route.
    pub route: Option<Map>,
    /// Whether its key reads X-Forwarded-For.
    pub uses_xff: bool,
}

/// The configuration of `rule`, named `id` in descriptors.
pub(super) fn rule_config(rule: &CheckedRule, id: &str) -> Result<RuleConfig, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "envoy",
        rule: rule.name.clone(),
        message,
    };
    let shape = Shape::of(rule)?;
    let parts = client_parts(rule)?;
    let mut key_actions = Vec::new();
    let mut entries = Seq::new();
    entries.push(flow([("key", string("rlctl_rule")), ("value", string(id))]));
    for part in &parts {
        let (action, key) = action(part).ok_or_else(|| {
            unsupported(format!(
                "Envoy's local rate limit cannot key on {part}; use ip, xff, user or a header"
            ))
        })?;
        key_actions.push(action);
        entries.push(flow([("key", string(key)), ("value", string(""))]));
    }
    let bucket = token_bucket(rule.spec.limit, shape.capacity);
    if bucket.max_tokens > U32_MAX || bucket.tokens_per_fill > U32_MAX {
        return Err(unsupported(
            "the bucket exceeds Envoy's 32-bit token counts".into(),
        ));
    }
    let mut notes = vec![
        describe(rule),
        format!("  max_tokens: {}.", shape.capacity_note),
        if bucket.tokens_per_fill > 1 {
            format!(
                "  max_tokens = {} + {} extra, as Envoy refills in steps of {} and must not fall behind.",
                shape.capacity,
                bucket.tokens_per_fill - 1,
                bucket.tokens_per_fill
            )
        } else {
            format!("  max_tokens = {}.", shape.capacity)
        },
        format!(
            "  refill: {} = {} token(s) every {}{}.",
            rule.spec.limit,
            bucket.tokens_per_fill,
            duration(bucket.fill_interval_ms),
            if bucket.exact {
                " exactly".to_string()
            } else {
                rounded_note(rule.spec.limit, &bucket)
            }
        ),
    ];
    if parts.len() > 1 {
        notes.push(
            "  A request missing any key part makes no descriptor and is not limited.".into(),
        );
    }
    let mut descriptor = Map::new();
    descriptor.set("entries", entries).set(
        "token_bucket",
        bucket_value(
            bucket.max_tokens,
            bucket.tokens_per_fill,
            bucket.fill_interval_ms,
        ),
    );

    let (method, route) = (rule.method.clone(), route(rule)?);
    let rule_action = match &method {
        Some(m) if route.is_none() => single(
            "header_value_match",
            flow([
                ("descriptor_key", string("rlctl_rule")),
                ("descriptor_value", string(id)),
                ("headers", Value::FlowSeq(vec![method_matcher(m)])),
            ]),
        ),
        _ => single(
            "generic_key",
            flow([
                ("descriptor_key", string("rlctl_rule")),
                ("descriptor_value", string(id)),
            ]),
        ),
    };
    let mut actions = Seq::new();
    actions.push(rule_action);
    for action in key_actions {
        actions.push(action);
    }
    let mut rate_limit = Map::new();
    rate_limit
        .set("actions", actions)
        .note(format!("rule {}", rule.name));
    let route = route.map(|r| routed(rule, r, method.as_deref(), &rate_limit));
    Ok(RuleConfig {
        notes,
        descriptor,
        rate_limit,
        route,
        uses_xff: parts.contains(&ClientPart::ForwardedFor),
    })
}

/// The Envoy route of a rule with route regex `r`: the path (and method)
/// match, and the rule's `rate_limit`.
fn routed(rule: &CheckedRule, r: &str, method: Option<&str>, rate_limit: &Map) -> Map {
    let mut matcher = Map::new();
    matcher.set("safe_regex", flow([("regex", string(path_regex(r)))]));
    if let Some(m) = method {
        let mut headers = Seq::new();
        headers.push(method_matcher(m));
        matcher.set("headers", headers);
    }
    let mut limits = Seq::new();
    limits.push(rate_limit.clone());
    let mut target = Map::new();
    target
        .set("cluster", plain("backend"))
        .note("your upstream cluster")
        .set("rate_limits", limits);
    let mut route = Map::new();
    route
        .comment(format!(
            "rule {}: Envoy matches the whole path (an anchored route without its anchors, any other within .*(?:...).*)",
            rule.name
        ))
        .set("match", matcher)
        .set("route", target);
    route
}

/// What rounding the fill interval down to Envoy's 50 ms steps does to the
/// rate: the interval it stands for, and the rate the bucket really refills
/// at, per the policy's window.
fn rounded_note(limit: Limit, bucket: &TokenBucket) -> String {
    let w_ms = f64::from(limit.window.secs()) * 1000.0;
    let wanted = bucket.tokens_per_fill as f64 * w_ms / limit.requests as f64;
    let real = bucket.tokens_per_fill as f64 * w_ms / bucket.fill_interval_ms as f64;
    let faster = (real / limit.requests as f64 - 1.0) * 100.0;
    format!(
        " (the interval, {} ms, rounded down to 50 ms steps: a refill of {}/{}, {}% faster than the policy)",
        decimals(wanted, 3),
        decimals(real, 3),
        limit.window,
        decimals(faster, 2)
    )
}

/// `x` with at most `places` decimals, without trailing zeros.
fn decimals(x: f64, places: usize) -> String {
    let text = format!("{x:.places$}");
    match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.').to_string(),
        false => text,
    }
}
