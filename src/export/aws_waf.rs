//! AWS WAF: one rate-based rule per policy rule, as JSON.
//!
//! JSON holds no comments, so the output is an object with the `Rules` (what
//! AWS takes, e.g. `jq .Rules`) and, beside them, `Notes`: the conversions and
//! header advice other targets print as comments.
//!
//! AWS WAF counts each client's requests over a sliding evaluation window of
//! 60, 120, 300 or 600 seconds and has no burst. The window closest to W is
//! used, and the Limit is the most the rule can admit in any span of that
//! length ([`Shape::most_in_span`]), at least AWS's minimum of 10, so AWS
//! never blocks a client whose requests the policy all admits (a client over
//! it has all its requests blocked while it stays over, some of which the
//! policy admits). Exemptions narrow every rule's scope-down statement (see
//! [`exempt`]).

use serde::Serialize;

use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, dashed, describe,
    header_advice, identifiers, route,
};
use crate::policy::{CheckedRule, Exemption};

mod exempt;
mod pattern;

/// The AWS WAF exporter.
pub struct AwsWaf;

/// The evaluation windows AWS WAF accepts, in seconds.
pub const WINDOWS: [u64; 4] = [60, 120, 300, 600];
/// The smallest Limit AWS WAF accepts.
pub const MIN_LIMIT: u64 = 10;
/// The largest Limit AWS WAF accepts.
pub const MAX_LIMIT: u64 = 2_000_000_000;
/// The longest RegexString AWS WAF accepts.
pub const MAX_REGEX: usize = 512;

/// The evaluation window closest to `secs` (the shorter on a tie).
pub fn window(secs: u64) -> u64 {
    WINDOWS
        .into_iter()
        .min_by_key(|&w| w.abs_diff(secs))
        .expect("WINDOWS is not empty")
}

/// The Limit for a rule and window: the most it admits in that span, at least 10.
pub fn limit(shape: &Shape, window: u64) -> u64 {
    shape.most_in_span(window).max(MIN_LIMIT)
}

// The JSON document as serde structs, after the AWS WAF API's `Rule` and
// `RateBasedStatement` types. Fields are declared in alphabetical order so the
// keys keep the sorted order this export has always had (AWS reads any order).

/// `{}`: an object with no fields (`{"IP": {}}`, `{"Count": {}}`).
#[derive(Debug, Clone, Serialize)]
struct Empty {}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Document {
    /// The IP sets the exemptions reference, to create first (`CreateIPSet`).
    #[serde(rename = "IPSets", skip_serializing_if = "Vec::is_empty")]
    ip_sets: Vec<exempt::IpSet>,
    notes: Vec<String>,
    rules: Vec<WafRule>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct WafRule {
    action: Action,
    name: String,
    priority: usize,
    statement: Statement,
    visibility_config: VisibilityConfig,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all_fields = "PascalCase")]
