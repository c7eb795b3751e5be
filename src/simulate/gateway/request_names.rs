//! How a product reads the method and path that a rule's method and route
//! are matched against, where that is not as the log spells them (an
//! absolute-form target, `GET http://host/path`, is read as its path by
//! every product and by the policy alike, see `crate::ingest::requests`):
//!
//! - nginx (and Kong, which runs on it) answers 400 to a method that is not
//!   `A`–`Z`, `_` and `-` (`ngx_http_parse_request_line`,
//!   src/http/ngx_http_parse.c), and to a path it cannot read as `$uri`
//!   ([`nginx_uri`]: a bad escape, `%00`, `..` above the root, a target not
//!   starting with `/`; a space, a control byte or DEL in its query too),
//!   before any limit runs; nginx matches the
//!   configuration `rlctl export` writes (`map $uri`) against `$uri`, Kong
//!   its routes against the request URI normalised its own way
//!   ([`kong_path`]: escapes decoded, dot segments removed, slashes merged,
//!   as `$uri` mostly is, but `%2F` kept as it is), answering 404 to a path
//!   that is not UTF-8 once decoded.
//! - HAProxy answers 400 to a method or target its HTTP/1 parser refuses
//!   ([`haproxy_target`]: a method not of token characters; a byte from 0x80
//!   up, a control byte, a space or a `#` in the target, its query too, which
//!   a replay keeps with the path when it holds one:
//!   `crate::ingest::endpoint::replayed_path`), and compares a method ACL (`method GET`)
//!   with the method as sent (`find_http_meth` and `pat_match_meth`,
//!   src/http.c, src/pattern.c), so `get` is no `GET` there; so do Envoy's
//!   `:method` header matcher
//!   (`exact`, which also feeds the rate limit service's descriptors) and
//!   Traefik's `Method()` (pkg/muxer/http/matcher.go).
//! - Traefik runs on Go's `net/http`, which answers 400 to a method that is
//!   not of token characters, as HAProxy does, answers `OPTIONS *` itself,
//!   and routes on a path that Go and its entry point decode, normalise and
//!   clean ([`traefik_path`]).
//! - Envoy answers 400 to a method its HTTP/1 parser does not know, to a
//!   byte outside 0x21–0x7e in the target and to a `#` ([`envoy_codec`]),
//!   and routes on the path as sent.
//!
//! The others (AWS WAF, whose method match lowercases) match as the policy
//! does: the path as logged, methods in any case.

use std::borrow::Cow;

use super::kong_path::kong_path;
pub use super::nginx_uri::nginx_uri;
use super::traefik_path::traefik_path;
use super::{Gateway, envoy_codec, haproxy_target};
use crate::events::{Protocol, ProtocolSet};
use crate::ingest::endpoint::split_replayed_path;

/// How a product compares a rule's method with a request's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MethodReading {
    /// In any case, as the policy does.
    #[default]
    AnyCase,
    /// As nginx: only a method of `A`–`Z`, `_` and `-` reaches any rule.
    Nginx,
    /// As sent, and only a method of token characters (RFC 9110 `tchar`)
    /// reaches any rule: HAProxy, and Go's `net/http` under Traefik
    /// (`validMethod`, src/net/http/request.go).
    Token,
    /// As sent, and only a method Envoy's HTTP/1 parser knows reaches any
    /// rule ([`envoy_codec`]).
    Envoy,
}

/// How a product reads the path a rule's route is matched against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PathReading {
    /// As logged, as the policy does.
    #[default]
    AsLogged,
    /// As nginx's `$uri` ([`nginx_uri`]).
    NginxUri,
    /// As Kong's router ([`kong_path`]), where nginx under it reads it at all.
    Kong,
    /// As logged, where HAProxy's parser takes it at all.
    OnHaproxy,
    /// As Traefik's router ([`traefik_path`]).
    Traefik,
    /// As logged, where Envoy takes it at all ([`envoy_codec`]).
    OnEnvoy,
}

