//! Envoy exemptions of clients by address: the local rate limit filter wrapped
//! in Envoy's generic matching API, whose matcher skips the filter for the
//! exempt addresses. A route cannot match the client's address, so these
//! exemptions cannot be routes ([`super::exempt`]).
//!
//! From Envoy's source (envoyproxy/envoy):
//! - `api/envoy/extensions/common/matching/v3/extension_matcher.proto`:
//!   `ExtensionWithMatcher` wraps an HTTP filter (`extension_config`) with a
//!   matcher (`xds_matcher`, an `xds.type.matcher.v3.Matcher`);
//! - `api/envoy/extensions/filters/common/matcher/action/v3/skip_action.proto`:
//!   the `SkipFilter` action, resolved before the request headers reach the
//!   filter, skips it entirely (no token taken, no descriptor);
//! - `api/envoy/extensions/matching/common_inputs/network/v3/network_inputs.proto`:
//!   `SourceIPInput`; in an HTTP filter it reads the stream's downstream
//!   remote address (`source/common/http/matching/data_impl.h`,
//!   `connectionInfoProvider()` is `stream_info_.downstreamAddressProvider()`),
//!   the very address the rules' `remote_address` descriptors count: the
//!   connection's address with `use_remote_address: true`, the
//!   X-Forwarded-For one with `xff_num_trusted_hops` as well. So ip and xff
//!   keys use it alike (`DirectSourceIPInput` would ignore X-Forwarded-For);
//! - `api/envoy/extensions/matching/input_matchers/ip/v3/ip.proto`: the `Ip`
//!   input matcher, true when the address is in one of `cidr_ranges` (here one
//!   /32 or /128 range, the exempt address exactly);
//! - `docs/root/intro/arch_overview/advanced/matching/matching_api.rst` and
//!   `_include/simple.yaml`: the wrapper with a `SkipFilter` action.
//!
//! The method and header or cookie parts of the same exemption join the
//! address in an `and_matcher` (`HttpRequestHeaderMatchInput` on `:method`, the
//! header, `cookie`). A route regex is refused with an address: the matching
//! API sees the path only in `:path`, with its query string, while the policy's
//! route and Envoy's route `safe_regex` see the path alone.
//!
//! The wrapper keeps the filter's name, `envoy.filters.http.local_ratelimit`,
//! so the virtual host's and routes' `typed_per_filter_config` still apply:
//! in `source/extensions/filters/http/match_delegate/config.cc` the wrapper
//! hands the wrapped filter its own callbacks (`setDecoderFilterCallbacks`),
//! looks for a per-route config of its own type only
//! (`resolveMostSpecificPerFilterConfig<FilterConfigPerRoute>`, none here),
//! and on a `SkipFilter` match returns `Continue` from `decodeHeaders` without
//! calling the wrapped filter; with no match the filter runs as before.

use super::super::yaml::{Map, Seq, Value, flow, plain, single, string};
use super::super::{ClientPart, ExportError, exempt};
use crate::export::key::key_parts;
use crate::policy::Exemption;
use std::net::IpAddr;

const WRAPPER_TYPE: &str =
    "type.googleapis.com/envoy.extensions.common.matching.v3.ExtensionWithMatcher";

/// Whether exemption `e` names a client on a key with an address part.
pub(super) fn by_address(e: &Exemption) -> bool {
    e.client.is_some()
        && key_parts(&e.name, &e.key, "request attribute").is_ok_and(|parts| {
            parts
                .iter()
                .any(|p| matches!(p, ClientPart::Address | ClientPart::ForwardedFor))
        })
}

