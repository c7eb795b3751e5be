//! Exemptions: policy rules with `exempt = true` that select a path (`route`
//! or `template`, optionally `method`), a client (`client`: one value of the rule's `key`),
//! or both. A request an exemption matches is never limited: no rule counts
//! it and no limiter's state changes. Exemptions take no limit, burst or
//! algorithm.

use regex::Regex;

use super::{CheckedRule, PolicyError, Rule, checked_method, route_regex};
use crate::ingest::key::KeySpec;

/// A policy with its limit rules and its exemptions apart.
#[derive(Debug, Clone, Default)]
pub struct CheckedPolicy {
    pub rules: Vec<CheckedRule>,
    pub exemptions: Vec<Exemption>,
    /// The templates of the policy's `routes` file (read by
    /// [`super::Policy::load_policy`]; `None` from text alone).
    pub routes: Option<crate::discover::TemplateSet>,
}

/// One checked exemption.
#[derive(Debug, Clone)]
pub struct Exemption {
    pub name: String,
    pub method: Option<String>,
    pub route: Option<Regex>,
    /// The key `client` is a value of.
    pub key: KeySpec,
    /// The client as the policy writes it (what exports match on: a
    /// gateway sees the address as its server writes it).
    pub client: Option<String>,
    /// The client as ingestion writes keys ([`KeySpec::as_keyed`]), what
    /// the requests' keys are compared with.
    pub keyed_client: Option<String>,
}

impl Exemption {
    /// Whether it matches a request with this method and path (query ignored)
    /// from this client (`client`: the request's value of [`Exemption::key`]).
    pub fn matches(&self, method: &str, path: &str, client: Option<&str>) -> bool {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self.route.as_ref().is_none_or(|r| r.is_match(path))
            && self
                .keyed_client
                .as_deref()
                .is_none_or(|want| client == Some(want))
    }
}

/// Checks an exempt rule.
pub(super) fn check(
    rule: &Rule,
    fail: impl Fn(String) -> PolicyError,
) -> Result<Exemption, PolicyError> {
    if !rule.exempt {
        return Err(fail(
            "`client` selects a client to exempt: add exempt = true".into(),
        ));
    }
    if !rule.limit.is_empty() || rule.burst.is_some() {
        return Err(fail("an exempt rule takes no limit or burst".into()));
    }
    if rule.route.is_none() && rule.template.is_none() && rule.client.is_none() {
        return Err(fail(
            "an exempt rule needs a route (or template), a client or both (it would exempt every request)".into(),
        ));
    }
    let key = KeySpec::parse(&rule.key, None, None).map_err(|e| fail(e.to_string()))?;
    Ok(Exemption {
        name: rule.name.clone(),
        method: checked_method(rule, &fail)?,
        route: route_regex(rule, &fail)?,
        client: rule.client.clone(),
        keyed_client: rule.client.as_deref().map(|c| key.as_keyed(c)),
        key,
    })
}

#[cfg(test)]
mod tests {
    use super::super::Policy;

    const TEXT: &str = r#"
[[rule]]
name = "global"
limit = "40/1m"

[[rule]]
name = "health"
route = "^/healthz$"
exempt = true

[[rule]]
name = "monitor"
client = "10.0.0.7"
exempt = true
"#;

    #[test]
    fn exemptions_are_checked_apart_from_limits() {
        let p = Policy::parse_policy(TEXT, "p.toml").unwrap();
        assert_eq!(p.rules.len(), 1);
        let [health, monitor] = p.exemptions.as_slice() else {
            panic!("{:?}", p.exemptions)
        };
        assert!(health.matches("GET", "/healthz?full=1", Some("1.2.3.4")));
        assert!(!health.matches("GET", "/healthz/x", None));
        assert!(monitor.matches("POST", "/anything", Some("10.0.0.7")));
        assert!(!monitor.matches("POST", "/anything", Some("10.0.0.8")));
        assert_eq!(monitor.key.text, "ip");
    }

    #[test]
    fn callers_that_cannot_honour_exemptions_refuse_them() {
        let err = Policy::parse(TEXT, "p.toml").unwrap_err().to_string();
        assert!(
            err.contains("rule `health`: exempt rules are not supported"),
            "{err}"
        );
    }

    #[test]
    fn bad_exemptions_say_why() {
        let err = |text: &str| {
            Policy::parse_policy(text, "p.toml")
                .unwrap_err()
                .to_string()
        };
        assert!(
            err("[[rule]]\nname='a'\nexempt=true")
                .contains("needs a route (or template), a client")
        );
        assert!(err("[[rule]]\nname='a'\nclient='x'").contains("add exempt = true"));
        assert!(
            err("[[rule]]\nname='a'\nroute='^/h'\nexempt=true\nlimit='1/s'").contains("no limit")
        );
        assert!(err("[[rule]]\nname='a'\nlimit=''").contains("invalid limit"));
    }
}
