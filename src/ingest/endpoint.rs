//! Endpoints: method + normalised path, so that `/api/users/17` and
//! `/api/users/42` count as one endpoint, `GET /api/users/:id`.
//!
//! User rules (`--route 'REGEX=NAME'`, first match wins) are tried on the path
//! (query string removed) before the automatic rules. The automatic rules drop the
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
}

impl RouteRule {
    /// Parses `REGEX=NAME` (the last `=` separates them, so the regex may contain `=`).
    pub fn parse(text: &str) -> Result<Self, IngestError> {
        let (pattern, name) = text
            .rsplit_once('=')
            .filter(|(p, n)| !p.is_empty() && !n.trim().is_empty())
            .ok_or_else(|| {
                IngestError::Usage(format!(
                    "--route `{text}`: expected REGEX=NAME, e.g. '^/api/search=search'"
                ))
            })?;
        let pattern = Regex::new(pattern)
            .map_err(|e| IngestError::Usage(format!("--route `{text}`: bad regex: {e}")))?;
        Ok(RouteRule {
            pattern,
            name: name.trim().to_string(),
        })
    }
}

/// Name given to requests without a usable request line (`"-"`, `""`, TLS noise).
pub const INVALID_REQUEST: &str = "(invalid request)";

/// Writes the endpoint of `method` + `target` into `out`.
pub fn endpoint(method: &[u8], target: &[u8], routes: &[RouteRule], out: &mut String) {
    endpoint_of_text(method, &lossy(target), routes, out);
}

/// [`endpoint`] of a target already turned into text (invalid UTF-8 replaced).
pub fn endpoint_of_text(method: &[u8], target: &str, routes: &[RouteRule], out: &mut String) {
    out.clear();
    let valid_method = !method.is_empty()
        && method.len() <= 20
        && method
            .iter()
            .all(|b| b.is_ascii_uppercase() || *b == b'-' || *b == b'_');
    if !valid_method {
        out.push_str(INVALID_REQUEST);
        return;
    }
    let path = without_query(strip_origin(target));
    if let Some(rule) = routes.iter().find(|r| r.pattern.is_match(path)) {
        out.push_str(&rule.name);
        return;
    }
    out.push_str(std::str::from_utf8(method).unwrap_or("?"));
    out.push(' ');
    if path.is_empty() {
        out.push('/');
        return;
    }
    let bytes = path.as_bytes();
    let mut start = 0;
    loop {
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'/')
            .map_or(bytes.len(), |i| start + i);
        let segment = &path[start..end];
        out.push_str(if is_id(segment) { ":id" } else { segment });
        if end == bytes.len() {
            return;
        }
        out.push('/');
        start = end + 1;
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
    memchr::memchr2(b'?', b'#', target.as_bytes()).map_or(target, |i| &target[..i])
}

/// The part of a request target that decides its endpoint and path: the target
/// up to its query or fragment, or all of it for a proxy-style absolute target
/// (whose `?` may come before the path). Lets callers cache endpoints by it.
pub fn target_key(target: &[u8]) -> &[u8] {
    if target.starts_with(b"http://") || target.starts_with(b"https://") {
        return target;
    }
    memchr::memchr2(b'?', b'#', target).map_or(target, |i| &target[..i])
}

/// `http://host:port/path` (proxy-style absolute targets) → `/path`.
fn strip_origin(target: &str) -> &str {
    for scheme in ["http://", "https://"] {
        if let Some(rest) = target.strip_prefix(scheme) {
            return rest.find('/').map_or("/", |i| &rest[i..]);
        }
    }
    target
}

/// Whether a path segment looks like an identifier rather than a route name.
pub fn is_id(segment: &str) -> bool {
    let b = segment.as_bytes();
    if b.is_empty() {
        return false;
    }
    if b.len() < 16 {
        return b.iter().all(u8::is_ascii_digit); // the other shapes are longer
    }
    if b.iter().all(u8::is_ascii_digit) || is_uuid(b) {
        return true;
    }
    let has_digit = b.iter().any(u8::is_ascii_digit);
    if has_digit && b.iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    b.len() >= 20
        && has_digit
        && b.iter().any(u8::is_ascii_lowercase)
        && b.iter().any(u8::is_ascii_uppercase)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'=' | b'~'))
}

