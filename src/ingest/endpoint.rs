//! Endpoints: method + normalised path, so that `/api/users/17` and
//! `/api/users/42` count as one endpoint, `GET /api/users/:id`.
//!
//! User rules (`--route 'REGEX=NAME'`, first match wins) are tried on the path
//! (query string removed) before the automatic rules. A rule written
//! `@HOST REGEX=NAME` applies only to requests for that virtual host: the
//! field `--host-field` names (`vhost` of Apache `vhost_combined` unless told
//! otherwise), compared without case and without a `:port`. The automatic rules drop the
//! query string and fragment and replace id-like segments with `:id`: all digits;
//! a UUID; 16 or more hex digits with at least one digit; 20 or more base64url
//! characters with a digit, a lower-case and an upper-case letter.

use std::borrow::Cow;

use regex::Regex;

use super::IngestError;

/// One `--route` rule.
#[derive(Debug, Clone)]
pub struct RouteRule {
    pub pattern: Regex,
    pub name: String,
    /// `@HOST`: only requests for this virtual host.
    pub host: Option<HostMatch>,
}

/// The virtual host a rule is limited to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostMatch {
    /// The host, lower-case, without a port.
    pub host: String,
    /// The index of the host field among the fields the parser captures
    /// (`KeySet::fields`); set by the options layer.
    pub field: usize,
}

impl RouteRule {
    /// Parses `REGEX=NAME` (the last `=` separates them, so the regex may
    /// contain `=`), or `@HOST REGEX=NAME` for one virtual host.
    pub fn parse(text: &str) -> Result<Self, IngestError> {
        let (host, rule) = match text.strip_prefix('@') {
            Some(rest) => {
                let (host, rule) = rest
                    .split_once(char::is_whitespace)
                    .filter(|(h, _)| !h.is_empty())
                    .ok_or_else(|| {
                        IngestError::Usage(format!(
                            "--route `{text}`: expected @HOST REGEX=NAME, e.g. '@api.example.com ^/v1/=api-v1'"
                        ))
                    })?;
                let host = HostMatch {
                    host: super::key::without_port(host).to_ascii_lowercase(),
                    field: 0,
                };
                (Some(host), rule.trim_start())
            }
            None => (None, text),
        };
        let mut parsed = Self::parse_rule(rule, text)?;
        parsed.host = host;
        Ok(parsed)
    }

    /// Whether the rule applies to a request for virtual host `host` with this path.
    pub fn matches(&self, host: &str, path: &str) -> bool {
        self.host
            .as_ref()
            .is_none_or(|h| super::key::without_port(host.trim()).eq_ignore_ascii_case(&h.host))
            && self.pattern.is_match(path)
    }

    /// Parses `REGEX=NAME` (`text`: the whole flag, for messages).
    fn parse_rule(rule: &str, text: &str) -> Result<Self, IngestError> {
        let (pattern, name) = rule
            .rsplit_once('=')
            .filter(|(p, n)| !p.is_empty() && !n.trim().is_empty())
            .ok_or_else(|| {
                IngestError::Usage(format!(
                    "--route `{text}`: expected REGEX=NAME, e.g. '^/api/search=search'"
                ))
            })?;
        let pattern = Regex::new(pattern).map_err(|e| {
            IngestError::Usage(format!(
                "--route `{text}`: bad regex: {}",
                crate::text::regex_error(&e)
            ))
        })?;
        Ok(RouteRule {
            pattern,
            name: name.trim().to_string(),
            host: None,
        })
    }
}

/// Name given to requests without a usable request line (`"-"`, `""`, TLS noise).
pub const INVALID_REQUEST: &str = "(invalid request)";

/// Writes the endpoint of `method` + `target` into `out` (`method: None`:
/// the line logs no method, and the path alone names the endpoint).
pub fn endpoint(method: Option<&[u8]>, target: &[u8], routes: &[RouteRule], out: &mut String) {
    endpoint_of_text(method, "", &lossy(target), routes, out);
}