/// Which HTTP versions reach a product's rules: the versions each answers
/// itself, before any rule sees the request, are those its HTTP/1 parser
/// refuses. `HTTP/2.0` and `HTTP/3.0` in a request line are taken for HTTP/2
/// and 3 (nginx, Apache and Traefik log those so), which every product takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProtocolReading {
    /// Every version, as the policy takes them.
    #[default]
    Any,
    /// As Envoy with its defaults: an HTTP/1 request of any version but 1.1
    /// (1.0, 0.9, `HTTP/1.2`...) is answered 426, or 400 by its parser,
    /// before any filter (`accept_http_10` off: `onHeadersCompleteImpl` and
    /// `checkProtocolVersion` in source/common/http/http1/codec_impl.cc).
    Envoy,
    /// As HAProxy: a request line with no version (HTTP/0.9), or whose
    /// version is not `HTTP/` and one digit either side of a dot, is
    /// answered 400; any other is taken (checked against HAProxy 2.6).
    Haproxy,
    /// As Go's `net/http` under Traefik: a request line with no version
    /// (`parseRequestLine` wants three words) or of a version not `HTTP/x.y`
    /// (`ParseHTTPVersion`, src/net/http/request.go) is answered 400, one of
    /// a major version other than 1 505 (`http1ServerSupportsRequest`,
    /// src/net/http/server.go).
    Go,
    /// As nginx (`ngx_http_parse_request_line`, src/http/ngx_http_parse.c,
    /// checked against nginx 1.22): a request line with no version is
    /// answered 400 unless its method is `GET`; a version whose major is not
    /// 1, or not `HTTP/1.` and one to three digits, 505 or 400.
    Nginx,
}

impl ProtocolReading {
    /// The HTTP versions answered before any rule sees the request (a
    /// version not logged reaches the rules).
    fn refused(self) -> ProtocolSet {
        use Protocol::*;
        match self {
            ProtocolReading::Any => ProtocolSet::default(),
            ProtocolReading::Envoy => ProtocolSet::of([
                Http09,
                Http10,
                Http1Minor,
                Http1LongMinor,
                OtherMajor,
                Malformed,
            ]),
            ProtocolReading::Haproxy => ProtocolSet::of([Http09, Http1LongMinor, Malformed]),
            ProtocolReading::Go => ProtocolSet::of([Http09, Http1LongMinor, OtherMajor, Malformed]),
            ProtocolReading::Nginx => ProtocolSet::of([OtherMajor, Malformed]),
        }
    }

    /// The versions answered before any rule sees the request unless its
    /// method is `GET` (nginx serves an HTTP/0.9 `GET` alone).
    fn refused_unless_get(self) -> ProtocolSet {
        match self {
            ProtocolReading::Nginx => ProtocolSet::of([Protocol::Http09]),
            _ => ProtocolSet::default(),
        }
    }
}

/// How a product reads a request's method, path and HTTP version for its rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NameReading {
    pub methods: MethodReading,
    pub paths: PathReading,
    pub protocols: ProtocolReading,
}

