//! Traefik exemptions: one router per exemption, matching exactly its
//! requests, with a priority above every rate-limited router and no rateLimit
//! middleware. Traefik routes a request through one router only, the matching
//! one of highest priority (by default a router's priority is the length of
//! its rule: doc.traefik.io/traefik/reference/routing-configuration/http/
//! routing/rules-and-priority/), so an exempt request meets no limit.
//!
//! Matchers (Traefik v3, `pkg/muxer/http/matcher.go`): `Method`, `PathRegexp`
//! (Go regexp on the path), `ClientIP` (the connection's address: it uses
//! `ip.RemoteAddrStrategy`, never X-Forwarded-For), `Header(key, value)` (an
//! exact value) and `Query(key, value)`. For xff keys the first
//! X-Forwarded-For address is matched with `HeaderRegexp`, or the connection's
//! address with `ClientIP`: that may exempt more than the policy, never less.
//! Traefik has no cookie matcher and cannot see a Basic-auth user name, so
//! those client exemptions are refused.

use super::traefik::rule_literal;
use super::{ClientPart, ExportError, dashed, exempt, exemption_identifiers};
use crate::export::key::key_parts;
use crate::policy::{CheckedRule, Exemption};

/// Priority of the first exemption router; later ones count down from it.
pub const PRIORITY: u64 = 100_000;

/// One exemption's router.
pub struct ExemptRouter {
    pub name: String,
    pub rule: String,
    pub priority: u64,
    pub notes: Vec<String>,
}

/// The Traefik matcher of one key part's `value`.
fn client_matcher(part: &ClientPart, value: &str, key: &str) -> Result<String, String> {
    let address = || {
        value
            .parse::<std::net::IpAddr>()
            .map(|a| a.to_string())
            .map_err(|_| {
                format!("client {value:?} is not an IP address, and key {key} holds addresses")
            })
    };
    Ok(match part {
        ClientPart::Address => format!("ClientIP({})", rule_literal(&address()?)),
        ClientPart::ForwardedFor => {
            let ip = address()?;
            let first = first_forwarded(&ip);
            format!(
                "(HeaderRegexp(`X-Forwarded-For`, {}) || ClientIP({}))",
                rule_literal(&first),
                rule_literal(&ip)
            )
        }
        ClientPart::Header(h) => format!("Header({}, {})", rule_literal(h), rule_literal(value)),
        ClientPart::QueryArg(a) => format!("Query({}, {})", rule_literal(a), rule_literal(value)),
        ClientPart::User => {
            return Err("Traefik sees the Authorization header, not the user name: exempt this client by ip, xff or a header instead".into());
        }
        other => {
            return Err(format!(
                "Traefik's router rules cannot match {other}; exempt this client by ip, xff, a header or a query argument"
            ));
        }
    })
}

/// The rule of one exemption: its method, route and client matchers, ANDed.
fn rule_of(e: &Exemption) -> Result<(String, Vec<String>), ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "traefik",
        rule: e.name.clone(),
        message,
    };
    let mut all = Vec::new();
    let mut notes = vec![exempt::describe(e)];
    if let Some(m) = exempt::method(e)? {
        all.push(format!("Method({})", rule_literal(&m)));
    }
    if let Some(r) = exempt::route(e)? {
        all.push(format!("PathRegexp({})", rule_literal(r)));
    }
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "traefik")?;
        for (part, value) in parts.iter().zip(values) {
            all.push(client_matcher(part, value, &e.key.text).map_err(unsupported)?);
            if *part == ClientPart::ForwardedFor {
                notes.push("  xff key: the first X-Forwarded-For address, or the connection's address (may exempt a little more than the policy).".into());
            }
        }
    }
    Ok((all.join(" && "), notes))
}

/// The routers of `exemptions`, highest priority first.
pub fn routers(
    exemptions: &[Exemption],
    rules: &[CheckedRule],
) -> Result<Vec<ExemptRouter>, ExportError> {
    let ids = exemption_identifiers(exemptions, rules);
    exemptions
        .iter()
        .zip(ids)
        .enumerate()
        .map(|(i, (e, id))| {
            let (rule, notes) = rule_of(e)?;
            Ok(ExemptRouter {
                name: format!("rl-exempt-{}", dashed(&id)),
                rule,
                priority: PRIORITY - i as u64,
                notes,
            })
        })
        .collect()
}

/// The Go regexp of an X-Forwarded-For header whose first address is `ip`
/// (canonical text), as the replay reads it: with or without a port or
/// brackets, in any case, an IPv4 address also as IPv4-mapped IPv6.
fn first_forwarded(ip: &str) -> String {
    let mapped = if ip.contains(':') { "" } else { "(?:::ffff:)?" };
    format!(
        r"^\s*\[?(?i:{mapped}{})\]?(?::\d+)?\s*(,|$)",
        regex::escape(ip)
    )
}

#[cfg(test)]
mod tests {
    use crate::export::{render_exemption, traefik::Traefik};

    #[test]
    fn a_forwarded_address_matches_with_a_port_brackets_or_another_case() {
        let matches = |ip: &str, header: &str| {
            regex::Regex::new(&super::first_forwarded(ip))
                .unwrap()
                .is_match(header)
        };
        for header in [
            "192.0.2.7",
            " 192.0.2.7 , 10.0.0.1",
            "192.0.2.7:5678",
            "::ffff:192.0.2.7",
            "[::FFFF:192.0.2.7]:80",
        ] {
            assert!(matches("192.0.2.7", header), "{header}");
        }
        for header in ["192.0.2.70", "10.0.0.1, 192.0.2.7", "192.0.2.7x"] {
            assert!(!matches("192.0.2.7", header), "{header}");
        }
        for header in ["2001:db8::1", "2001:DB8::1", "[2001:db8::1]:443, 10.0.0.1"] {
            assert!(matches("2001:db8::1", header), "{header}");
        }
        assert!(!matches("2001:db8::1", "2001:db8::10"));
    }

    fn render(exemption: &str) -> Result<String, String> {
        render_exemption(&Traefik, "3/1m", exemption)
    }

    #[test]
    fn exemption_routers_match_exactly_and_outrank_the_limited_ones() {
        let out = render("client='10.0.0.7'\nmethod='get'\nroute='^/h$'").unwrap();
        assert!(
            out.contains(
                "rl-exempt-e:\n      rule: \"Method(`GET`) && PathRegexp(`^/h$`) && ClientIP(`10.0.0.7`)\"\n      priority: 100000"
            ),
            "{out}"
        );
        let out = render("key='field:arg_key'\nclient='k1'").unwrap();
        assert!(out.contains("rule: \"Query(`key`, `k1`)\""), "{out}");
        let out = render("key='ip+field:http_x_team'\nclient='10.0.0.7+blue'").unwrap();
        assert!(
            out.contains("rule: \"ClientIP(`10.0.0.7`) && Header(`x-team`, `blue`)\""),
            "{out}"
        );
    }

    #[test]
    fn clients_traefik_cannot_match_are_refused_by_name() {
        let err = render("key='user'\nclient='svc'").unwrap_err();
        assert!(
            err.contains("traefik cannot express rule `e`: Traefik sees the Authorization header"),
            "{err}"
        );
        assert!(
            render("key='field:cookie_sid'\nclient='x'")
                .unwrap_err()
                .contains("cannot match cookie sid")
        );
        assert!(
            render("client='office'")
                .unwrap_err()
                .contains("is not an IP address")
        );
    }
}
