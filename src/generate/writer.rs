//! Turning events into log lines: nginx `log_format` templates (the combined
//! format is one of them) and JSON lines, behind the [`LineFormat`] trait.
//!
//! Built for speed: lines are appended to a caller's byte buffer, integers are
//! formatted by hand, and each second's date strings are formatted once.
//! Template values are escaped as nginx's default `escape=default` does
//! (`"`, `\` and non-printable bytes become `\xHH`; an empty value is `-`).

use super::GenerateError;
use super::clock::{SecondStamps, TimeOffset};
use super::profiles::Profile;
use super::routes::push_u64;
use super::traffic::Event;
use crate::units::MS_PER_SEC;

/// nginx's predefined `combined` format.
pub const COMBINED: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent""#;

/// Protocol of every generated request.
const PROTOCOL: &str = "HTTP/1.1";
/// `$host` of every generated request.
const HOST: &str = "shop.example.com";

/// Renders one event as one line (with its newline).
pub trait LineFormat {
    /// Appends the line for `event`, sent by `profile`, to `out`.
    fn write_line(&mut self, event: &Event, profile: &Profile, out: &mut Vec<u8>);

    /// Whether lines show local time (at the `--time-offset`), not only UTC.
    fn shows_local_time(&self) -> bool {
        false
    }
}

/// A `log_format` variable the generator can fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variable {
    RemoteAddr,
    RemoteUser,
    TimeLocal,
    TimeIso8601,
    Msec,
    Request,
    RequestMethod,
    RequestUri,
    Uri,
    Args,
    ServerProtocol,
    Host,
    Status,
    BodyBytesSent,
    HttpReferer,
    HttpUserAgent,
    HttpXForwardedFor,
    RequestTime,
}

/// Every supported variable by its nginx name.
pub const VARIABLES: [(&str, Variable); 19] = [
    ("remote_addr", Variable::RemoteAddr),
    ("remote_user", Variable::RemoteUser),
    ("time_local", Variable::TimeLocal),
    ("time_iso8601", Variable::TimeIso8601),
    ("msec", Variable::Msec),
    ("request", Variable::Request),
    ("request_method", Variable::RequestMethod),
    ("request_uri", Variable::RequestUri),
    ("uri", Variable::Uri),
    ("args", Variable::Args),
    ("query_string", Variable::Args),
    ("server_protocol", Variable::ServerProtocol),
    ("host", Variable::Host),
    ("status", Variable::Status),
    ("body_bytes_sent", Variable::BodyBytesSent),
    ("http_referer", Variable::HttpReferer),
    ("http_user_agent", Variable::HttpUserAgent),
    ("http_x_forwarded_for", Variable::HttpXForwardedFor),
    ("request_time", Variable::RequestTime),
];

/// A piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(Vec<u8>),
    Var(Variable),
}

/// A parsed nginx `log_format` string.
#[derive(Debug, Clone)]
pub struct TemplateFormat {
    parts: Vec<Part>,
    stamps: SecondStamps,
    uri: Vec<u8>,
}

impl TemplateFormat {
    /// Parses `$name` and `${name}` variables; anything else is literal text.
    pub fn parse(template: &str, offset: TimeOffset) -> Result<Self, GenerateError> {
        let mut parts = Vec::new();
        let mut literal = Vec::new();
        let mut rest = template;
        while let Some(dollar) = rest.find('$') {
            literal.extend_from_slice(&rest.as_bytes()[..dollar]);
            let after = &rest[dollar + 1..];
            let (name, consumed) = if let Some(braced) = after.strip_prefix('{') {
                let close = braced
                    .find('}')
                    .ok_or_else(|| GenerateError::Variable(format!("${{{braced}")))?;
                (&braced[..close], close + 2)
            } else {
                let len = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..len], len)
            };
            let var = VARIABLES
                .iter()
                .find(|(known, _)| *known == name)
                .map(|&(_, v)| v)
                .ok_or_else(|| GenerateError::Variable(format!("${name}")))?;
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(Part::Var(var));
            rest = &after[consumed..];
        }
        literal.extend_from_slice(rest.as_bytes());
        literal.push(b'\n');
        parts.push(Part::Literal(literal));
        Ok(TemplateFormat {
            parts,
            stamps: SecondStamps::new(offset),
            uri: Vec::with_capacity(128),
        })
    }
}

impl LineFormat for TemplateFormat {
    fn shows_local_time(&self) -> bool {
        (self.parts.iter())
            .any(|p| matches!(p, Part::Var(Variable::TimeLocal | Variable::TimeIso8601)))
    }

