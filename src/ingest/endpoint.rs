//! Endpoints: method + normalised path, so that `/api/users/17` and
//! `/api/users/42` count as one endpoint, `GET /api/users/:id`.
//!
//! User rules (`--route 'REGEX=NAME'`, first match wins) are tried on the path
//! (query string removed) before the automatic rules. The automatic rules drop the
//! query string and fragment and replace id-like segments with `:id`: all digits;
//! a UUID; 16 or more hex digits with at least one digit; 20 or more base64url
//! characters with a digit, a lower-case and an upper-case letter.

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
    let target = String::from_utf8_lossy(target);
    let path = strip_origin(&target);
    let path = path.split(['?', '#']).next().unwrap_or_default();
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
    for (i, segment) in path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(if is_id(segment) { ":id" } else { segment });
    }
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
    if b.iter().all(u8::is_ascii_digit) {
        return true;
    }
    if is_uuid(b) {
        return true;
    }
    let has_digit = b.iter().any(u8::is_ascii_digit);
    if b.len() >= 16 && has_digit && b.iter().all(u8::is_ascii_hexdigit) {
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
    fn invalid_request_lines_share_one_endpoint() {
        assert_eq!(ep("", "", &[]), INVALID_REQUEST);
        assert_eq!(ep("\\x16\\x03\\x01", "", &[]), INVALID_REQUEST);
        assert_eq!(ep("get", "/", &[]), INVALID_REQUEST);
    }
}