impl NameReading {
    /// Whether a request with this `method` reaches the product's rules at
    /// all (nginx and HAProxy answer some themselves). A method that was not logged (an
    /// empty one) is taken to reach them.
    pub fn reads_method(self, method: &str) -> bool {
        match self.methods {
            MethodReading::Nginx => method
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'-'),
            MethodReading::Token => haproxy_target::takes_method(method),
            MethodReading::Envoy => envoy_codec::takes_method(method),
            MethodReading::AnyCase => true,
        }
    }

    /// Whether a rule's `want`ed method picks a request's `method`.
    pub fn method_picks(self, want: &str, method: &str) -> bool {
        match self.methods {
            MethodReading::Token | MethodReading::Envoy => want == method,
            MethodReading::AnyCase | MethodReading::Nginx => want.eq_ignore_ascii_case(method),
        }
    }

    /// The path a rule's route is matched against, `None` when the product
    /// answers the request before any rule sees it. `kept` is a path as a
    /// replay keeps it: alone, or with a query or fragment that a product
    /// may refuse (`crate::ingest::endpoint::replayed_path`), which no route
    /// reads.
    pub fn path(self, kept: &str) -> Option<Cow<'_, str>> {
        let (path, rest) = split_replayed_path(kept);
        // nginx refuses a space or a control byte anywhere in the target.
        let on_nginx = || !rest.bytes().any(|b| b <= b' ' || b == 0x7f);
        match self.paths {
            PathReading::AsLogged => Some(Cow::Borrowed(path)),
            PathReading::NginxUri => nginx_uri(path).filter(|_| on_nginx()),
            // Kong cuts the request URI at its first `?` only
            // (`strip_uri_args`): a fragment stays in the path it routes on.
            PathReading::Kong => nginx_uri(path)
                .filter(|_| on_nginx())
                .and_then(|_| kong_path(up_to_query(kept))),
            PathReading::OnHaproxy => {
                haproxy_target::takes_target(kept).then_some(Cow::Borrowed(path))
            }
            PathReading::Traefik => traefik_path(path, rest),
            PathReading::OnEnvoy => envoy_codec::takes_target(kept).then_some(Cow::Borrowed(path)),
        }
    }

    /// A method and a kept path that the product answers itself when they
    /// come together, though it routes each with others: Go's `net/http`
    /// answers `OPTIONS *` (`serverHandler.ServeHTTP`, src/net/http/server.go)
    /// before Traefik's router sees it, and routes `GET *` on `*`.
    pub fn answered_together(self) -> Option<(&'static str, &'static str)> {
        (self.paths == PathReading::Traefik).then_some(("OPTIONS", "*"))
    }

    /// The HTTP versions the product answers itself, before any rule sees
    /// the request: always, and unless the method is `GET`.
    pub fn refused_protocols(self) -> (ProtocolSet, ProtocolSet) {
        (
            self.protocols.refused(),
            self.protocols.refused_unless_get(),
        )
    }

    /// Whether the product matches routes as PCRE without UTF mode does, on
    /// the path's bytes (nginx, HAProxy; see [`crate::text::pcre_bytes`]),
    /// rather than as Unicode text.
    pub fn routes_on_bytes(self) -> bool {
        matches!(self.paths, PathReading::NginxUri | PathReading::OnHaproxy)
    }

    /// Whether the product answers some requests itself, by their method,
    /// path or HTTP version, before any rule sees them.
    pub fn answers_some_itself(self) -> bool {
        self != NameReading::default()
    }
}

impl Gateway {
    /// How the configuration `rlctl export` writes for it reads a request's
    /// method, path and HTTP version for a rule's method and route.
    pub fn name_reading(self) -> NameReading {
        let protocols = match self {
            Gateway::Envoy | Gateway::EnvoyTimer | Gateway::EnvoyRatelimit => {
                ProtocolReading::Envoy
            }
            Gateway::Haproxy | Gateway::HaproxyReqRate => ProtocolReading::Haproxy,
            Gateway::Traefik => ProtocolReading::Go,
            // Kong runs on nginx.
            Gateway::Nginx | Gateway::Kong | Gateway::KongRedis => ProtocolReading::Nginx,
            _ => ProtocolReading::Any,
        };
        let (methods, paths) = match self {
            Gateway::Nginx => (MethodReading::Nginx, PathReading::NginxUri),
            Gateway::Kong | Gateway::KongRedis => (MethodReading::Nginx, PathReading::Kong),
            Gateway::Haproxy | Gateway::HaproxyReqRate => {
                (MethodReading::Token, PathReading::OnHaproxy)
            }
            Gateway::Traefik => (MethodReading::Token, PathReading::Traefik),
            Gateway::Envoy | Gateway::EnvoyTimer | Gateway::EnvoyRatelimit => {
                (MethodReading::Envoy, PathReading::OnEnvoy)
            }
            Gateway::AwsWaf | Gateway::Cloudflare | Gateway::RedisSwc => {
                (MethodReading::AnyCase, PathReading::AsLogged)
            }
        };
        NameReading {
            methods,
            paths,
            protocols,
        }
    }
}