    fn write_line(&mut self, event: &Event, profile: &Profile, out: &mut Vec<u8>) {
        self.stamps.update(event.ts);
        self.uri.clear();
        let path_len = event.route.write_uri(&mut self.uri);
        let method = event.route.method().as_str();
        for part in &self.parts {
            let var = match part {
                Part::Literal(bytes) => {
                    out.extend_from_slice(bytes);
                    continue;
                }
                Part::Var(var) => *var,
            };
            match var {
                Variable::RemoteAddr => push_nginx(out, profile.addr.as_bytes()),
                Variable::RemoteUser => push_nginx(out, opt(profile.user.as_deref())),
                Variable::TimeLocal => out.extend_from_slice(&self.stamps.local),
                Variable::TimeIso8601 => out.extend_from_slice(&self.stamps.iso8601),
                Variable::Msec => push_msec(out, event.ts),
                Variable::Request => {
                    out.extend_from_slice(method.as_bytes());
                    out.push(b' ');
                    push_nginx(out, &self.uri);
                    out.push(b' ');
                    out.extend_from_slice(PROTOCOL.as_bytes());
                }
                Variable::RequestMethod => out.extend_from_slice(method.as_bytes()),
                Variable::RequestUri => push_nginx(out, &self.uri),
                Variable::Uri => push_nginx(out, &self.uri[..path_len]),
                Variable::Args => push_nginx(out, self.uri.get(path_len + 1..).unwrap_or(b"")),
                Variable::ServerProtocol => out.extend_from_slice(PROTOCOL.as_bytes()),
                Variable::Host => out.extend_from_slice(HOST.as_bytes()),
                Variable::Status => push_u64(out, u64::from(event.status)),
                Variable::BodyBytesSent => push_u64(out, u64::from(event.body_bytes)),
                Variable::HttpReferer => push_nginx(out, opt(event.referer)),
                Variable::HttpUserAgent => push_nginx(out, profile.user_agent.as_bytes()),
                Variable::HttpXForwardedFor => {
                    push_nginx(out, opt(profile.forwarded_for.as_deref()))
                }
                Variable::RequestTime => push_seconds(out, i64::from(event.request_time_ms)),
            }
        }
    }
}

/// One JSON object per line: time (RFC 3339 UTC with milliseconds),
/// remote_addr, remote_user, request_method, request_uri, status,
/// body_bytes_sent, http_referer, http_user_agent, http_x_forwarded_for,
/// request_time (seconds). Absent strings are `"-"`, as nginx logs them.
#[derive(Debug, Clone)]
pub struct JsonFormat {
    stamps: SecondStamps,
    uri: Vec<u8>,
}

impl JsonFormat {
    /// A JSON-lines writer (times are always UTC).
    pub fn new() -> Self {
        JsonFormat {
            stamps: SecondStamps::new(TimeOffset::default()),
            uri: Vec::with_capacity(128),
        }
    }
}

impl Default for JsonFormat {
    fn default() -> Self {
        Self::new()
    }
}

impl LineFormat for JsonFormat {
    fn write_line(&mut self, event: &Event, profile: &Profile, out: &mut Vec<u8>) {
        self.stamps.update(event.ts);
        self.uri.clear();
        event.route.write_uri(&mut self.uri);
        out.extend_from_slice(b"{\"time\":\"");
        out.extend_from_slice(&self.stamps.utc);
        out.push(b'.');
        push_three(out, event.ts.rem_euclid(MS_PER_SEC));
        out.extend_from_slice(b"Z\",\"remote_addr\":");
        push_json(out, &profile.addr);
        out.extend_from_slice(b",\"remote_user\":");
        push_json(out, profile.user.as_deref().unwrap_or("-"));
        out.extend_from_slice(b",\"request_method\":\"");
        out.extend_from_slice(event.route.method().as_str().as_bytes());
        out.extend_from_slice(b"\",\"request_uri\":");
        push_json(out, std::str::from_utf8(&self.uri).unwrap_or("-"));
        out.extend_from_slice(b",\"status\":");
        push_u64(out, u64::from(event.status));
        out.extend_from_slice(b",\"body_bytes_sent\":");
        push_u64(out, u64::from(event.body_bytes));
        out.extend_from_slice(b",\"http_referer\":");
        push_json(out, event.referer.unwrap_or("-"));
        out.extend_from_slice(b",\"http_user_agent\":");
        push_json(out, profile.user_agent);
        out.extend_from_slice(b",\"http_x_forwarded_for\":");
        push_json(out, profile.forwarded_for.as_deref().unwrap_or("-"));
        out.extend_from_slice(b",\"request_time\":");
        push_seconds(out, i64::from(event.request_time_ms));
        out.extend_from_slice(b"}\n");
    }
}

fn opt(value: Option<&str>) -> &[u8] {
    value.map_or(b"", str::as_bytes)
}

/// Appends `value` escaped as nginx's `escape=default`; empty becomes `-`.
pub fn push_nginx(out: &mut Vec<u8>, value: &[u8]) {
    if value.is_empty() {
        out.push(b'-');
        return;
    }
    let plain = |b: u8| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
    if value.iter().all(|&b| plain(b)) {
        out.extend_from_slice(value);
        return;
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    for &b in value {
        if plain(b) {
            out.push(b);
        } else {
            out.extend_from_slice(&[
                b'\\',
                b'x',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        }
    }
}

/// Appends `value` as a JSON string literal.
pub fn push_json(out: &mut Vec<u8>, value: &str) {
    out.push(b'"');
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for &b in value.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..0x20 => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// Appends `ms` milliseconds as seconds with three decimals (`0.012`).
fn push_seconds(out: &mut Vec<u8>, ms: i64) {
    push_u64(out, (ms / MS_PER_SEC) as u64);
    out.push(b'.');
    push_three(out, ms % MS_PER_SEC);
}

/// Appends epoch milliseconds as `$msec` does (`1767571200.123`).
fn push_msec(out: &mut Vec<u8>, ts: i64) {
    push_u64(out, ts.div_euclid(MS_PER_SEC) as u64);
    out.push(b'.');
    push_three(out, ts.rem_euclid(MS_PER_SEC));
}

fn push_three(out: &mut Vec<u8>, n: i64) {
    let n = n as u32;
    out.extend_from_slice(&[
        b'0' + (n / 100 % 10) as u8,
        b'0' + (n / 10 % 10) as u8,
        b'0' + (n % 10) as u8,
    ]);
}
