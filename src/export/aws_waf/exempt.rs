//! AWS WAF exemptions: every rate-based rule's scope-down statement gains a
//! `NotStatement` of the exemptions (an `OrStatement` of them when there are
//! several), so the rule neither counts nor blocks an exempt request. The
//! developer guide (docs.aws.amazon.com/waf/latest/developerguide/
//! waf-rule-scope-down-statements.html): a rate-based rule with a scope-down
//! statement "only counts requests that match" it; the others "are not counted
//! towards the rate limit and are not affected by this rule".
//!
//! Each exemption is the AND of its method (`ByteMatchStatement` on `Method`),
//! its route (`RegexMatchStatement` on `UriPath`) and its client, matched on
//! the exemption's key: an address through an IP set (`IPSetReferenceStatement`;
//! WAF has no inline address match, so the export lists the IP sets to create
//! under `IPSets` and the rule holds a placeholder for the ARN); a header, a
//! cookie or a query argument by an exact `ByteMatchStatement` on
//! `SingleHeader`, `Cookies` or `SingleQueryArgument` (API reference:
//! docs.aws.amazon.com/waf/latest/APIReference/API_FieldToMatch.html). For xff
//! keys the IP set is checked in the first X-Forwarded-For address
//! (`IPSetForwardedIPConfig`, position FIRST) or in the connecting address:
//! WAF does not apply a forwarded-IP statement to a request without the header
//! (API_IPSetForwardedIPConfig.html), so the connecting address stands in,
//! which may exempt more than the policy (never less). A user key cannot be
//! matched: WAF sees the Authorization header, not the user name.

use std::net::IpAddr;

use serde::Serialize;

use super::{Field, ScopeDown, transform};
use crate::export::key::key_parts;
use crate::export::{ClientPart, ExportError, exempt};
use crate::policy::Exemption;

/// The longest SearchString AWS WAF accepts, in bytes.
pub const MAX_SEARCH: usize = 200;

/// An IP set for `CreateIPSet` (Scope is the web ACL's: REGIONAL or CLOUDFRONT).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct IpSet {
    addresses: Vec<String>,
    #[serde(rename = "IPAddressVersion")]
    ip_address_version: &'static str,
    name: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct IpSetForwardedIpConfig {
    fallback_behavior: &'static str,
    header_name: &'static str,
    position: &'static str,
}

/// `{"Name": ...}` of `SingleHeader` and `SingleQueryArgument`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct NamedField {
    name: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CookiesField {
    match_pattern: CookiePattern,
    match_scope: &'static str,
    oversize_handling: &'static str,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
pub(super) struct CookiePattern {
    included_cookies: Vec<String>,
}

/// What the exemptions add to every rule and to the document.
#[derive(Debug, Default)]
pub(super) struct Exempted {
    /// `NotStatement` of every exemption; `None` without exemptions.
    pub statement: Option<ScopeDown>,
    pub ip_sets: Vec<IpSet>,
    pub notes: Vec<String>,
}

/// The ARN placeholder of an IP set, to be replaced by the ARN `CreateIPSet` returns.
pub fn arn_placeholder(name: &str) -> String {
    format!("REPLACE-WITH-THE-ARN-OF-IP-SET-{name}")
}

/// Several statements as one: itself alone, else their AND or OR.
fn all_or_any(mut statements: Vec<ScopeDown>, and: bool) -> ScopeDown {
    if statements.len() == 1 {
        return statements.remove(0);
    }
    if and {
        ScopeDown::And { statements }
    } else {
        ScopeDown::Or { statements }
    }
}

/// An exact match of `value` in `field`.
fn exactly(field: Field, value: &str) -> ScopeDown {
    ScopeDown::ByteMatch {
        field_to_match: field,
        positional_constraint: "EXACTLY",
        search_string: value.to_string(),
        text_transformations: transform("NONE"),
    }
}

/// The statements of exemption `e` (number `i`), and the IP sets they use.
fn exemption(e: &Exemption, i: usize, out: &mut Exempted) -> Result<ScopeDown, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "aws-waf",
        rule: e.name.clone(),
        message,
    };
    let mut all = Vec::new();
    if let Some(m) = exempt::method(e)? {
        all.push(ScopeDown::ByteMatch {
            field_to_match: Field::Method(super::Empty {}),
            positional_constraint: "EXACTLY",
            search_string: m.to_ascii_lowercase(),
            text_transformations: transform("LOWERCASE"),
        });
    }
    if let Some(r) = exempt::route(e)? {
        all.push(super::route_match(r).map_err(unsupported)?);
    }
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "aws-waf")?;
        for (p, (part, value)) in parts.iter().zip(values).enumerate() {
            all.push(client_part(e, (i, p), part, value, out).map_err(unsupported)?);
        }
    }
    Ok(all_or_any(all, true))
}