/// `{name: .., typed_config: {"@type": ..}}` plus `fields` in `typed_config`.
fn extension(name: &str, type_url: &str, fields: Vec<(&'static str, Value)>) -> Value {
    let mut config = Map::new();
    config.set(
        "\"@type\"",
        plain(format!("type.googleapis.com/{type_url}")),
    );
    for (k, v) in fields {
        config.set(k, v);
    }
    let mut ext = Map::new();
    ext.set("name", plain(name)).set("typed_config", config);
    ext.into()
}

/// A single predicate on request header `header` with string matcher `matcher`.
fn header_predicate(header: &str, matcher: Value) -> Value {
    let input = extension(
        "request-headers",
        "envoy.type.matcher.v3.HttpRequestHeaderMatchInput",
        vec![("header_name", string(header))],
    );
    let mut p = Map::new();
    p.set("input", input).set("value_match", matcher);
    single("single_predicate", p)
}

fn address_predicate(e: &Exemption, value: &str) -> Result<Value, String> {
    let address: IpAddr = value.parse().map_err(|_| {
        format!(
            "client {value:?} is not an IP address, and key {} holds addresses",
            e.key.text
        )
    })?;
    let bits: u64 = if address.is_ipv4() { 32 } else { 128 };
    let input = extension(
        "source-ip",
        "envoy.extensions.matching.common_inputs.network.v3.SourceIPInput",
        vec![],
    );
    let range = flow([
        ("address_prefix", string(address.to_string())),
        ("prefix_len", plain(bits)),
    ]);
    let ip = extension(
        "envoy.matching.input_matchers.ip",
        "envoy.extensions.matching.input_matchers.ip.v3.Ip",
        // `stat_prefix` is required (`min_len: 1` in ip.proto): Envoy
        // refuses the matcher without it.
        vec![
            ("cidr_ranges", Value::FlowSeq(vec![range])),
            ("stat_prefix", plain("rlctl_exempt")),
        ],
    );
    let mut p = Map::new();
    p.set("input", input).set("custom_match", ip);
    Ok(single("single_predicate", p))
}

fn part_predicate(e: &Exemption, part: &ClientPart, value: &str) -> Result<Value, String> {
    Ok(match part {
        ClientPart::Address | ClientPart::ForwardedFor => address_predicate(e, value)?,
        ClientPart::Header(h) => {
            header_predicate(&h.to_ascii_lowercase(), flow([("exact", string(value))]))
        }
        ClientPart::Cookie(c) => {
            let regex = format!(
                r"(^|.*;\s*){}={}(;.*|\s*$)",
                regex::escape(c),
                regex::escape(value)
            );
            header_predicate(
                "cookie",
                flow([("safe_regex", flow([("regex", string(regex))]))]),
            )
        }
        other => {
            return Err(format!(
                "Envoy's matcher cannot join the client's address with {other}; key this exemption on the address alone or with a header"
            ));
        }
    })
}

/// The predicate of address exemption `e`.
fn predicate(e: &Exemption) -> Result<Value, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "envoy",
        rule: e.name.clone(),
        message,
    };
    if exempt::route(e)?.is_some() {
        return Err(unsupported("Envoy cannot join a client address with a route exactly: its matcher sees the path only in :path, with the query string; exempt this address on every path, or exempt the client by a header".into()));
    }
    let mut predicates = Vec::new();
    if let Some(m) = exempt::method(e)? {
        predicates.push(header_predicate(":method", flow([("exact", string(m))])));
    }
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "envoy")?;
        for (part, value) in parts.iter().zip(values) {
            predicates.push(part_predicate(e, part, value).map_err(unsupported)?);
        }
    }
    Ok(if predicates.len() == 1 {
        predicates.remove(0)
    } else {
        let mut all = Seq::new();
        for p in predicates {
            all.push(p);
        }
        single("and_matcher", single("predicate", all))
    })
}

/// The HTTP filter `filter` (the local rate limit filter's entry), wrapped in
/// a matcher that skips it for the address exemptions among `exemptions`;
/// `filter` itself when there are none.
pub(super) fn wrap(filter: Map, exemptions: &[Exemption]) -> Result<Map, ExportError> {
    let mut matchers = Seq::new();
    for e in exemptions.iter().filter(|e| by_address(e)) {
        let skip = extension(
            "skip",
            "envoy.extensions.filters.common.matcher.action.v3.SkipFilter",
            vec![],
        );
        let mut m = Map::new();
        m.comment(exempt::describe(e))
            .set("predicate", predicate(e)?)
            .set("on_match", single("action", skip));
        matchers.push(m);
    }
    if matchers.is_empty() {
        return Ok(filter);
    }
    let mut wrapper = Map::new();
    wrapper
        .set("\"@type\"", plain(WRAPPER_TYPE))
        .set("extension_config", filter)
        .set(
            "xds_matcher",
            single("matcher_list", single("matchers", matchers)),
        );
    let mut out = Map::new();
    out.comment("Exempt client addresses skip the filter (Envoy's matching API, SkipFilter).")
        .set("name", plain("envoy.filters.http.local_ratelimit"))
        .set("typed_config", wrapper);
    Ok(out)
}