/// [`endpoint`] of a target already turned into text (invalid UTF-8
/// replaced), for virtual `host` (read by rules limited to a host).
pub fn endpoint_of_text(
    method: Option<&[u8]>,
    host: &str,
    target: &str,
    routes: &[RouteRule],
    out: &mut String,
) {
    out.clear();
    // A letter at least: `-` is how Envoy, Istio and ALB log a missing method.
    let valid_method = method.is_none_or(|method| {
        method.len() <= 20
            && method.iter().any(u8::is_ascii_uppercase)
            && method
                .iter()
                .all(|b| b.is_ascii_uppercase() || *b == b'-' || *b == b'_')
    });
    // A method with no path after it (`"GET"`, `"GET ?q=1 HTTP/1.1"`) is a
    // request line servers answer 400 before any limit runs, as they do a bad
    // method (`ngx_http_parse_request_line`, nginx's src/http/ngx_http_parse.c:
    // a CR where a method character or a space is due, a `?` where the path
    // is): no endpoint of its own.
    let no_path = target.is_empty() || target.starts_with(['?', '#']);
    let target = strip_origin(target);
    // Without a method, only a path names anything.
    if !valid_method || no_path || (method.is_none() && !target.starts_with('/')) {
        out.push_str(INVALID_REQUEST);
        return;
    }
    if !routes.is_empty() {
        let path = without_query(target);
        if let Some(rule) = routes.iter().find(|r| r.matches(host, path)) {
            out.push_str(&rule.name);
            return;
        }
    }
    if let Some(method) = method {
        // The method is ASCII (checked above).
        out.extend(method.iter().map(|&b| char::from(b)));
        out.push(' ');
    }
    push_path_with_ids(target, out);
}

/// Whether `target` is proxy-style absolute (`http://host/path`), whose
/// path starts after its origin.
fn is_absolute(target: &[u8]) -> bool {
    origin_length(target).is_some()
}

/// The length of an absolute-form target's `scheme://`, `None` for any
/// other target.
fn origin_length(target: &[u8]) -> Option<usize> {
    let colon = scheme_end(target)?;
    target[colon..].starts_with(b"://").then_some(colon + 3)
}

/// Where the `:` after the scheme `target` starts with is (a letter, then
/// letters, digits, `+`, `-` or `.`, in any case, as nginx's request-line
/// parser and Go's `getScheme` read a scheme), `None` without one.
pub fn scheme_end(target: &[u8]) -> Option<usize> {
    // An origin-form target (`/path`, nearly every one) is told at once.
    if !target.first().is_some_and(u8::is_ascii_alphabetic) {
        return None;
    }
    let scheme_chars = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.');
    let colon = target.iter().position(|b| !scheme_chars(b))?;
    (target[colon] == b':').then_some(colon)
}

/// Appends the path of `target` (up to its query or fragment; `/` when
/// that is empty) with every id-like segment written `:id`. One pass over
/// the bytes, gathering each segment's [`segment::shape`] as it goes, which
/// decides whether the segment is an id. Text between id segments is copied
/// in runs.
fn push_path_with_ids(target: &str, out: &mut String) {
    let bytes = target.as_bytes();
    let (mut start, mut copied) = (0, 0);
    let mut shape = 0;
    // Ends the segment `start..end`, writing what precedes it when it is an id.
    let mut end_segment = |start: usize, end: usize, shape: u16, out: &mut String| {
        if segment::is_id_shaped(&bytes[start..end], shape) {
            out.push_str(&target[copied..start]);
            out.push_str(":id");
            copied = end;
        }
    };
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        let class = segment::class(b);
        if class & (segment::SLASH | segment::END) == 0 {
            shape |= class;
        } else if class == segment::SLASH {
            end_segment(start, i, shape, out);
            start = i + 1;
            shape = 0;
        } else {
            end = i;
            break;
        }
    }
    end_segment(start, end, shape, out);
    if end == 0 {
        out.push('/');
    } else {
        out.push_str(&target[copied..end]);
    }
}

