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
        let pattern = Regex::new(pattern)
            .map_err(|e| IngestError::Usage(format!("--route `{text}`: bad regex: {e}")))?;
        Ok(RouteRule {
            pattern,
            name: name.trim().to_string(),
            host: None,
        })
    }
}

/// Name given to requests without a usable request line (`"-"`, `""`, TLS noise).
pub const INVALID_REQUEST: &str = "(invalid request)";

/// Writes the endpoint of `method` + `target` into `out`.
pub fn endpoint(method: &[u8], target: &[u8], routes: &[RouteRule], out: &mut String) {
    endpoint_of_text(method, "", &lossy(target), routes, out);
}

/// [`endpoint`] of a target already turned into text (invalid UTF-8
/// replaced), for virtual `host` (read by rules limited to a host).
pub fn endpoint_of_text(
    method: &[u8],
    host: &str,
    target: &str,
    routes: &[RouteRule],
    out: &mut String,
) {
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
    let target = strip_origin(target);
    if !routes.is_empty() {
        let path = without_query(target);
        if let Some(rule) = routes.iter().find(|r| r.matches(host, path)) {
            out.push_str(&rule.name);
            return;
        }
    }
    // The method is ASCII (checked above).
    out.extend(method.iter().map(|&b| char::from(b)));
    out.push(' ');
    push_path_with_ids(target, out);
}

/// How [`push_path_with_ids`] reads a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ByteClass {
    Digit,
    Other,
    Slash,
    /// `?` or `#`: the path ends.
    End,
}

const BYTE_CLASSES: [ByteClass; 256] = {
    let mut classes = [ByteClass::Other; 256];
    let mut b = b'0';
    while b <= b'9' {
        classes[b as usize] = ByteClass::Digit;
        b += 1;
    }
    classes[b'/' as usize] = ByteClass::Slash;
    classes[b'?' as usize] = ByteClass::End;
    classes[b'#' as usize] = ByteClass::End;
    classes
};

/// Appends the path of `target` (up to its query or fragment; `/` when
/// that is empty) with every id-like segment written `:id`. One pass over
/// the bytes: a segment shorter than 16 bytes is an id when all digits,
/// which the pass tracks as it goes; only longer segments are tested whole.
/// Text between id segments is copied in runs.
fn push_path_with_ids(target: &str, out: &mut String) {
    let bytes = target.as_bytes();
    let (mut start, mut copied) = (0, 0);
    let mut digits_only = true;
    // Ends the segment `start..end`, writing what precedes it when it is an id.
    let mut end_segment = |start: usize, end: usize, digits_only: bool, out: &mut String| {
        let id = match end - start {
            0 => false,
            1..16 => digits_only,
            _ => is_id_bytes(&bytes[start..end]),
        };
        if id {
            out.push_str(&target[copied..start]);
            out.push_str(":id");
            copied = end;
        }
    };
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        match BYTE_CLASSES[usize::from(b)] {
            ByteClass::Digit => {}
            ByteClass::Other => digits_only = false,
            ByteClass::Slash => {
                end_segment(start, i, digits_only, out);
                start = i + 1;
                digits_only = true;
            }
            ByteClass::End => {
                end = i;
                break;
            }
        }
    }
    end_segment(start, end, digits_only, out);
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

/// How [`id_tail_prefix`] reads a byte, from the end of a target.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TailByte {
    Digit,
    /// Any other byte an id may hold (base64url, `=` and `~`).
    IdChar,
    Slash,
    /// A byte no id holds: the last segment is not one.
    Other,
}

const TAIL_BYTES: [TailByte; 256] = {
    let mut classes = [TailByte::Other; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_digit() {
            classes[b] = TailByte::Digit;
        } else if c.is_ascii_alphabetic() || matches!(c, b'-' | b'_' | b'=' | b'~') {
            classes[b] = TailByte::IdChar;
        }
        b += 1;
    }
    classes[b'/' as usize] = TailByte::Slash;
    classes
};