enum Action {
    Block { custom_response: CustomResponse },
    Count(Empty),
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct CustomResponse {
    response_code: u16,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Statement {
    rate_based_statement: RateBasedStatement,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct RateBasedStatement {
    aggregate_key_type: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    custom_keys: Option<Vec<CustomKey>>,
    evaluation_window_sec: u64,
    #[serde(rename = "ForwardedIPConfig", skip_serializing_if = "Option::is_none")]
    forwarded_ip_config: Option<ForwardedIpConfig>,
    limit: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope_down_statement: Option<ScopeDown>,
}

/// One part of a custom aggregation key.
#[derive(Debug, Clone, Serialize)]
enum CustomKey {
    #[serde(rename = "IP")]
    Ip(Empty),
    #[serde(rename = "ForwardedIP")]
    ForwardedIp(Empty),
    Header(Named),
    Cookie(Named),
    QueryArgument(Named),
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Named {
    name: String,
    text_transformations: Vec<Transformation>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct Transformation {
    priority: u32,
    r#type: &'static str,
}

/// `[{"Priority": 0, "Type": kind}]`.
fn transform(kind: &'static str) -> Vec<Transformation> {
    vec![Transformation {
        priority: 0,
        r#type: kind,
    }]
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct ForwardedIpConfig {
    fallback_behavior: &'static str,
    header_name: &'static str,
}

/// The statement matching a route on the URI path, its capturing groups
/// written as non-capturing ones ([`pattern`]); or why AWS WAF cannot take it.
fn route_match(route: &str) -> Result<ScopeDown, String> {
    let regex = pattern::without_captures(route);
    if regex.len() > MAX_REGEX {
        let written = match regex.len() == route.len() {
            true => "",
            false => ", its groups written as (?: ),",
        };
        return Err(format!(
            "its route regex{written} is longer than AWS WAF's {MAX_REGEX} characters"
        ));
    }
    Ok(ScopeDown::RegexMatch {
        field_to_match: Field::UriPath(Empty {}),
        regex_string: regex.into_owned(),
        text_transformations: transform("NONE"),
    })
}

/// The requests a rule counts: its method, its route, or both.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all_fields = "PascalCase")]
enum ScopeDown {
    #[serde(rename = "AndStatement")]
    And { statements: Vec<ScopeDown> },
    #[serde(rename = "OrStatement")]
    Or { statements: Vec<ScopeDown> },
    #[serde(rename = "NotStatement")]
    Not { statement: Box<ScopeDown> },
    #[serde(rename = "IPSetReferenceStatement")]
    IpSetReference {
        #[serde(rename = "ARN")]
        arn: String,
        #[serde(
            rename = "IPSetForwardedIPConfig",
            skip_serializing_if = "Option::is_none"
        )]
        ip_set_forwarded_ip_config: Option<exempt::IpSetForwardedIpConfig>,
    },
    #[serde(rename = "ByteMatchStatement")]
    ByteMatch {
        field_to_match: Field,
        positional_constraint: &'static str,
        search_string: String,
        text_transformations: Vec<Transformation>,
    },
    #[serde(rename = "RegexMatchStatement")]
    RegexMatch {
        field_to_match: Field,
        regex_string: String,
        text_transformations: Vec<Transformation>,
    },
}

#[derive(Debug, Clone, Serialize)]
enum Field {
    Cookies(exempt::CookiesField),
    Method(Empty),
    SingleHeader(exempt::NamedField),
    SingleQueryArgument(exempt::NamedField),
    UriPath(Empty),
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "PascalCase")]
struct VisibilityConfig {
    cloud_watch_metrics_enabled: bool,
    metric_name: String,
    sampled_requests_enabled: bool,
}

/// A custom aggregation key for one key part.
fn custom_key(part: &ClientPart) -> Option<CustomKey> {
    let named = |name: &str| Named {
        name: name.to_string(),
        text_transformations: transform("NONE"),
    };
    Some(match part {
        ClientPart::Address => CustomKey::Ip(Empty {}),
        ClientPart::ForwardedFor => CustomKey::ForwardedIp(Empty {}),
        ClientPart::User => CustomKey::Header(named("authorization")),
        ClientPart::Header(h) => CustomKey::Header(named(&h.to_ascii_lowercase())),
        ClientPart::Cookie(c) => CustomKey::Cookie(named(c)),
        ClientPart::QueryArg(a) => CustomKey::QueryArgument(named(a)),
        ClientPart::Variable(_) => return None,
    })
}

/// One policy rule as a rate-based rule at `priority`, with its notes; its
/// scope-down statement leaves out the requests `exempted` matches.
fn waf_rule(
    rule: &CheckedRule,
    id: &str,
    (priority, exempted): (usize, Option<&ScopeDown>),
    opts: &ExportOptions,
    notes: &mut Vec<String>,
) -> Result<WafRule, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "aws-waf",
        rule: rule.name.clone(),
        message,
    };
    let shape = Shape::of(rule)?;
    let parts = client_parts(rule)?;
    let w = u64::from(rule.spec.limit.window.secs());
    let window = window(w);
    let most = shape.most_in_span(window);
    let limit = limit(&shape, window);
    if limit > MAX_LIMIT {
        return Err(unsupported(format!(
            "its limit {limit} per {window}s exceeds AWS WAF's {MAX_LIMIT}"
        )));
    }
    notes.push(describe(rule));
    notes.push(format!(
        "  {}: {}; over {window}s (the evaluation window closest to {w}s) it admits at most {most}, so Limit {limit}{}.",
        rule.name,
        shape.capacity_note,
        if limit > most { " (AWS's minimum)" } else { "" }
    ));
    notes.push(format!("  {}: send {}", rule.name, header_advice(rule)));
    let (aggregate_key_type, custom_keys) = match parts.as_slice() {
        [ClientPart::Address] => ("IP", None),
        [ClientPart::ForwardedFor] => ("FORWARDED_IP", None),
        _ => {
            let keys = parts
                .iter()
                .map(|p| {
                    custom_key(p)
                        .ok_or_else(|| unsupported(format!("AWS WAF cannot aggregate on {p}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if keys.len() > 5 {
                return Err(unsupported("AWS WAF aggregates on at most 5 keys".into()));
            }
            notes.push(format!(
                "  {}: requests missing a key part are not counted by this rule.",
                rule.name
            ));
            ("CUSTOM_KEYS", Some(keys))
        }
    };
    let forwarded_ip_config = parts.contains(&ClientPart::ForwardedFor).then(|| {
        notes.push(format!("  {}: AWS takes the first X-Forwarded-For address; requests without a valid one are not counted.", rule.name));
        ForwardedIpConfig {
            fallback_behavior: "NO_MATCH",
            header_name: "X-Forwarded-For",
        }
    });
    if parts.contains(&ClientPart::User) {
        notes.push(format!(
            "  {}: user keys use the Authorization header: one count per credential.",
            rule.name
        ));
    }
    let mut scope = Vec::new();
    if let Some(m) = rule.method.clone() {
        scope.push(ScopeDown::ByteMatch {
            field_to_match: Field::Method(Empty {}),
            positional_constraint: "EXACTLY",
            search_string: m.to_ascii_lowercase(),
            text_transformations: transform("LOWERCASE"),
        });
    }
    if let Some(r) = route(rule)? {
        scope.push(route_match(r).map_err(unsupported)?);
    }
    scope.extend(exempted.cloned());
    let scope_down_statement = match scope.len() {
        0 | 1 => scope.pop(),
        _ => Some(ScopeDown::And { statements: scope }),
    };
    let action = if opts.dry_run {
        Action::Count(Empty {})
    } else {
        Action::Block {
            custom_response: CustomResponse { response_code: 429 },
        }
    };
    let name = format!("rlctl-{id}");
    Ok(WafRule {
        action,
        name: name.clone(),
        priority,
        statement: Statement {
            rate_based_statement: RateBasedStatement {
                aggregate_key_type,
                custom_keys,
                evaluation_window_sec: window,
                forwarded_ip_config,
                limit,
                scope_down_statement,
            },
        },
        visibility_config: VisibilityConfig {
            cloud_watch_metrics_enabled: true,
            metric_name: name,
            sampled_requests_enabled: true,
        },
    })
}

impl Exporter for AwsWaf {
    fn target(&self) -> &'static str {
        "aws-waf"
    }

    /// The document for `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        let ids: Vec<String> = identifiers(rules).iter().map(|id| dashed(id)).collect();
        let mut notes = vec![
            format!("rlctl export --target aws-waf: {} rate-based rules. JSON holds no comments: these notes sit beside Rules; give AWS only the Rules (jq .Rules).", rules.len()),
            "AWS WAF counts a sliding window of 60, 120, 300 or 600 s and has no burst: each Limit is the most the rule can admit in any span of its window (at least 10), so AWS never blocks a client whose requests the policy all admits, but lets a client send that many at once and, once it is over, blocks all its requests while it stays over, some of which the policy admits.".into(),
            "AWS WAF re-evaluates rates every few seconds, so it starts and stops blocking with a delay, and blocks every request of a client while it is over the limit.".into(),
            "With the AWS CLI v2 pass --cli-binary-format raw-in-base64-out so SearchString is read as text.".into(),
        ];
        if opts.dry_run {
            notes.push("Dry run: the rules Count instead of Block; see the CloudWatch metrics and sampled requests.".into());
        }
        let exempted = exempt::exempted(exemptions)?;
        notes.extend(exempted.notes);
        let mut waf_rules = Vec::new();
        for (priority, (rule, id)) in rules.iter().zip(&ids).enumerate() {
            let at = (priority, exempted.statement.as_ref());
            waf_rules.push(waf_rule(rule, id, at, opts, &mut notes)?);
        }
        let doc = Document {
            ip_sets: exempted.ip_sets,
            notes,
            rules: waf_rules,
        };
        let mut text = serde_json::to_string_pretty(&doc).expect("the document always serializes");
        text.push('\n');
        Ok(text)
    }
}

#[cfg(test)]
mod tests;