/// `String::from_utf8_lossy`, checking the common valid case first (faster).
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// `path?query#fragment` → `path`.
pub fn without_query(target: &str) -> &str {
    path_end::path_end(target.as_bytes()).map_or(target, |i| &target[..i])
}

/// The path a replay keeps of `target` (an absolute-form target's path):
/// [`without_query`], unless what follows the path holds a byte nginx or
/// HAProxy refuses anywhere in a target (a space, a control byte, DEL, a
/// byte from 0x80 up, or a `#`, which HAProxy refuses), or the path is `*`
/// (which Go takes alone only); the path is then
/// kept with all that follows, so that a replay sees what the product would
/// answer 400 (`crate::simulate::gateway::NameReading::path` reads the two
/// parts apart). A path itself never holds a `?` or `#`.
pub fn replayed_path(target: &str) -> &str {
    let target = strip_origin(target);
    match path_end::path_end(target.as_bytes()) {
        Some(end) if refused_after_path(target.as_bytes().split_at(end)) => target,
        Some(end) => &target[..end],
        None => target,
    }
}

/// Whether a product may refuse `rest` (a target's query and fragment,
/// from their `?` or `#`) after `path`: see [`replayed_path`].
pub fn refused_after_path((path, rest): (&[u8], &[u8])) -> bool {
    (path == b"*" && !rest.is_empty()) || rest.iter().any(|&b| b <= b' ' || b >= 0x7f || b == b'#')
}

/// `path` and what follows it (empty, or from its `?` or `#`), of a path as
/// [`replayed_path`] keeps it.
pub fn split_replayed_path(path: &str) -> (&str, &str) {
    path.split_at(path_end::path_end(path.as_bytes()).unwrap_or(path.len()))
}

/// The part of a request target that decides its endpoint and path: the target
/// up to its query or fragment, or all of it for a proxy-style absolute target
/// (whose `?` may come before the path). Lets callers cache endpoints by it.
pub fn target_key(target: &[u8]) -> &[u8] {
    if is_absolute(target) {
        return target;
    }
    path_end::path_end(target).map_or(target, |i| &target[..i])
}

/// `http://host:port/path` (proxy-style absolute targets, any scheme) →
/// `/path`; `/` when the authority ends without a path (`http://h?q=/x`).
pub fn strip_origin(target: &str) -> &str {
    let Some(origin) = origin_length(target.as_bytes()) else {
        return target;
    };
    let rest = &target[origin..];
    match rest.find(['/', '?', '#']) {
        Some(i) if rest.as_bytes()[i] == b'/' => &rest[i..],
        _ => "/",
    }
}

/// The target before its last `/` when the segment after it is an id
/// ([`is_id`]), so that the target's endpoint is the prefix's with `/:id`
/// added; `None` for a proxy-style absolute target (whose path starts after
/// its origin) and a target without `/`. Read from the end, one table lookup
/// and one test per byte: a byte that no id holds stops the search at once.
pub fn id_tail_prefix(target: &[u8]) -> Option<&[u8]> {
    if is_absolute(target) {
        return None;
    }
    // The classes of the bytes after the last stop, and of the stop.
    let mut shape = 0;
    let slash = target.iter().rposition(|&b| {
        shape |= segment::class(b);
        shape & (segment::SLASH | segment::END | segment::OTHER) != 0
    })?;
    if target[slash] != b'/' {
        return None;
    }
    shape &= !segment::SLASH;
    let (prefix, tail) = (&target[..slash], &target[slash + 1..]);
    segment::is_id_shaped(tail, shape).then_some(prefix)
}

/// Whether a path segment looks like an identifier rather than a route name.
pub fn is_id(segment: &str) -> bool {
    is_id_bytes(segment.as_bytes())
}

/// [`is_id`] of a segment's bytes.
pub fn is_id_bytes(b: &[u8]) -> bool {
    segment::is_id_shaped(b, segment::shape(b))
}

mod path_end;
mod segment;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;