/// The target before its last `/` when the segment after it is an id
/// ([`is_id`]), so that the target's endpoint is the prefix's with `/:id`
/// added; `None` for a proxy-style absolute target (whose path starts after
/// its origin) and a target without `/`. Read from the end: a byte that no
/// id holds stops the search at once.
pub fn id_tail_prefix(target: &[u8]) -> Option<&[u8]> {
    if target.starts_with(b"http://") || target.starts_with(b"https://") {
        return None;
    }
    let mut digits_only = true;
    let mut i = target.len();
    let slash = loop {
        let b = *target.get(i.checked_sub(1)?)?;
        i -= 1;
        match TAIL_BYTES[usize::from(b)] {
            TailByte::Digit => {}
            TailByte::IdChar => digits_only = false,
            TailByte::Slash => break i,
            TailByte::Other => return None,
        }
    };
    let tail = &target[slash + 1..];
    let id = match tail.len() {
        0 => false,
        1..16 => digits_only,
        _ => is_id_bytes(tail),
    };
    id.then(|| &target[..slash])
}

/// Whether a path segment looks like an identifier rather than a route name.
pub fn is_id(segment: &str) -> bool {
    is_id_bytes(segment.as_bytes())
}

/// [`is_id`] of a segment's bytes.
pub fn is_id_bytes(b: &[u8]) -> bool {
    if b.is_empty() {
        return false;
    }
    if b.len() < 16 {
        return b.iter().all(u8::is_ascii_digit); // the other shapes are longer
    }
    if (b.len() == 36 && is_uuid(b)) || b.iter().all(u8::is_ascii_digit) {
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
        && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-')
        && [&b[..8], &b[9..13], &b[14..18], &b[19..23], &b[24..]]
            .iter()
            .all(|group| group.iter().all(u8::is_ascii_hexdigit))
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
                || (b.len() == 36
                    && b.iter().enumerate().all(|(i, c)| match i {
                        8 | 13 | 18 | 23 => *c == b'-',
                        _ => c.is_ascii_hexdigit(),
                    }))
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
        fn is_id_follows_the_definition(
            segment in "[0-9a-fA-FgzZ_~=.-]{0,40}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-fg]{4}-[0-9a-f-]{4}-[0-9A-F]{11,13}"
        ) {
            proptest::prop_assert_eq!(is_id(&segment), is_id_by_definition(&segment));
        }

        #[test]
        fn segments_split_as_str_split_does(
            path in "[/a1é]{0,12}|((/[0-9a-f]{14,17})|(/[a1]{0,2})){1,4}/?"
        ) {
            let expected: Vec<&str> = path
                .split('/')
                .map(|s| if is_id(s) { ":id" } else { s })
                .collect();
            let expected = if path.is_empty() { "GET /".to_string() } else { format!("GET {}", expected.join("/")) };
            proptest::prop_assert_eq!(ep("GET", &path, &[]), expected);
        }
    }

    /// The endpoint as it was written before the one-pass normaliser: the
    /// path cut at its query, split on `/`, every id segment replaced.
    fn endpoint_by_splitting(method: &str, target: &str) -> String {
        let path = without_query(strip_origin(target));
        if path.is_empty() {
            return format!("{method} /");
        }
        let segments: Vec<&str> = path
            .split('/')
            .map(|s| if is_id(s) { ":id" } else { s })
            .collect();
        format!("{method} {}", segments.join("/"))
    }

    proptest::proptest! {
        #[test]
        fn the_one_pass_normaliser_equals_splitting_the_path(
            origin in "(https?://[a-z?:0-9]{0,4})?",
            parts in proptest::collection::vec(
                "/[0-9]{0,17}|/[0-9a-fA-F]{14,18}|/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|/[A-Za-z0-9_~=-]{18,22}|/[a1\u{e9}.-]{0,3}|[?#][a/1]{0,3}",
                0..6,
            ),
        ) {
            let target = format!("{origin}{}", parts.concat());
            proptest::prop_assert_eq!(ep("GET", &target, &[]), endpoint_by_splitting("GET", &target));
        }
    }

    proptest::proptest! {
        #[test]
        fn the_id_tail_prefix_is_the_target_before_an_id_last_segment(
            origin in "(https?://[a-z]{0,3})?",
            parts in proptest::collection::vec(
                "/[0-9]{0,17}|/[0-9a-fA-F]{14,18}|/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|/[A-Za-z0-9_~=-]{18,22}|/[a1\u{e9}.-]{0,3}|[a1]",
                0..5,
            ),
        ) {
            let target = format!("{origin}{}", parts.concat());
            let by_split = if origin.is_empty() {
                target
                    .rsplit_once('/')
                    .filter(|(_, tail)| is_id(tail))
                    .map(|(prefix, _)| prefix.as_bytes())
            } else {
                None
            };
            proptest::prop_assert_eq!(id_tail_prefix(target.as_bytes()), by_split);
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
    fn a_rule_for_one_host_names_only_its_requests() {
        let rules: Vec<RouteRule> = ["@API.example.com ^/v1/=api-v1", "^/v1/orders=orders"]
            .iter()
            .map(|r| RouteRule::parse(r).unwrap())
            .collect();
        let ep = |host: &str, target: &str| {
            let mut out = String::new();
            endpoint_of_text(b"GET", host, target, &rules, &mut out);
            out
        };
        assert_eq!(rules[0].host.as_ref().unwrap().host, "api.example.com");
        assert_eq!(ep("api.example.com", "/v1/orders"), "api-v1");
        assert_eq!(ep("Api.Example.COM:8443", "/v1/x?y"), "api-v1");
        assert_eq!(ep("www.example.com", "/v1/orders"), "orders");
        assert_eq!(ep("", "/v1/x"), "GET /v1/x");
        assert_eq!(ep("api.example.com.evil", "/v1/x"), "GET /v1/x");
        assert!(RouteRule::parse("@ ^/a=a").is_err());
        assert!(RouteRule::parse("@host").is_err());
        assert!(RouteRule::parse("@host ^/a").is_err());
        let spaced = RouteRule::parse("@h:80   ^/a=b").unwrap();
        assert_eq!(
            (spaced.host.unwrap().host.as_str(), spaced.pattern.as_str()),
            ("h", "^/a")
        );
    }

    proptest::proptest! {
        /// `@HOST REGEX=NAME` is `REGEX=NAME` limited to HOST: the same
        /// pattern and name, and it applies to that host (any case, any port) only.
        #[test]
        fn host_rules_are_plain_rules_limited_to_a_host(
            host in "[a-zA-Z0-9.-]{1,12}",
            port in proptest::option::of(1u16..),
            other in "[a-z0-9.-]{0,12}",
            path in "/[a-z0-9/]{0,8}",
        ) {
            let plain = RouteRule::parse("^/=n").unwrap();
            let text = match port {
                Some(p) => format!("@{host}:{p} ^/=n"),
                None => format!("@{host} ^/=n"),
            };
            let rule = RouteRule::parse(&text).unwrap();
            proptest::prop_assert_eq!(rule.pattern.as_str(), plain.pattern.as_str());
            proptest::prop_assert_eq!(&rule.name, &plain.name);
            proptest::prop_assert!(rule.matches(&host.to_ascii_uppercase(), &path));
            let same = other.eq_ignore_ascii_case(&host);
            proptest::prop_assert_eq!(rule.matches(&other, &path), same);
        }

        #[test]
        fn any_route_text_parses_or_says_why(text in "[@ a-z^/=:.()\\[\\]*+?-]{0,24}") {
            if let Ok(rule) = RouteRule::parse(&text) {
                proptest::prop_assert!(!rule.name.is_empty());
                proptest::prop_assert_eq!(rule.host.is_some(), text.starts_with('@'));
            }
        }
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