fn is_uuid(b: &[u8]) -> bool {
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ep(method: &str, target: &str, routes: &[&str]) -> String {
        let routes: Vec<RouteRule> = routes
            .iter()
            .map(|r| RouteRule::parse(r).unwrap())
            .collect();
        let mut out = String::new();
        endpoint(method.as_bytes(), target.as_bytes(), &routes, &mut out);
        out
    }

    #[test]
    fn ids_become_placeholders() {
        assert_eq!(ep("GET", "/api/users/42?x=1", &[]), "GET /api/users/:id");
        assert_eq!(
            ep(
                "GET",
                "/api/orders/3f2b8c1e-9d4a-4b6e-8f00-1234567890ab",
                &[]
            ),
            "GET /api/orders/:id"
        );
        assert_eq!(
            ep("GET", "/blob/deadbeefcafe0123456789", &[]),
            "GET /blob/:id"
        );
        assert_eq!(ep("GET", "/t/AbCdEfGhIjKlMnOp12345_-x", &[]), "GET /t/:id");
        assert_eq!(
            ep("GET", "/api/v1/presentations/logstash-monitorama-2013", &[]),
            "GET /api/v1/presentations/logstash-monitorama-2013"
        );
        assert_eq!(
            ep("DELETE", "http://example.com:8080/a/7#frag", &[]),
            "DELETE /a/:id"
        );
        assert_eq!(ep("GET", "", &[]), "GET /");
    }

    /// The definition of an id segment, test by test, as the README states it.
    fn is_id_by_definition(segment: &str) -> bool {
        let b = segment.as_bytes();
        let has_digit = b.iter().any(u8::is_ascii_digit);
        !b.is_empty()
            && (b.iter().all(u8::is_ascii_digit)
                || is_uuid(b)
                || (b.len() >= 16 && has_digit && b.iter().all(u8::is_ascii_hexdigit))
                || (b.len() >= 20
                    && has_digit
                    && b.iter().any(u8::is_ascii_lowercase)
                    && b.iter().any(u8::is_ascii_uppercase)
                    && b.iter().all(|c| {
                        c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'=' | b'~')
                    })))
    }

    proptest::proptest! {
        #[test]
        fn is_id_follows_the_definition(segment in "[0-9a-fA-FgzZ_~=.-]{0,40}") {
            proptest::prop_assert_eq!(is_id(&segment), is_id_by_definition(&segment));
        }

        #[test]
        fn segments_split_as_str_split_does(path in "[/a1]{0,12}") {
            let expected: Vec<&str> = path
                .split('/')
                .map(|s| if is_id(s) { ":id" } else { s })
                .collect();
            let expected = if path.is_empty() { "GET /".to_string() } else { format!("GET {}", expected.join("/")) };
            proptest::prop_assert_eq!(ep("GET", &path, &[]), expected);
        }
    }

    #[test]
    fn routes_apply_first_and_first_match_wins() {
        let routes = ["^/api/search=search", "^/api/=api", "x=y=z"];
        assert_eq!(ep("GET", "/api/search?q=1", &routes), "search");
        assert_eq!(ep("POST", "/api/orders/1", &routes), "api");
        assert_eq!(ep("GET", "/x=y", &routes), "z");
        assert!(RouteRule::parse("noequals").is_err());
        assert!(RouteRule::parse("(=name").is_err());
    }

    #[test]
    fn the_target_key_decides_endpoint_and_path() {
        for target in [
            "/a/1?x=2",
            "/a#f?g",
            "http://h?x/a/7?y",
            "https://h/b/2#z",
            "/\u{e9}/3?q",
            "?only",
            "",
        ] {
            let key = target_key(target.as_bytes());
            assert_eq!(
                ep("GET", target, &[]),
                ep("GET", std::str::from_utf8(key).unwrap(), &[])
            );
        }
        assert_eq!(target_key(b"/a/1?x=2"), b"/a/1");
        assert_eq!(target_key(b"http://h?x/a"), b"http://h?x/a");
    }

    #[test]
    fn invalid_request_lines_share_one_endpoint() {
        assert_eq!(ep("", "", &[]), INVALID_REQUEST);
        assert_eq!(ep("\\x16\\x03\\x01", "", &[]), INVALID_REQUEST);
        assert_eq!(ep("get", "/", &[]), INVALID_REQUEST);
    }
}
