//! Fuzz target: request paths as the gateway replays read them. Any text:
//! no panic; an absolute-form target's path starts with `/`; nginx's `$uri`
//! (a port of `ngx_http_parse_complex_uri`) starts with `/` and holds no
//! `//` and no `.` or `..` segment; a path ingestion would not keep for a
//! replay (`KeptPaths::may_read_otherwise`) is its own `$uri`, its own
//! Traefik routing path, and one HAProxy's parser and Envoy take. Traefik's
//! routing path, when it starts with `/`, holds no `//` and no `.` or `..`
//! segment either, and Kong's router's path (where Kong routes the request
//! at all) starts with `/` and holds neither.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::KeptPaths;
use rlctl::ingest::endpoint::{replayed_path, split_replayed_path, strip_origin};
use rlctl::simulate::gateway::haproxy_target;
use rlctl::simulate::gateway::request_names::{NameReading, PathReading, nginx_uri};

/// Holds no `//` and no `.` or `..` segment.
fn clean(path: &str) -> bool {
    !path.contains("//") && path.split('/').all(|s| s != "." && s != "..")
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = strip_origin(&text);
    assert!(path == text || path.starts_with('/'), "{text:?} -> {path:?}");
    let kept = KeptPaths::may_read_otherwise(path.as_bytes());
    assert!(kept || haproxy_target::takes_target(path), "{path:?}");
    haproxy_target::takes_method(&text);
    let reading = |paths| NameReading { paths, ..NameReading::default() };
    let replayed = replayed_path(&text);
    if let Some(routed) = reading(PathReading::Traefik).path(replayed)
        && routed.starts_with('/')
    {
        assert!(clean(&routed), "{replayed:?} -> {routed:?}");
    }
    if let Some(routed) = reading(PathReading::Kong).path(replayed) {
        assert!(routed.starts_with('/') && clean(&routed), "{replayed:?} -> {routed:?}");
    }
    if !kept {
        // Routes read the path up to its query.
        let (route_path, _) = split_replayed_path(path);
        let traefik = reading(PathReading::Traefik).path(path);
        assert_eq!(traefik.as_deref(), Some(route_path), "{path:?}");
        let envoy = reading(PathReading::OnEnvoy).path(path);
        assert_eq!(envoy.as_deref(), Some(route_path), "{path:?}");
    }
    let Some(uri) = nginx_uri(path) else {
        return;
    };
    if !kept {
        assert_eq!(uri, path);
    }
    // A decoded `%2F` is a slash like any other: merged and resolved too.
    assert!(uri.starts_with('/'), "{path:?} -> {uri:?}");
    assert!(clean(&uri), "{path:?} -> {uri:?}");
});
