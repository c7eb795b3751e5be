//! How a product reads the method and path that a rule's method and route
//! are matched against, where that is not as the log spells them:
//!
//! - nginx (and Kong, which runs on it) answers 400 to a method that is not
//!   `A`–`Z`, `_` and `-` (`ngx_http_parse_request_line`,
//!   src/http/ngx_http_parse.c) before any limit runs; nginx matches the
//!   configuration `rlctl export` writes (`map $uri`) against `$uri`
//!   ([`nginx_uri`]), and answers 400 where it cannot read the path so.
//! - HAProxy compares a method ACL (`method GET`) with the method as sent
//!   (`find_http_meth` and `pat_match_meth`, src/http.c, src/pattern.c), so
//!   `get` is no `GET` there; so do Envoy's `:method` header matcher
//!   (`exact`) and Traefik's `Method()` (gorilla/mux's method matcher).
//! - Traefik matches `PathRegexp` against Go's `URL.Path`: the path
//!   percent-decoded, nothing else changed; Go's server answers 400 to a
//!   bad escape (`net/url`'s `unescape`).
//!
//! An absolute-form target (`GET http://host/path`) is read as its path by
//! all of these. The others (AWS WAF, whose method match lowercases) match
//! as the policy does: the path as logged, methods in any case.

use std::borrow::Cow;

pub use super::nginx_uri::nginx_uri;

/// How a product compares a rule's method with a request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MethodReading {
    /// In any case, as the policy does.
    #[default]
    AnyCase,
    /// As sent, case and all.
    AsSent,
    /// As nginx: only a method of `A`–`Z`, `_` and `-` reaches any rule.
    Nginx,
}

/// How a product reads the path a rule's route is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PathReading {
    /// As logged, as the policy does.
    #[default]
    AsLogged,
    /// As nginx's `$uri` ([`nginx_uri`]).
    NginxUri,
    /// Percent-decoded, as Go's `URL.Path` ([`go_url_path`]).
    Decoded,
}

/// How a product reads a request's method and path for its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NameReading {
    pub methods: MethodReading,
    pub paths: PathReading,
}

impl NameReading {
    /// Whether a request with this `method` reaches the product's rules at
    /// all (nginx answers some itself).
    pub fn reads_method(self, method: &str) -> bool {
        self.methods != MethodReading::Nginx
            || (!method.is_empty()
                && method
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-'))
    }

    /// Whether a rule's `want`ed method picks a request's `method`.
    pub fn method_picks(self, want: &str, method: &str) -> bool {
        match self.methods {
            MethodReading::AsSent => want == method,
            MethodReading::AnyCase | MethodReading::Nginx => want.eq_ignore_ascii_case(method),
        }
    }

    /// The path a rule's route is matched against, `None` when the product
    /// answers the request before any rule sees it.
    pub fn path(self, path: &str) -> Option<Cow<'_, str>> {
        match self.paths {
            PathReading::AsLogged => Some(Cow::Borrowed(path)),
            PathReading::NginxUri => nginx_uri(origin_stripped(path)),
            PathReading::Decoded => go_url_path(origin_stripped(path)),
        }
    }

    /// Whether the product answers some requests itself, by their method
    /// or path, before any rule sees them.
    pub fn answers_some_itself(self) -> bool {
        self.methods == MethodReading::Nginx || self.paths != PathReading::AsLogged
    }
}

/// The path of an absolute-form target (`http://host:port/path` → `/path`,
/// `/` when it has none); any other path as it is.
fn origin_stripped(path: &str) -> &str {
    let Some((scheme, rest)) = path.split_once("://") else {
        return path;
    };
    if scheme.is_empty() || !scheme.bytes().all(|b| b.is_ascii_alphabetic()) {
        return path;
    }
    rest.find('/').map_or("/", |i| &rest[i..])
}

/// `path` percent-decoded as Go's `url.PathUnescape` does for `URL.Path`,
/// `None` for a `%` not followed by two hex digits (Go's server answers
/// 400); bytes that are not UTF-8 once decoded read as U+FFFD.
pub fn go_url_path(path: &str) -> Option<Cow<'_, str>> {
    if !path.contains('%') {
        return Some(Cow::Borrowed(path));
    }
    let raw = path.as_bytes();
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let digits = raw.get(i + 1..i + 3)?;
            let text = std::str::from_utf8(digits).ok()?;
            out.push(
                u8::from_str_radix(text, 16)
                    .ok()
                    .filter(|_| digits.iter().all(u8::is_ascii_hexdigit))?,
            );
            i += 3;
        } else {
            out.push(raw[i]);
            i += 1;
        }
    }
    Some(Cow::Owned(String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_compared_as_each_product_does() {
        let policy = NameReading::default();
        assert!(policy.method_picks("GET", "get") && policy.reads_method("get"));
        let haproxy = NameReading {
            methods: MethodReading::AsSent,
            ..NameReading::default()
        };
        assert!(haproxy.method_picks("GET", "GET") && !haproxy.method_picks("GET", "get"));
        let nginx = NameReading {
            methods: MethodReading::Nginx,
            ..NameReading::default()
        };
        for (method, read) in [
            ("GET", true),
            ("M-SEARCH", true),
            ("_X", true),
            ("get", false),
            ("Get", false),
            ("G3T", false),
            ("", false),
        ] {
            assert_eq!(nginx.reads_method(method), read, "{method}");
        }
    }

    #[test]
    fn paths_are_read_as_each_product_does() {
        let read = |paths, path| {
            NameReading {
                paths,
                ..NameReading::default()
            }
            .path(path)
            .map(Cow::into_owned)
        };
        assert_eq!(
            read(PathReading::AsLogged, "/a//%62").as_deref(),
            Some("/a//%62")
        );
        assert_eq!(
            read(PathReading::NginxUri, "/a//%62").as_deref(),
            Some("/a/b")
        );
        assert_eq!(
            read(PathReading::Decoded, "/a//%62").as_deref(),
            Some("/a//b")
        );
        assert_eq!(
            read(PathReading::Decoded, "/a/%2e%2E/%2F").as_deref(),
            Some("/a/..//")
        );
        assert_eq!(read(PathReading::Decoded, "/a%zz"), None);
        assert_eq!(read(PathReading::Decoded, "/a%4"), None);
        assert_eq!(
            read(PathReading::Decoded, "/a%00b").as_deref(),
            Some("/a\0b")
        );
        // Absolute-form targets are read as their path.
        assert_eq!(
            read(PathReading::NginxUri, "http://x:8080/api//s").as_deref(),
            Some("/api/s")
        );
        assert_eq!(
            read(PathReading::Decoded, "https://x").as_deref(),
            Some("/")
        );
        assert_eq!(
            read(PathReading::AsLogged, "http://x/a").as_deref(),
            Some("http://x/a")
        );
    }

    proptest::proptest! {
        /// A path ingestion does not keep for a gateway replay without routes
        /// (`KeptPaths::Unusual`) is read as logged by every product.
        #[test]
        fn paths_not_kept_are_read_as_logged(path in "(/|a|%|2|f|\\.|#|:|h|p|\\?){0,12}") {
            if !crate::ingest::KeptPaths::may_read_otherwise(path.as_bytes()) {
                for paths in [PathReading::NginxUri, PathReading::Decoded] {
                    let read = NameReading { paths, ..NameReading::default() }.path(&path);
                    proptest::prop_assert_eq!(read.as_deref(), Some(path.as_str()));
                }
            }
        }
    }
}
