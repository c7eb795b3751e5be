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
use super::{ClientPart, ExportError};
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

/// Refuses a client whose value for an `ip` part is not an address:
/// `$remote_addr` always is one, so the map would never match it (a prefix
/// such as `192.0.2.0/24` included).
fn addresses_where_due(
    e: &Exemption,
    client: &str,
    parts: &[ClientPart],
) -> Result<(), ExportError> {
    let values = exempt::client_values(e, client, parts.len(), "nginx")?;
    match (parts.iter().zip(values))
        .find(|(part, value)| **part == ClientPart::Address && value.parse::<IpAddr>().is_err())
    {
        Some((_, value)) => Err(ExportError::Unsupported {
            target: "nginx",
            rule: e.name.clone(),
            message: format!(
                "client {value:?} is not an IP address, and $remote_addr always is one (nginx matches the address, not a prefix)"
            ),
        }),
        None => Ok(()),
    }
}

/// The client as nginx writes its parts: an address part as `$remote_addr`
/// prints it (canonical: `0:0:0:0:0:0:0:1` is `::1`, as the replay keys
/// it), the others as the policy writes them (X-Forwarded-For's token is
/// compared as written).
fn as_nginx_writes(client: &str, parts: &[ClientPart]) -> String {
    let values: Vec<&str> = match parts.len() {
        1 => vec![client],
        _ => client.split('+').collect(),
    };
    (parts.iter().zip(values))
        .map(|(part, value)| match part {
            ClientPart::Address => canonical_address(value).into_owned(),
            _ => value.to_string(),
        })
        .collect::<Vec<_>>()
        .join("+")
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
        if let Some(r) = exempt::route(e)? {
            map(conf, "$uri", format!("~{r}"), "route");
        }
        if let Some(client) = exempt::client(e)? {
            let key_parts = parts(e)?;
            addresses_where_due(e, client, &key_parts)?;
            uses_xff |= key_parts.contains(&ClientPart::ForwardedFor);
            let source: Vec<String> = key_parts.iter().map(|p| text_expr(p, xff)).collect();
            let pattern = format!("~^{}$", regex::escape(&as_nginx_writes(client, &key_parts)));
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
