//! Exemptions: policy rules with `exempt = true` that select a path (`route`
//! or `template`, optionally `method`), a client (`client`: one value of the rule's `key`),
//! or both. A request an exemption matches is never limited: no rule counts
//! it and no limiter's state changes. Exemptions take no limit, burst or
//! algorithm.

use regex::Regex;

use super::{CheckedRule, PolicyError, Rule, checked_method, route_regex};
use crate::ingest::key::{KeyReading, KeySet, KeySpec};

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
    /// The key its client is compared on, as ingested among `keys` (where
    /// the primary key carries `--cidr4/6`), and the client as that key's
    /// values are written, for a product reading keys `reading`'s way
    /// (`None`: as the policy does). nginx's exemption `map` compares
    /// X-Forwarded-For's token with the client as written; addresses are
    /// otherwise compared in canonical form. Where `--cidr4/6` made the
    /// clients prefixes, an address (not a prefix) is compared with each
    /// request's address: it exempts its own requests, as a product keying
    /// on addresses does.
    pub fn compared_on(
        &self,
        keys: &KeySet,
        reading: Option<KeyReading>,
    ) -> (KeySpec, Option<String>) {
        let ingested = keys.by_text(&self.key.text).unwrap_or(&self.key);
        // An exemption compares the whole value (HAProxy's ACL reads the
        // header, not the table's first bytes of it), and only where there is
        // one (Kong's route matches a header, not the address it limits by
        // without one).
        let whole_text = |r: KeyReading| KeyReading {
            text_bytes: None,
            missing_as_address: false,
            ..r
        };
        let mut spec = (reading.and_then(|r| ingested.read_as(whole_text(r))))
            .unwrap_or_else(|| ingested.clone());
        let address = (self.keyed_client.as_deref()).is_some_and(|c| !self.key.names_a_prefix(c));
        if spec.has_prefixes() && address {
            let whole = KeyReading {
                whole_addresses: true,
                ..spec.reading
            };
            spec = spec.read_as(whole).unwrap_or(spec);
        }
        let client = self.client.as_deref().map(|c| spec.as_keyed(c));
        (spec, client)
    }

    /// The text of the key [`Self::compared_on`] gives, and the client.
    pub fn key_and_client(
        &self,
        keys: &KeySet,
        reading: Option<KeyReading>,
    ) -> (String, Option<String>) {
        let (spec, client) = self.compared_on(keys, reading);
        (spec.text, client)
    }
}

/// Adds to `keys` the columns a policy's replays read: each rule's and
/// exemption's key, as the policy and as each of `readings` reads it
/// ([`KeySet::add_policy_keys`]), and the columns the exemptions' clients
/// are compared on beyond those ([`Exemption::compared_on`]: an address
/// where `--cidr4/6` made the clients prefixes).
pub fn add_key_columns(
    keys: &mut KeySet,
    rules: &[CheckedRule],
    exemptions: &[Exemption],
    readings: &[KeyReading],
) {
    let used = (rules.iter().map(|r| &r.key)).chain(exemptions.iter().map(|e| &e.key));
    keys.add_policy_keys(used, readings);
    let all = std::iter::once(None).chain(readings.iter().copied().map(Some));
    let compared: Vec<KeySpec> = (exemptions.iter())
        .flat_map(|e| all.clone().map(|r| e.compared_on(keys, r).0))
        .filter(|spec| keys.by_text(&spec.text).is_none())
        .collect();
    for spec in compared {
        keys.add(spec);
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
                    [[rule]]\nname='o'\nclient='0:0:0:0:0:0:0:1'\nexempt=true\n\
                    [[rule]]\nname='n'\nclient='192.0.2.0/24'\nexempt=true\n";
        let p = Policy::parse_policy(text, "p.toml").unwrap();
        let [by_xff, by_ip, by_prefix] = p.exemptions.as_slice() else {
            panic!("{:?}", p.exemptions)
        };
        let mut keys = KeySet::new(KeySpec::parse("ip", Some(24), Some(64)).unwrap());
        keys.add(by_xff.key.clone());
        let read = |e: &super::Exemption, r| e.key_and_client(&keys, r);
        let pair = |key: &str, client: &str| (key.to_string(), Some(client.to_string()));
        // The policy: the client as ingestion writes keys, on the key's own column.
        assert_eq!(read(by_xff, None), pair("xff", "2001:db8::1"));
        // nginx compares X-Forwarded-For's token with the client as written.
        let nginx = Some(KeyReading::addresses(TokenAsWritten));
        assert_eq!(
            read(by_xff, nginx),
            pair("xff (token as written)", "2001:DB8::1")
        );
        // HAProxy compares addresses.
        let haproxy = Some(KeyReading::addresses(AddressElseConnection));
        assert_eq!(
            read(by_xff, haproxy),
            pair("xff (address else connection)", "2001:db8::1")
        );
        // Under --cidr4/6 the policy's `ip` column holds prefixes: an exempt
        // address is compared with each request's address, as products do
        // (nginx's `$remote_addr` writes it canonically), an exempt prefix
        // with the prefixes.
        for reading in [None, nginx, haproxy] {
            assert_eq!(read(by_ip, reading), pair("ip (each address)", "::1"));
        }
        assert_eq!(read(by_prefix, None), pair("ip", "192.0.2.0/24"));
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
