//! Envoy exemptions: one route per exemption, before every other route, whose
//! own `typed_per_filter_config` turns the local rate limit filter off.
//!
//! From the filter's source (`source/extensions/filters/http/local_ratelimit/
//! local_ratelimit.cc`): `decodeHeaders` uses the most specific per-filter
//! configuration (`resolveMostSpecificPerFilterConfig`, the route's before the
//! virtual host's), and returns at once when that configuration is not
//! enabled; `FilterConfig::enabled` is false when `filter_enabled` is absent,
//! and a per-route configuration must still hold a `token_bucket`. So a
//! request matching the exemption's route takes no token and produces no
//! descriptor. Routes are matched first to last (the route table), so the
//! exemption routes come first.
//!
//! The route matches the exemption's path (`safe_regex`, wrapped as the rules'
//! routes are), method (`:method` header) and client on the exemption's key:
//! a header by an exact `string_match`, a query argument by
//! `query_parameters`, a cookie by a regex on the `cookie` header. An Envoy
//! route cannot see the client's address: exemptions keyed on ip or xff are
//! no routes but a matcher on the filter ([`super::skip`]). Nor can it see a
//! Basic-auth user name, so client exemptions keyed on user are refused.

use super::super::yaml::{Map, Seq, Value, flow, plain, string};
use super::super::{ClientPart, ExportError, dashed, exempt, exemption_identifiers};
use super::rule::{bucket_value, method_matcher};
use super::{FILTER_TYPE, MIN_FILL_MS, U32_MAX};
use crate::export::key::key_parts;
use crate::policy::{CheckedRule, Exemption};

/// `{name: .., string_match: {exact: ..}}`.
fn exact_header(name: &str, value: &str) -> Value {
    flow([
        ("name", string(name)),
        ("string_match", flow([("exact", string(value))])),
    ])
}

/// What an Envoy route can match of one key part's `value`.
enum ClientMatch {
    Header(Value),
    Query(Value),
}

fn client_match(part: &ClientPart, value: &str) -> Result<ClientMatch, String> {
    Ok(match part {
        ClientPart::Header(h) => ClientMatch::Header(exact_header(&h.to_ascii_lowercase(), value)),
        ClientPart::QueryArg(a) => ClientMatch::Query(flow([
            ("name", string(a)),
            ("string_match", flow([("exact", string(value))])),
        ])),
        ClientPart::Cookie(c) => {
            let regex = format!(
                r"(^|.*;\s*){}={}(;.*|\s*$)",
                regex::escape(c),
                regex::escape(value)
            );
            ClientMatch::Header(flow([
                ("name", string("cookie")),
                (
                    "string_match",
                    flow([("safe_regex", flow([("regex", string(regex))]))]),
                ),
            ]))
        }
        ClientPart::Address | ClientPart::ForwardedFor => {
            return Err("an Envoy route cannot match the client's address (address exemptions are a matcher on the filter)".into());
        }
        ClientPart::User => {
            return Err("an Envoy route sees the Authorization header, not the user name: exempt this client by a header instead".into());
        }
        ClientPart::Variable(v) => {
            return Err(format!(
                "Envoy cannot read the nginx variable ${v}; exempt this client by a header, a cookie or a query argument"
            ));
        }
    })
}

/// The route of exemption `e`, named `id`.
fn route(e: &Exemption, id: &str) -> Result<Map, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "envoy",
        rule: e.name.clone(),
        message,
    };
    let mut matcher = Map::new();
    match exempt::route(e)? {
        Some(r) => matcher.set(
            "safe_regex",
            flow([("regex", string(super::path_regex(r)))]),
        ),
        None => matcher.set("prefix", string("/")),
    };
    let mut headers = Seq::new();
    let mut queries = Seq::new();
    if let Some(m) = exempt::method(e)? {
        headers.push(method_matcher(&m));
    }
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "envoy")?;
        for (part, value) in parts.iter().zip(values) {
            match client_match(part, value).map_err(unsupported)? {
                ClientMatch::Header(h) => headers.push(h),
                ClientMatch::Query(q) => queries.push(q),
            };
        }
    }
    if !headers.is_empty() {
        matcher.set("headers", headers);
    }
    if !queries.is_empty() {
        matcher.set("query_parameters", queries);
    }
    let mut off = Map::new();
    off.set("\"@type\"", plain(FILTER_TYPE))
        .set("stat_prefix", plain(format!("rlctl_exempt_{id}")))
        .comment("Without filter_enabled the filter is off for this route (a per-route config needs a bucket).")
        .set("token_bucket", bucket_value(U32_MAX, U32_MAX, MIN_FILL_MS));
    let mut per_filter = Map::new();
    per_filter.set("envoy.filters.http.local_ratelimit", off);
    let mut route = Map::new();
    route
        .comment(exempt::describe(e))
        .set("name", string(format!("rl-exempt-{}", dashed(id))))
        .set("match", matcher)
        .set("route", flow([("cluster", plain("backend"))]))
        .note("your upstream cluster")
        .set("typed_per_filter_config", per_filter);
    Ok(route)
}

/// The routes of `exemptions`, to put before every other route; address
/// exemptions have none ([`super::skip`]).
pub(super) fn routes(
    exemptions: &[Exemption],
    rules: &[CheckedRule],
) -> Result<Vec<Map>, ExportError> {
    let ids = exemption_identifiers(exemptions, rules);
    exemptions
        .iter()
        .zip(ids)
        .filter(|(e, _)| !super::skip::by_address(e))
        .map(|(e, id)| route(e, &id))
        .collect()
}