/// `kept` up to its first `?` after its first byte, as Kong's
/// `strip_uri_args` cuts a request URI (kong/router/utils.lua).
fn up_to_query(kept: &str) -> &str {
    let question = kept.bytes().skip(1).position(|b| b == b'?');
    question.map_or(kept, |at| &kept[..at + 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_are_compared_as_each_product_does() {
        let policy = NameReading::default();
        assert!(policy.method_picks("GET", "get") && policy.reads_method("get"));
        for methods in [MethodReading::Token, MethodReading::Envoy] {
            let as_sent = NameReading {
                methods,
                ..NameReading::default()
            };
            assert!(as_sent.method_picks("GET", "GET") && !as_sent.method_picks("GET", "get"));
        }
        let nginx = NameReading {
            methods: MethodReading::Nginx,
            ..NameReading::default()
        };
        for (method, read) in [
            ("GET", true),
            ("M-SEARCH", true),
            ("_X", true),
            ("", true),
            ("get", false),
            ("Get", false),
            ("G3T", false),
        ] {
            assert_eq!(nginx.reads_method(method), read, "{method:?}");
        }
    }

    #[test]
    fn paths_are_read_as_each_product_does() {
        let read = |paths, path| {
            let reading = NameReading {
                paths,
                ..NameReading::default()
            };
            reading.path(path).map(Cow::into_owned)
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
            read(PathReading::Kong, "/a//%62/./%2f").as_deref(),
            Some("/a/b/%2F")
        );
        for answered in ["/a%zz", "x", "*", "/..", ""] {
            assert_eq!(read(PathReading::Kong, answered), None, "{answered}");
            assert_eq!(read(PathReading::NginxUri, answered), None, "{answered}");
        }
        // An empty request line (`""`) is answered 400.
        assert_eq!(read(PathReading::NginxUri, ""), None);
        // A path kept with a query a product may refuse: the route reads the
        // path alone; nginx refuses a space, a control byte or DEL there,
        // HAProxy those, a byte from 0x80 up and a `#` too.
        for (kept, nginx, haproxy) in [
            ("/a?q=x y", false, false),
            ("/a?q=\u{1}", false, false),
            ("/a?q=\u{7f}", false, false),
            ("/a#x y", false, false),
            ("/a?q=\u{e9}", true, false),
            ("/a?q=#x", true, false),
        ] {
            assert_eq!(read(PathReading::AsLogged, kept).as_deref(), Some("/a"));
            let path = nginx.then_some("/a");
            assert_eq!(read(PathReading::NginxUri, kept).as_deref(), path, "{kept}");
            assert_eq!(read(PathReading::Kong, kept).as_deref(), path, "{kept}");
            let path = haproxy.then_some("/a");
            assert_eq!(
                read(PathReading::OnHaproxy, kept).as_deref(),
                path,
                "{kept}"
            );
        }
        assert_eq!(read(PathReading::OnHaproxy, "/a").as_deref(), Some("/a"));
        // A fragment: nginx's `$uri` ends before it, HAProxy refuses it, and
        // Kong routes on the request URI up to its first `?`, fragment and all.
        assert_eq!(read(PathReading::AsLogged, "/a#x").as_deref(), Some("/a"));
        assert_eq!(read(PathReading::NginxUri, "/a#x").as_deref(), Some("/a"));
        assert_eq!(read(PathReading::OnHaproxy, "/a#x"), None);
        assert_eq!(read(PathReading::Kong, "/a#x").as_deref(), Some("/a#x"));
        assert_eq!(read(PathReading::Kong, "/a#/../b").as_deref(), Some("/b"));
        assert_eq!(read(PathReading::Kong, "/a#x?q=1").as_deref(), Some("/a#x"));
        // Kong's router refuses a path that is not UTF-8 once decoded
        // (404); nginx's `$uri` holds the byte.
        assert_eq!(read(PathReading::Kong, "/a%FF"), None);
        assert!(read(PathReading::NginxUri, "/a%FF").is_some());
    }

    proptest::proptest! {
        /// A path ingestion does not keep for a gateway replay without routes
        /// (`KeptPaths::Unusual`) is read as logged by every product.
        #[test]
        fn paths_not_kept_are_read_as_logged(target in "(/|a|%|2|f|\\.|#|:|h|p|\\?|\\*| |\t|\u{7f}|é|\u{1}){0,12}") {
            let path = crate::ingest::endpoint::replayed_path(&target);
            if !crate::ingest::KeptPaths::may_read_otherwise(path.as_bytes()) {
                for paths in [PathReading::NginxUri, PathReading::Kong, PathReading::OnHaproxy, PathReading::Traefik, PathReading::OnEnvoy] {
                    let read = NameReading { paths, ..NameReading::default() }.path(path);
                    proptest::prop_assert_eq!(read.as_deref(), Some(path));
                }
            }
        }
    }
}
