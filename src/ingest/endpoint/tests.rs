use super::*;

fn ep(method: &str, target: &str, routes: &[&str]) -> String {
    let routes: Vec<RouteRule> = routes
        .iter()
        .map(|r| RouteRule::parse(r).unwrap())
        .collect();
    let mut out = String::new();
    endpoint(
        Some(method.as_bytes()),
        target.as_bytes(),
        &routes,
        &mut out,
    );
    out
}

#[test]
fn a_line_without_a_method_is_named_by_its_path() {
    let unlogged = |target: &str, routes: &[&str]| {
        let routes: Vec<RouteRule> = routes
            .iter()
            .map(|r| RouteRule::parse(r).unwrap())
            .collect();
        let mut out = String::new();
        endpoint(None, target.as_bytes(), &routes, &mut out);
        out
    };
    assert_eq!(unlogged("/api/users/42?x=1", &[]), "/api/users/:id");
    assert_eq!(unlogged("https://example.com/a/b", &[]), "/a/b");
    assert_eq!(unlogged("/login", &["^/login$=auth"]), "auth");
    // Only a path names anything; a logged method that is empty or bad
    // still makes an invalid request.
    for target in ["", "*", "login", "-"] {
        assert_eq!(unlogged(target, &[]), INVALID_REQUEST, "{target}");
    }
    assert_eq!(ep("", "/a", &[]), INVALID_REQUEST);
    assert_eq!(ep("get", "/a", &[]), INVALID_REQUEST);
    // Found by review: Envoy, Istio and ALB log `"- - HTTP/1.1"` for a
    // request they could not read; it was the endpoint `- -`.
    assert_eq!(ep("-", "-", &[]), INVALID_REQUEST);
    assert_eq!(ep("--_", "/a", &[]), INVALID_REQUEST);
    assert_eq!(ep("M-SEARCH", "/a", &[]), "M-SEARCH /a");
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
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'=' | b'~'))))
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
        let expected = if path.is_empty() { INVALID_REQUEST.to_string() } else { format!("GET {}", expected.join("/")) };
        proptest::prop_assert_eq!(ep("GET", &path, &[]), expected);
    }
}

/// The endpoint as it was written before the one-pass normaliser: the
/// path cut at its query, split on `/`, every id segment replaced.
fn endpoint_by_splitting(method: &str, target: &str) -> String {
    // No path at all before the query: no request of an endpoint.
    if target.split(['?', '#']).next() == Some("") {
        return INVALID_REQUEST.to_string();
    }
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
        endpoint_of_text(Some(b"GET"), host, target, &rules, &mut out);
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
    // A method alone, or with a query and no path: once `GET /` (found by
    // review), a request nginx answers 400 before any limit.
    for target in ["", "?q=1", "#top"] {
        assert_eq!(ep("GET", target, &[]), INVALID_REQUEST, "{target}");
    }
    // An absolute-form target without a path is `/`, query or not.
    assert_eq!(ep("GET", "http://example.com", &[]), "GET /");
    assert_eq!(ep("GET", "http://example.com?q=1", &[]), "GET /");
}

#[test]
fn an_absolute_form_target_is_read_as_its_path_whatever_its_scheme() {
    for (target, path) in [
        ("http://h/a/b?q", "/a/b?q"),
        ("HTTP://h:8080/a", "/a"),
        ("Https://h/a", "/a"),
        ("ftp://h/a", "/a"),
        ("h2c+x://h/a", "/a"),
        // The authority ends at `?` or `#` too: no path there.
        ("http://h?q=/a", "/"),
        ("http://h#/a", "/"),
        ("http://h", "/"),
        // Not absolute-form: kept as they are.
        ("/a://b", "/a://b"),
        ("1http://h/a", "1http://h/a"),
        ("x", "x"),
    ] {
        assert_eq!(super::strip_origin(target), path, "{target}");
    }
    assert_eq!(ep("GET", "HTTP://h/a/7", &[]), "GET /a/:id");
}

#[test]
fn a_replay_keeps_a_query_a_product_refuses_with_its_path() {
    for (target, kept) in [
        ("/a?q=1&r=/x", "/a"),
        ("/a?q=%20", "/a"),
        ("/a?q=x y", "/a?q=x y"),
        ("/a?q=\u{1}", "/a?q=\u{1}"),
        ("/a?q=x\u{7f}", "/a?q=x\u{7f}"),
        ("/a?q=\u{e9}", "/a?q=\u{e9}"),
        ("/a?q=#x", "/a?q=#x"),
        ("/a#top", "/a#top"),
        ("/a b?q=1", "/a b"),
        ("http://h/a?q=x y", "/a?q=x y"),
        ("http://h?q=1", "/"),
        // Go refuses `*` with a query: it is kept.
        ("*?x", "*?x"),
        ("*", "*"),
    ] {
        assert_eq!(replayed_path(target), kept, "{target}");
        assert_eq!(split_replayed_path(kept).0, without_query(kept), "{target}");
        if !target.starts_with("http") {
            assert_eq!(
                refused_after_path(
                    target
                        .as_bytes()
                        .split_at(target_key(target.as_bytes()).len())
                ),
                kept != without_query(target)
            );
        }
    }
    assert_eq!(split_replayed_path("/a?q=x y"), ("/a", "?q=x y"));
    assert_eq!(split_replayed_path("/a"), ("/a", ""));
}

proptest::proptest! {
    /// The cache of requests bypasses exactly the targets whose replayed
    /// path is more than their path: where what follows the cache's key
    /// holds a refused byte.
    #[test]
    fn the_bypass_is_where_the_replayed_path_keeps_more(
        target in "(http://h)?/[a-c ?#\u{1}\u{7f}\u{e9}%]{0,10}|\\*[?a#]{0,3}",
    ) {
        // An absolute-form target is its own key: it is cached whatever it keeps.
        let absolute = target.starts_with("http");
        let path = without_query(strip_origin(&target));
        let key_and_rest = target.as_bytes().split_at(target_key(target.as_bytes()).len());
        proptest::prop_assert_eq!(
            refused_after_path(key_and_rest),
            replayed_path(&target) != path && !absolute,
        );
        proptest::prop_assert!(replayed_path(&target).starts_with(path));
    }
}
