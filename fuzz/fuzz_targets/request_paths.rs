//! Fuzz target: request paths as the gateway replays read them. Any text:
//! no panic; an absolute-form target's path starts with `/`; nginx's `$uri`
//! (a port of `ngx_http_parse_complex_uri`) starts with `/` and holds no
//! `//` and no `.` or `..` segment; a path ingestion would not keep for a
//! replay (`KeptPaths::may_read_otherwise`) is its own `$uri`, and one
//! HAProxy's parser takes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::KeptPaths;
use rlctl::ingest::endpoint::strip_origin;
use rlctl::simulate::gateway::haproxy_target;
use rlctl::simulate::gateway::request_names::nginx_uri;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let path = strip_origin(&text);
    assert!(path == text || path.starts_with('/'), "{text:?} -> {path:?}");
    let kept = KeptPaths::may_read_otherwise(path.as_bytes());
    assert!(kept || haproxy_target::takes_target(path), "{path:?}");
    haproxy_target::takes_method(&text);
    let Some(uri) = nginx_uri(path) else {
        return;
    };
    if !kept {
        assert_eq!(uri, path);
    }
    // A decoded `%2F` is a slash like any other: merged and resolved too.
    assert!(uri.starts_with('/'), "{path:?} -> {uri:?}");
    assert!(!uri.contains("//"), "{path:?} -> {uri:?}");
    for segment in uri.split('/') {
        assert!(segment != "." && segment != "..", "{path:?} -> {uri:?}");
    }
});
