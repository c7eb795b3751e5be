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
//! never blocks a request the policy admits.

use serde_json::{Value, json};

use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, dashed, describe,
    header_advice, identifiers, method, route,
};
use crate::policy::CheckedRule;

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

fn no_transform() -> Value {
    json!([{ "Priority": 0, "Type": "NONE" }])
}

/// A custom aggregation key for one key part.
fn custom_key(part: &ClientPart) -> Option<Value> {
    let named = |kind: &str, name: &str| json!({ kind: { "Name": name, "TextTransformations": no_transform() } });
    Some(match part {
        ClientPart::Address => json!({ "IP": {} }),
        ClientPart::ForwardedFor => json!({ "ForwardedIP": {} }),
        ClientPart::User => named("Header", "authorization"),
        ClientPart::Header(h) => named("Header", &h.to_ascii_lowercase()),
        ClientPart::Cookie(c) => named("Cookie", c),
        ClientPart::QueryArg(a) => named("QueryArgument", a),
        ClientPart::Variable(_) => return None,
    })
}

impl Exporter for AwsWaf {
    fn target(&self) -> &'static str {
        "aws-waf"
    }

    fn render(&self, rules: &[CheckedRule], opts: &ExportOptions) -> Result<String, ExportError> {
        let ids: Vec<String> = identifiers(rules).iter().map(|id| dashed(id)).collect();
        let mut notes = vec![
            format!("rlctl export --target aws-waf: {} rate-based rules. JSON holds no comments: these notes sit beside Rules; give AWS only the Rules (jq .Rules).", rules.len()),
            "AWS WAF counts a sliding window of 60, 120, 300 or 600 s and has no burst: each Limit is the most the rule can admit in any span of its window (at least 10), so AWS never blocks a request the policy admits, but lets a client send that many at once.".into(),
            "AWS WAF re-evaluates rates every few seconds, so it starts and stops blocking with a delay, and blocks every request of a client while it is over the limit.".into(),
            "With the AWS CLI v2 pass --cli-binary-format raw-in-base64-out so SearchString is read as text.".into(),
        ];
        if opts.dry_run {
            notes.push("Dry run: the rules Count instead of Block; see the CloudWatch metrics and sampled requests.".into());
        }
        let mut out_rules = Vec::new();
        for (priority, (rule, id)) in rules.iter().zip(&ids).enumerate() {
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
            let mut statement = json!({ "Limit": limit, "EvaluationWindowSec": window });
            match parts.as_slice() {
                [ClientPart::Address] => statement["AggregateKeyType"] = json!("IP"),
                [ClientPart::ForwardedFor] => statement["AggregateKeyType"] = json!("FORWARDED_IP"),
                _ => {
                    let keys = parts
                        .iter()
                        .map(|p| {
                            custom_key(p).ok_or_else(|| {
                                unsupported(format!("AWS WAF cannot aggregate on {p}"))
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    if keys.len() > 5 {
                        return Err(unsupported("AWS WAF aggregates on at most 5 keys".into()));
                    }
                    statement["AggregateKeyType"] = json!("CUSTOM_KEYS");
                    statement["CustomKeys"] = json!(keys);
                    notes.push(format!(
                        "  {}: requests missing a key part are not counted by this rule.",
                        rule.name
                    ));
                }
            }
            if parts.contains(&ClientPart::ForwardedFor) {
                statement["ForwardedIPConfig"] =
                    json!({ "HeaderName": "X-Forwarded-For", "FallbackBehavior": "NO_MATCH" });
                notes.push(format!("  {}: AWS takes the first X-Forwarded-For address; requests without a valid one are not counted.", rule.name));
            }
            if parts.contains(&ClientPart::User) {
                notes.push(format!(
                    "  {}: user keys use the Authorization header: one count per credential.",
                    rule.name
                ));
            }
            let mut scope = Vec::new();
            if let Some(m) = method(rule)? {
                scope.push(json!({ "ByteMatchStatement": {
                    "SearchString": m.to_ascii_lowercase(),
                    "FieldToMatch": { "Method": {} },
                    "TextTransformations": [{ "Priority": 0, "Type": "LOWERCASE" }],
                    "PositionalConstraint": "EXACTLY",
                }}));
            }
            if let Some(r) = route(rule)? {
                if r.len() > MAX_REGEX {
                    return Err(unsupported(format!(
                        "its route regex is longer than AWS WAF's {MAX_REGEX} characters"
                    )));
                }
                scope.push(json!({ "RegexMatchStatement": {
                    "RegexString": r,
                    "FieldToMatch": { "UriPath": {} },
                    "TextTransformations": no_transform(),
                }}));
            }
            match scope.len() {
                0 => {}
                1 => statement["ScopeDownStatement"] = scope.remove(0),
                _ => {
                    statement["ScopeDownStatement"] =
                        json!({ "AndStatement": { "Statements": scope } })
                }
            }
            let action = if opts.dry_run {
                json!({ "Count": {} })
            } else {
                json!({ "Block": { "CustomResponse": { "ResponseCode": 429 } } })
            };
            let name = format!("rlctl-{id}");
            out_rules.push(json!({
                "Name": name,
                "Priority": priority,
                "Statement": { "RateBasedStatement": statement },
                "Action": action,
                "VisibilityConfig": {
                    "SampledRequestsEnabled": true,
                    "CloudWatchMetricsEnabled": true,
                    "MetricName": name,
                },
            }));
        }
        let doc = json!({ "Notes": notes, "Rules": out_rules });
        let mut text = serde_json::to_string_pretty(&doc).expect("JSON values always serialize");
        text.push('\n');
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    #[test]
    fn windows_map_to_the_closest_allowed() {
        assert_eq!(window(1), 60);
        assert_eq!(window(60), 60);
        assert_eq!(window(90), 60);
        assert_eq!(window(100), 120);
        assert_eq!(window(240), 300);
        assert_eq!(window(3600), 600);
    }

    #[test]
    fn limits_scale_to_the_window_with_the_burst_and_a_floor() {
        let shape = |t: &str| Shape::of(&Policy::parse(t, "p").unwrap()[0]).unwrap();
        // 40/1m burst 7 over 60 s: 7 + 40 - 1.
        assert_eq!(
            limit(&shape("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7"), 60),
            46
        );
        // 5000/1h over 600 s: capacity 5000 (default) + ⌈5000·600/3600⌉ - 1.
        assert_eq!(
            limit(&shape("[[rule]]\nname='g'\nlimit='5000/1h'"), 600),
            5000 + 834 - 1
        );
        // 10/s sliding-log over 60 s: at most 10 in each of 60 seconds.
        assert_eq!(
            limit(
                &shape("[[rule]]\nname='g'\nlimit='10/s'\nalgorithm='sliding-log'"),
                60
            ),
            600
        );
        // 1/1h token bucket: 1 + ⌈60/3600⌉ - 1 = 1, raised to AWS's minimum.
        assert_eq!(limit(&shape("[[rule]]\nname='g'\nlimit='1/1h'"), 60), 10);
    }

    #[test]
    fn keys_become_aggregation_settings() {
        let rules = Policy::parse(
            "[[rule]]\nname='k'\nkey='xff+field:http_x_api_key'\nlimit='40/1m'",
            "p",
        )
        .unwrap();
        let out: Value =
            serde_json::from_str(&AwsWaf.render(&rules, &ExportOptions::default()).unwrap())
                .unwrap();
        let st = &out["Rules"][0]["Statement"]["RateBasedStatement"];
        assert_eq!(st["AggregateKeyType"], "CUSTOM_KEYS");
        assert_eq!(st["CustomKeys"][1]["Header"]["Name"], "x-api-key");
        assert_eq!(st["ForwardedIPConfig"]["HeaderName"], "X-Forwarded-For");
    }
}
