//! Exemptions: policy rules with `exempt = true` that select a path (`route`
//! or `template`, optionally `method`), a client (`client`: one value of the rule's `key`),
//! or both. A request an exemption matches is never limited: no rule counts
//! it and no limiter's state changes. Exemptions take no limit, burst or
//! algorithm.

use regex::Regex;

use super::{CheckedRule, PolicyError, Rule, checked_method, route_regex};
use crate::ingest::key::{ForwardedReading, KeyReading, KeySet, KeySpec};

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

impl Exemption {
    /// The key its client is compared on, by text among `keys` (the
    /// ingestion's, where the primary key carries `--cidr4/6`), and the
    /// client as that key's values are written, for a product reading keys
    /// `reading`'s way (`None`: as the policy does). nginx's exemption `map`
    /// compares the client as the policy writes it with X-Forwarded-For's
    /// token as written; every other product compares addresses, so the
    /// client is taken as ingestion writes keys. A client of a prefix
    /// (`192.0.2.0/24`) matches no request of a product keying on whole
    /// addresses, as no such product's exemption matches it.
    pub fn key_and_client(
        &self,
        keys: &KeySet,
        reading: Option<KeyReading>,
    ) -> (String, Option<&str>) {
        let ingested = (std::iter::once(&keys.primary).chain(&keys.extra))
            .find(|k| k.text == self.key.text)
            .unwrap_or(&self.key);
        match reading.and_then(|r| ingested.read_as(r)) {
            Some(read) if read.reading.forwarded == ForwardedReading::TokenAsWritten => {
                (read.text, self.client.as_deref())
            }
            Some(read) => (read.text, self.keyed_client.as_deref()),
            None => (self.key.text.clone(), self.keyed_client.as_deref()),
        }
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
    fn products_compare_an_exempt_client_as_they_read_keys() {
        use crate::ingest::key::{ForwardedReading::*, KeyReading, KeySet, KeySpec};
        let text = "[[rule]]\nname='m'\nkey='xff'\nclient='2001:DB8::1'\nexempt=true\n\
                    [[rule]]\nname='o'\nclient='192.0.2.7'\nexempt=true\n";
        let p = Policy::parse_policy(text, "p.toml").unwrap();
        let [by_xff, by_ip] = p.exemptions.as_slice() else {
            panic!("{:?}", p.exemptions)
        };
        let mut keys = KeySet::new(KeySpec::parse("ip", Some(24), None).unwrap());
        keys.add(by_xff.key.clone());
        let read = |e: &super::Exemption, r: Option<KeyReading>| {
            let (key, client) = e.key_and_client(&keys, r);
            (key, client.map(str::to_string))
        };
        let pair = |key: &str, client: &str| (key.to_string(), Some(client.to_string()));
        // The policy: the client as ingestion writes keys, on the key's own column.
        assert_eq!(read(by_xff, None), pair("xff", "2001:db8::1"));
        // nginx compares X-Forwarded-For's token with the client as written.
        let nginx = KeyReading::addresses(TokenAsWritten);
        assert_eq!(
            read(by_xff, Some(nginx)),
            pair("xff (token as written)", "2001:DB8::1")
        );
        // HAProxy compares addresses.
        let haproxy = KeyReading::addresses(AddressElseConnection);
        assert_eq!(
            read(by_xff, Some(haproxy)),
            pair("xff (address else connection)", "2001:db8::1")
        );
        // Under --cidr4 24 the policy's `ip` column holds prefixes; a
        // product's holds addresses, where the client is found.
        assert_eq!(read(by_ip, None), pair("ip", "192.0.2.7"));
        assert_eq!(
            read(by_ip, Some(nginx)),
            pair("ip (each address)", "192.0.2.7")
        );
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
