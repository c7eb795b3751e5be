//! Which requests Envoy answers itself (400, or 404 for `OPTIONS *`), before
//! any filter or route sees them, as far as a log shows them (Envoy's default
//! HTTP/1 parser, Balsa, and the connection manager's path check; runtime
//! defaults):
//!
//! - A method not among the ones its parser knows, compared as sent
//!   (`isMethodValid` in source/common/http/http1/balsa_parser.cc; `get` is
//!   refused, and so is `M-SEARCH`, which that list spells `MSEARCH`), unless
//!   the listener allows custom methods (`allow_custom_methods`, off by
//!   default).
//! - A target that does not start with `/` (an absolute-form one is read as
//!   its path, as every product reads it; `*` is routed for no method: the
//!   codec takes it for `OPTIONS` alone, and the connection manager then
//!   answers 404 itself to a path not starting with `/`), or that holds a byte
//!   outside 0x21–0x7e, query included: a byte from 0x7f up by `isUrlValid`
//!   (the same file); the parser splits the request line at any byte up to a
//!   space, so that what follows one is read as the version, which is then
//!   refused (`isVersionValid`), and refuses a control byte other than tab
//!   and CR anywhere in the line (Balsa's `CheckHeaderLinesForInvalidChars`).
//!   Not modelled: a tab or CR that ends the target, which the parser takes
//!   for the separator before the version (see docs/gateways.md).
//! - A target with a `#` anywhere (`maybeNormalizePath` in
//!   source/common/http/conn_manager_utility.cc, under the runtime guard
//!   `envoy.reloadable_features.http_reject_path_with_fragment`, on by
//!   default; Istio turns it off, and Envoy then drops the fragment).
//!
//! Envoy does not normalise the path by default (`normalize_path` and
//! `merge_slashes` off, escaped slashes kept), so the routes match the path
//! as sent.

/// The methods Envoy's HTTP/1 parser knows (`kValidMethods`).
const METHODS: [&str; 34] = [
    "ACL",
    "BIND",
    "CHECKOUT",
    "CONNECT",
    "COPY",
    "DELETE",
    "GET",
    "HEAD",
    "LINK",
    "LOCK",
    "MERGE",
    "MKACTIVITY",
    "MKCALENDAR",
    "MKCOL",
    "MOVE",
    "MSEARCH",
    "NOTIFY",
    "OPTIONS",
    "PATCH",
    "POST",
    "PROPFIND",
    "PROPPATCH",
    "PURGE",
    "PUT",
    "REBIND",
    "REPORT",
    "SEARCH",
    "SOURCE",
    "SUBSCRIBE",
    "TRACE",
    "UNBIND",
    "UNLINK",
    "UNLOCK",
    "UNSUBSCRIBE",
];

/// Whether Envoy takes a request with this `method` (empty: not logged,
/// taken to be one it takes).
pub fn takes_method(method: &str) -> bool {
    method.is_empty() || METHODS.binary_search(&method).is_ok()
}

/// Whether Envoy takes a request for this `target` (a path as a replay keeps
/// it, with a query or fragment a product may refuse; empty: an empty
/// request line, which is no request).
pub fn takes_target(target: &str) -> bool {
    let bytes = target.as_bytes();
    let valid = |b: &u8| (0x21..=0x7e).contains(b) && *b != b'#';
    bytes.first() == Some(&b'/') && bytes.iter().all(valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_envoys_list_as_sent() {
        assert!(METHODS.is_sorted(), "binary search needs the list sorted");
        for method in ["GET", "POST", "PURGE", "MSEARCH", "UNSUBSCRIBE", ""] {
            assert!(takes_method(method), "{method}");
        }
        for method in ["get", "Get", "FOO", "M-SEARCH", "PRI", "G@T", "GETS"] {
            assert!(!takes_method(method), "{method}");
        }
    }

    #[test]
    fn targets_envoy_refuses_are_seen() {
        for target in [
            "/a",
            "/a%zz",
            "//x/../y",
            "/a|b\"{}",
            "/a?q=1",
            "/~!$&'()*+,;=:@",
        ] {
            assert!(takes_target(target), "{target:?}");
        }
        for target in [
            "",
            "*",
            "/a\tb",
            "/a\u{c}",
            "a",
            "a/b",
            "example.com:443",
            "/é",
            "/a b",
            "/a\u{1}",
            "/a\u{7f}",
            "/a#b",
            "/a?q=#x",
            "/a?q=\u{e9}",
            "/a?q=x y",
        ] {
            assert!(!takes_target(target), "{target:?}");
        }
    }
}
