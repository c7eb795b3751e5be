//! nginx exemptions: a chain of `map`s sets `$rlctl_exempt` to 1 for the
//! requests an exemption matches, and every rule's key is mapped to the empty
//! string for them (nginx does not count requests whose key is empty: the
//! `limit_req_zone` documentation, nginx.org/r/limit_req_zone, "Requests with
//! an empty key value are not accounted"). Map strings are matched ignoring
//! case (nginx.org/r/map), so methods use `~*` and clients an anchored,
//! case-sensitive `~` regex.

use std::net::IpAddr;

use super::conf::Conf;
use super::exempt;
use super::{ClientPart, ExportError, byte_route};
use crate::export::key::key_parts;
use crate::ingest::key::canonical_address;
use crate::policy::Exemption;

/// The variable that is 1 for exempt requests.
pub const EXEMPT_VARIABLE: &str = "$rlctl_exempt";

/// The nginx expression of a key part as text (the form `client` is written in).
fn text_expr(part: &ClientPart, xff: &str) -> String {
    match part {
        ClientPart::Address => "$remote_addr".into(),
        ClientPart::ForwardedFor => xff.into(),
        ClientPart::User => "$remote_user".into(),
        ClientPart::Header(h) => format!("$http_{}", h.to_ascii_lowercase().replace('-', "_")),
        ClientPart::Cookie(c) => format!("$cookie_{c}"),
        ClientPart::QueryArg(a) => format!("$arg_{a}"),
        ClientPart::Variable(v) => format!("${v}"),
    }
}

/// The key of an exemption as request attributes.
fn parts(e: &Exemption) -> Result<Vec<ClientPart>, ExportError> {
    key_parts(&e.name, &e.key, "request attribute")
}

/// The client's value for each part of its key, refused when an `ip`
/// part's is not an address: `$remote_addr` always is one, so the map would
/// never match it (a prefix such as `192.0.2.0/24` included).
fn client_values<'c>(
    e: &Exemption,
    client: &'c str,
    parts: &[ClientPart],
) -> Result<Vec<&'c str>, ExportError> {
    let values = exempt::client_values(e, client, parts.len(), "nginx")?;
    match (parts.iter().zip(&values))
        .find(|(part, value)| **part == ClientPart::Address && value.parse::<IpAddr>().is_err())
    {
        Some((_, value)) => Err(ExportError::Unsupported {
            target: "nginx",
            rule: e.name.clone(),
            message: format!(
                "client {value:?} is not an IP address, and $remote_addr always is one (nginx matches the address, not a prefix)"
            ),
        }),
        None => Ok(values),
    }
}

/// The regex (anchored, without `~`) that matches a client, given by its
/// value for each part, as nginx writes the parts: an address part as
/// `$remote_addr` prints it (canonical: `0:0:0:0:0:0:0:1` is `::1`, as the
/// replay keys it; an IPv4 address also as a dual-stack listener prints it,
/// `::ffff:192.0.2.7`), the others as the policy writes them
/// (X-Forwarded-For's token is compared as written).
fn client_pattern(values: &[&str], parts: &[ClientPart]) -> String {
    let pattern = (parts.iter().zip(values))
        .map(|(part, value)| match part {
            ClientPart::Address => {
                let address = canonical_address(value);
                let mapped = match address.parse::<IpAddr>() {
                    Ok(IpAddr::V4(_)) => "(::ffff:)?",
                    _ => "",
                };
                format!("{mapped}{}", regex::escape(&address))
            }
            _ => regex::escape(value),
        })
        .collect::<Vec<_>>()
        .join(r"\+");
    format!("^{pattern}$")
}

