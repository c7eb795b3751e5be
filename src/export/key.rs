//! The client key of a rule as request attributes a product can read
//! ([`ClientPart`]): the policy's `ip`, `xff`, `user` and `field:NAME` parts,
//! with field names read as nginx variables, Traefik access-log names or JSON
//! header paths.

use super::ExportError;
use crate::ingest::key::{KeyPart, KeySpec};
use crate::policy::CheckedRule;

/// One part of a client key, as the request attribute a product can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientPart {
    /// The connecting address.
    Address,
    /// The first address of X-Forwarded-For, else the connecting address.
    ForwardedFor,
    /// The Basic-auth user (`$remote_user`).
    User,
    /// A request header, named as on the wire (`X-Api-Key`).
    Header(String),
    /// A cookie.
    Cookie(String),
    /// A query-string argument.
    QueryArg(String),
    /// Any other nginx variable name (`field:request_id` → `$request_id`).
    Variable(String),
}

/// The client key of `rule` as request attributes.
pub fn client_parts(rule: &CheckedRule) -> Result<Vec<ClientPart>, ExportError> {
    key_parts(
        &rule.name,
        &rule.key,
        "request header, cookie, query argument or nginx variable (use e.g. field:http_x_api_key)",
    )
}

/// A key as request attributes; a `field:NAME` that names none is an error of
/// the rule `name`, saying the field `names no {unknown}`.
pub(crate) fn key_parts(
    name: &str,
    key: &KeySpec,
    unknown: &str,
) -> Result<Vec<ClientPart>, ExportError> {
    key.parts
        .iter()
        .map(|part| match part {
            KeyPart::Ip => Ok(ClientPart::Address),
            KeyPart::Xff => Ok(ClientPart::ForwardedFor),
            KeyPart::User => Ok(ClientPart::User),
            KeyPart::UserAgent => Ok(ClientPart::Header("User-Agent".into())),
            KeyPart::Field(i) => field_part(&key.fields[*i]).ok_or_else(|| ExportError::Rule {
                rule: name.to_string(),
                message: format!("key field `{}` names no {unknown}", key.fields[*i]),
            }),
        })
        .collect()
}

/// Reads a `field:NAME` as a request attribute: nginx variable names
/// (`http_x_api_key`, `cookie_sid`, `arg_key`, others as variables), Traefik
/// access-log names (`request_X-Api-Key`), JSON paths ending in `headers.NAME`.
pub fn field_part(name: &str) -> Option<ClientPart> {
    let is_var =
        |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    let is_token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if let Some(h) = name.strip_prefix("http_").filter(|h| is_var(h)) {
        return Some(ClientPart::Header(h.replace('_', "-")));
    }
    if let Some(c) = name.strip_prefix("cookie_").filter(|c| is_var(c)) {
        return Some(ClientPart::Cookie(c.to_string()));
    }
    if let Some(a) = name.strip_prefix("arg_").filter(|a| is_var(a)) {
        return Some(ClientPart::QueryArg(a.to_string()));
    }
    if let Some(h) = name.strip_prefix("request_")
        && is_token(h)
        && h.bytes().any(|b| b == b'-' || b.is_ascii_uppercase())
    {
        return Some(ClientPart::Header(h.to_string()));
    }
    let segments: Vec<&str> = name.split('.').collect();
    if let [.., parent, last] = segments.as_slice()
        && matches!(parent.to_ascii_lowercase().as_str(), "headers" | "header")
        && is_token(last)
    {
        return Some(ClientPart::Header(last.to_string()));
    }
    is_var(name).then(|| ClientPart::Variable(name.to_string()))
}

impl std::fmt::Display for ClientPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientPart::Address => f.write_str("the client address"),
            ClientPart::ForwardedFor => f.write_str("X-Forwarded-For"),
            ClientPart::User => f.write_str("the Basic-auth user"),
            ClientPart::Header(h) => write!(f, "header {h}"),
            ClientPart::Cookie(c) => write!(f, "cookie {c}"),
            ClientPart::QueryArg(a) => write!(f, "query argument {a}"),
            ClientPart::Variable(v) => write!(f, "nginx variable ${v}"),
        }
    }
}
