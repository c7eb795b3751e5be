//! The path Traefik's router matches `Path`, `PathPrefix` and `PathRegexp`
//! against, with the entry point's defaults (Traefik 2.11 to 3.7: path
//! sanitisation on, no encoded-character filter), as its HTTP server turns
//! a request target into it:
//!
//! 1. Go's `net/http` answers 400 to a target with a control byte or DEL
//!    (`url.ParseRequestURI`), a space (the request line then has no
//!    version), a `%` without two hex digits after it in the path, or a path
//!    that does not start with `/` (`*` aside, and a path after a scheme:
//!    `a:/b` is the path `/b`, and the rootless `a:b` is opaque to Go and
//!    routed as `/`); Traefik's `denyFragment` answers 400 to a `#` in the
//!    path (Go keeps it there).
//! 2. `normalizePath`: in the path as sent (Go's `RawPath`, when it is not
//!    Go's own escaping of the decoded path), escapes of unreserved
//!    characters are decoded and the others written with upper-case digits.
//! 3. `sanitizePath` (`URL.JoinPath()`): the escaped path (that one, unless
//!    it holds a byte Go would escape, such as a byte from 0x80 up, `|` or
//!    `"`; Go then escapes the decoded path anew, so that `%2F` becomes `/`
//!    and `!` becomes `%21`) cleaned as `path.Clean` does (`.` and `..`
//!    segments resolved, slashes merged), a trailing slash kept.
//! 4. The routing path (`withRoutingPath`): escapes decoded, but for those
//!    of reserved characters (`:/?#[]@!$&'()*+,;=` and `%`), which stay.
//!
//! Sources: traefik `pkg/server/server_entrypoint_tcp.go` (`sanitizePath`,
//! `normalizePath`, `denyFragment`), `pkg/muxer/http/mux.go`
//! (`withRoutingPath`, `reservedCharacters`); Go `src/net/url/url.go`
//! (`parse`, `setPath`, `EscapedPath`, `validEncoded`, `shouldEscape`,
//! `JoinPath`) and `src/path/path.go` (`Clean`).

use std::borrow::Cow;

use super::path_escapes::{escape_at, recoded};
use crate::ingest::endpoint::{scheme_end, strip_origin};

/// Characters whose escapes the routing path keeps (`reservedCharacters`).
const RESERVED: &[u8] = b":/?#[]@!$&'()*+,;=%";

/// `path` (up to its query or fragment, `rest`: empty or from its `?` or
/// `#`) as Traefik's router reads it, `None` when Traefik answers 400 before
/// routing; bytes that are not UTF-8 once decoded read as U+FFFD.
pub fn traefik_path<'p>(path: &'p str, rest: &str) -> Option<Cow<'p, str>> {
    let refused = |b: u8| b <= b' ' || b == 0x7f;
    if path.bytes().chain(rest.bytes()).any(refused) {
        return None;
    }
    // Ingestion keeps an absolute-form target's path alone; a path read
    // back from an events file may be one all the same. What is left may
    // start with a scheme and no `//` (`a:b`, `a:/b`).
    let path = strip_origin(path);
    let path = match scheme_end(path.as_bytes()).map(|colon| &path[colon + 1..]) {
        // A rootless path after a scheme is opaque to Go, and its URL's path
        // empty, which `JoinPath` makes `/`; nothing in it is read, a `#` not either.
        Some(after) if !after.starts_with('/') => return Some(Cow::Borrowed("/")),
        Some(after) => after,
        None => path,
    };
    if rest.starts_with('#') {
        return None;
    }
    if path == "*" && rest.is_empty() {
        return Some(Cow::Borrowed(path));
    }
    let raw = path.as_bytes();
    if raw.first() != Some(&b'/') || !escapes_are_whole(raw) {
        return None;
    }
    // Nothing to decode, escape anew or clean.
    let plain = |&b: &u8| b != b'%' && valid_in_escaped_path(b);
    if raw.iter().all(plain) && !needs_cleaning(raw) {
        return Some(Cow::Borrowed(path));
    }
    // normalizePath
    let normalised = recoded(raw, unreserved);
    let escaped_path = match normalised.iter().all(|&b| valid_in_escaped_path(b)) {
        true => normalised,
        false => escaped(&recoded(raw, |_| true)),
    };
    // Its escapes have upper-case digits already.
    let routing = recoded(&cleaned(&escaped_path), |byte| !RESERVED.contains(&byte));
    match routing[..] == *raw {
        true => Some(Cow::Borrowed(path)),
        false => Some(Cow::Owned(String::from_utf8_lossy(&routing).into_owned())),
    }
}

/// Whether every `%` starts an escape (Go's `unescape`).
fn escapes_are_whole(raw: &[u8]) -> bool {
    raw.iter()
        .enumerate()
        .all(|(i, &b)| b != b'%' || escape_at(&raw[i..]).is_some())
}

/// Whether cleaning may change `raw`: it has `//` or a segment starting with `.`.
fn needs_cleaning(raw: &[u8]) -> bool {
    raw.windows(2).any(|w| w == b"//" || w == b"/.")
}

/// RFC 3986's unreserved characters.
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~".contains(&b)
}

/// Whether Go leaves `b` as it is when it escapes a path (`shouldEscape`).
fn kept_by_go_escape(b: u8) -> bool {
    unreserved(b) || b"$&+,/:;=@".contains(&b)
}

/// Whether `b` may stand in an escaped path as Go reads one (`validEncoded`).
fn valid_in_escaped_path(b: u8) -> bool {
    kept_by_go_escape(b) || b"!'()*[]%".contains(&b)
}

/// Go's escaping of a decoded path (`escape(path, encodePath)`).
fn escaped(path: &[u8]) -> Vec<u8> {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        match kept_by_go_escape(b) {
            true => out.push(b),
            false => out.extend([b'%', HEX[usize::from(b >> 4)], HEX[usize::from(b & 15)]]),
        }
    }
    out
}

/// `path.Clean` of a rooted path, with a trailing slash kept as `JoinPath`
/// keeps it.
fn cleaned(path: &[u8]) -> Vec<u8> {
    let mut segments: Vec<&[u8]> = Vec::new();
    for segment in path.split(|&b| b == b'/') {
        match segment {
            b"" | b"." => {}
            b".." => {
                segments.pop();
            }
            _ => segments.push(segment),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    for segment in &segments {
        out.push(b'/');
        out.extend_from_slice(segment);
    }
    if out.is_empty() || (path.ends_with(b"/") && !out.ends_with(b"/")) {
        out.push(b'/');
    }
    out
}

#[cfg(test)]
mod tests;