/// Writes the maps of every exemption; returns whether any uses X-Forwarded-For.
pub fn write(
    conf: &mut Conf,
    exemptions: &[Exemption],
    quote: impl Fn(&str) -> String,
    xff: &str,
) -> Result<bool, ExportError> {
    let mut uses_xff = false;
    let mut each = Vec::new();
    conf.blank().comments(&[
        "Exemptions: $rlctl_exempt is 1 for the requests below, and every rule's key is".into(),
        "empty for them, so no limit counts or rejects them.".into(),
    ]);
    for (i, e) in exemptions.iter().enumerate() {
        conf.comment(exempt::describe(e));
        let mut vars = Vec::new();
        let mut map = |conf: &mut Conf, source: &str, pattern: String, what: &str| {
            let var = format!("$rlctl_ex{i}_{what}");
            conf.block(&format!("map {source} {var}"), |c| {
                c.line(format!("{} 1;", quote(&pattern)))
                    .line("default \"\";");
            });
            vars.push(var);
        };
        if let Some(m) = exempt::method(e)? {
            map(
                conf,
                "$request_method",
                format!("~*^{}$", regex::escape(&m)),
                "method",
            );
        }
        if let Some(r) = byte_route("nginx", &e.name, exempt::route(e)?)? {
            map(conf, "$uri", format!("~{r}"), "route");
        }
        if let Some(client) = exempt::client(e)? {
            let key_parts = parts(e)?;
            let values = client_values(e, client, &key_parts)?;
            uses_xff |= key_parts.contains(&ClientPart::ForwardedFor);
            let source: Vec<String> = key_parts.iter().map(|p| text_expr(p, xff)).collect();
            let pattern = format!("~{}", client_pattern(&values, &key_parts));
            map(conf, &quote(&source.join("+")), pattern, "client");
        }
        match vars.as_slice() {
            [one] => each.push(one.clone()),
            _ => {
                let var = format!("$rlctl_ex{i}");
                let all = "1".repeat(vars.len());
                conf.block(&format!("map {} {var}", quote(&vars.concat())), |c| {
                    c.line(format!("{all} 1;")).line("default \"\";");
                });
                each.push(var);
            }
        }
    }
    conf.block(
        &format!("map {} {EXEMPT_VARIABLE}", quote(&each.concat())),
        |c| {
            c.line("\"~.\" 1;").line("default \"\";");
        },
    );
    Ok(uses_xff)
}

/// Maps a rule's key to empty for exempt requests; returns the new key variable.
pub fn open_key(conf: &mut Conf, id: &str, key: &str) -> String {
    let var = format!("$rl_{id}_open");
    conf.block(&format!("map {EXEMPT_VARIABLE} {var}"), |c| {
        c.line("1 \"\";").line(format!("default {key};"));
    });
    var
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_matched_as_nginx_prints_them() {
        let matches = |client: &str, parts: &[ClientPart], text: &str| {
            let values: Vec<&str> = match parts.len() {
                1 => vec![client],
                _ => client.split('+').collect(),
            };
            regex::Regex::new(&client_pattern(&values, parts))
                .unwrap()
                .is_match(text)
        };
        let ip = [ClientPart::Address];
        assert!(matches("192.0.2.7", &ip, "192.0.2.7"));
        // A dual-stack listener's IPv4 client.
        assert!(matches("192.0.2.7", &ip, "::ffff:192.0.2.7"));
        assert!(matches("::ffff:192.0.2.7", &ip, "192.0.2.7"));
        assert!(!matches("192.0.2.7", &ip, "192.0.2.70"));
        assert!(!matches("192.0.2.7", &ip, "192a0b2c7"));
        assert!(matches("0:0:0:0:0:0:0:1", &ip, "::1"));
        assert!(matches("2001:DB8::1", &ip, "2001:db8::1"));
        // X-Forwarded-For's token and other parts as written.
        let xff_user = [ClientPart::ForwardedFor, ClientPart::User];
        assert!(matches("2001:DB8::1+bob", &xff_user, "2001:DB8::1+bob"));
        assert!(!matches("2001:DB8::1+bob", &xff_user, "2001:db8::1+bob"));
        let ip_user = [ClientPart::Address, ClientPart::User];
        assert!(matches("192.0.2.7+a.b", &ip_user, "::ffff:192.0.2.7+a.b"));
        assert!(!matches("192.0.2.7+a.b", &ip_user, "192.0.2.7+axb"));
    }
}
