//! The path Kong's router matches routes against: the request URI up to its
//! first `?`, normalised by `normalize(uri, true)` (Kong 3.x,
//! kong/router/utils.lua `strip_uri_args`, kong/tools/uri.lua): escapes of
//! characters that are not reserved decoded, escapes of reserved ones kept
//! with upper-case digits, dot segments removed and slashes merged. Kong's
//! default router (`traditional_compatible`, and `expressions`) runs on
//! atc-router, which refuses a path that is not UTF-8 once decoded (its
//! context's `add_value`): the match fails and Kong answers 404 before any
//! plugin (`_M:exec`, kong/router/atc.lua).

use std::borrow::Cow;

use super::path_escapes::recoded;

/// Characters RFC 3986 reserves, which Kong keeps escaped (plus `%`).
const RESERVED: &[u8] = b"!*'();:@&=+$,/?%#[]";

/// `path` (up to its query) as Kong's router reads it, `None` when it is not
/// UTF-8 once decoded (`/api/%FF`: no route matches, Kong answers 404).
/// Borrowed when there is nothing to normalise.
pub fn kong_path(path: &str) -> Option<Cow<'_, str>> {
    match normalize(path) {
        Cow::Borrowed(_) => Some(Cow::Borrowed(path)),
        Cow::Owned(bytes) => String::from_utf8(bytes).ok().map(Cow::Owned),
    }
}

/// `path` normalised as Kong's `normalize(uri, true)` does it, byte for
/// byte; borrowed when that changes nothing.
fn normalize(path: &str) -> Cow<'_, [u8]> {
    let raw = path.as_bytes();
    if raw.is_empty() || raw == b"/" {
        return Cow::Borrowed(raw);
    }
    let decoded = match memchr::memchr(b'%', raw) {
        Some(_) => Cow::Owned(recoded(raw, |byte| !RESERVED.contains(&byte))),
        None => Cow::Borrowed(raw),
    };
    let has_dot = memchr::memchr(b'.', &decoded).is_some();
    let normalised = match has_dot || decoded.windows(2).any(|w| w == b"//") {
        true => Cow::Owned(without_dot_segments(&decoded)),
        false => decoded,
    };
    match normalised[..] == *raw {
        true => Cow::Borrowed(raw),
        false => Cow::Owned(normalised.into_owned()),
    }
}

/// `uri` with its dot segments removed and runs of slashes merged, step by
/// step as Kong's `normalize` does it (RFC 3986 5.2.4, with `//` taken as
/// `/`): segments (each with its leading `/`) are pushed and popped.
fn without_dot_segments(mut uri: &[u8]) -> Vec<u8> {
    let mut segments: Vec<&[u8]> = Vec::new();
    while !uri.is_empty() {
        match uri {
            b"/." => uri = b"/",
            b"/.." => {
                uri = b"/";
                segments.pop();
            }
            b"." | b".." => uri = b"",
            [b'.', b'.', b'/', ..] => uri = &uri[3..],
            [b'.', b'/', ..] => uri = &uri[2..],
            [b'/', b'.', b'/', ..] => uri = &uri[2..],
            [b'/', b'.', b'.', b'/', ..] => {
                uri = &uri[3..];
                segments.pop();
            }
            [b'/', b'/', ..] => uri = &uri[1..],
            _ => {
                let end = memchr::memchr(b'/', &uri[1..]).map_or(uri.len(), |i| i + 1);
                segments.push(&uri[..end]);
                uri = &uri[end..];
            }
        }
    }
    segments.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalise_as_kong_normalises_them() {
        // The cases of Kong's spec/01-unit/18-tools_uri_spec.lua that hold
        // with `merge_slashes` (as the router calls it), then more.
        for (path, read) in [
            ("", ""),
            ("/", "/"),
            ("/a/b/c/", "/a/b/c/"),
            ("/a%2Fb%2Fc/", "/a%2Fb%2Fc/"),
            ("/a%2fb%2fc/", "/a%2Fb%2Fc/"),
            ("/f%6f%6f", "/foo"),
            ("/%6B%6f%6e%67", "/kong"),
            ("/%2E", "/"),
            ("/./", "/"),
            ("/.", "/"),
            ("/..", "/"),
            ("/../", "/"),
            ("/./.././../", "/"),
            ("/a/b/c/./../../g", "/a/g"),
            ("mid/content=5/../6", "mid/6"),
            ("//", "/"),
            ("/////", "/"),
            ("/a//b//", "/a/b/"),
            ("/endel%C3%B8st", "/endeløst"),
            (
                "/%20%21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
                "/ %21%23%24%25%26%27%28%29%2A%2B%2C%2F%3A%3B%3D%3F%40%5B%5D",
            ),
            // A `%` without two hex digits stays; decoding is one pass.
            ("/a%zz/%2", "/a%zz/%2"),
            ("/a%252e", "/a%252e"),
            ("/api/x/../search", "/api/search"),
            ("/.hidden/a..b/", "/.hidden/a..b/"),
        ] {
            assert_eq!(normalize(path), read.as_bytes(), "{path}");
            assert_eq!(kong_path(path).as_deref(), Some(read), "{path}");
        }
        // Kong's spec case whose decoding is not UTF-8, which its router
        // refuses: no route matches it.
        let path = "/%C3%A4/a/%2e./a%2E//a/%2e/./a/../a/%2e%2E/%5f%99%af%2f%2F";
        let read = ["/ä/a./a/_".as_bytes(), b"\x99\xaf%2F%2F"].concat();
        assert_eq!(normalize(path), read);
        assert_eq!(kong_path(path), None);
        for path in ["/api/%FF", "/a/%C3", "/%C3%28", "/%ED%A0%80"] {
            assert_eq!(kong_path(path), None, "{path}");
        }
        // A reserved escape stays as it is, whatever byte it stands for.
        assert_eq!(kong_path("/%2f%C3%A9").as_deref(), Some("/%2Fé"));
    }

    #[test]
    fn a_path_with_nothing_to_normalise_is_borrowed() {
        for path in ["/api/users/7", "/a.b/c", "/a-b_c~d"] {
            assert!(matches!(kong_path(path), Some(Cow::Borrowed(p)) if p == path));
        }
    }

    proptest::proptest! {
        /// A path that no product reads otherwise (see
        /// `crate::ingest::KeptPaths::may_read_otherwise`) Kong reads as
        /// logged too, and what Kong makes of any path it makes again of
        /// that (but for a `%` its decoding brought together).
        #[test]
        fn kong_reads_usual_paths_as_logged(path in "(/|a|%|2|f|e|\\.|#|:|\\?|é|\u{1}){0,14}") {
            if !crate::ingest::KeptPaths::may_read_otherwise(path.as_bytes()) {
                let read = kong_path(&path);
                proptest::prop_assert_eq!(read.as_deref(), Some(path.as_str()));
            }
            if let Some(once) = kong_path(&path).filter(|once| !once.contains('%')) {
                let again = kong_path(&once);
                proptest::prop_assert_eq!(again.as_deref(), Some(&*once));
            }
        }
    }
}