/// The statement matching `value` of one key part (part `p` of exemption `i`).
fn client_part(
    e: &Exemption,
    (i, p): (usize, usize),
    part: &ClientPart,
    value: &str,
    out: &mut Exempted,
) -> Result<ScopeDown, String> {
    if value.len() > MAX_SEARCH {
        return Err(format!(
            "client value {value:?} is longer than AWS WAF's {MAX_SEARCH}-byte search string"
        ));
    }
    let named = |name: &str| NamedField {
        name: name.to_string(),
    };
    Ok(match part {
        ClientPart::Address | ClientPart::ForwardedFor => {
            let address: IpAddr = value.parse().map_err(|_| {
                format!(
                    "client {value:?} is not an IP address, and key {} holds addresses",
                    e.key.text
                )
            })?;
            let slug: String = crate::policy::rule_name(&e.name).chars().take(60).collect();
            let name = format!("rlctl-exempt-{i}-{p}-{slug}");
            let (version, bits) = match address {
                IpAddr::V4(_) => ("IPV4", 32),
                IpAddr::V6(_) => ("IPV6", 128),
            };
            out.ip_sets.push(IpSet {
                addresses: vec![format!("{address}/{bits}")],
                ip_address_version: version,
                name: name.clone(),
            });
            out.notes.push(format!(
                "Exemption {}: create IP set {name} from IPSets (aws wafv2 create-ip-set) and put its ARN in place of {}.",
                e.name,
                arn_placeholder(&name)
            ));
            let by_address = ScopeDown::IpSetReference {
                arn: arn_placeholder(&name),
                ip_set_forwarded_ip_config: None,
            };
            if *part == ClientPart::Address {
                by_address
            } else {
                out.notes.push(format!(
                    "Exemption {}: xff key: the address is matched in the first X-Forwarded-For address or in the connecting address, and WAF may skip a rule whose forwarded-IP match finds no header: both only exempt more than the policy, never less.",
                    e.name
                ));
                let forwarded = ScopeDown::IpSetReference {
                    arn: arn_placeholder(&name),
                    ip_set_forwarded_ip_config: Some(IpSetForwardedIpConfig {
                        fallback_behavior: "NO_MATCH",
                        header_name: "X-Forwarded-For",
                        position: "FIRST",
                    }),
                };
                all_or_any(vec![forwarded, by_address], false)
            }
        }
        ClientPart::User => {
            return Err(
                "AWS WAF sees the Authorization header, not the user name: exempt this client by ip, xff or a header instead".into(),
            );
        }
        ClientPart::Header(h) => {
            exactly(Field::SingleHeader(named(&h.to_ascii_lowercase())), value)
        }
        ClientPart::QueryArg(a) => exactly(Field::SingleQueryArgument(named(a)), value),
        ClientPart::Cookie(c) => exactly(
            Field::Cookies(CookiesField {
                match_pattern: CookiePattern {
                    included_cookies: vec![c.clone()],
                },
                match_scope: "VALUE",
                oversize_handling: "CONTINUE",
            }),
            value,
        ),
        ClientPart::Variable(v) => {
            return Err(format!(
                "AWS WAF cannot read the nginx variable ${v}; key the exemption on ip, xff, a header, a cookie or a query argument"
            ));
        }
    })
}

/// The statement every rule adds for `exemptions`, with the IP sets and notes.
pub(super) fn exempted(exemptions: &[Exemption]) -> Result<Exempted, ExportError> {
    let mut out = Exempted::default();
    if exemptions.is_empty() {
        return Ok(out);
    }
    let mut any = Vec::new();
    for (i, e) in exemptions.iter().enumerate() {
        out.notes.push(exempt::describe(e));
        any.push(exemption(e, i, &mut out)?);
    }
    out.notes.push(
        "Exemptions: every rule's ScopeDownStatement holds a NotStatement of them, so no rule counts or blocks an exempt request.".into(),
    );
    out.statement = Some(ScopeDown::Not {
        statement: Box::new(all_or_any(any, false)),
    });
    Ok(out)
}
