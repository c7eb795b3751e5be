//! The path Kong's router matches routes against: the request URI up to its
//! first `?`, normalised by `normalize(uri, true)` (Kong 3.x,
//! kong/router/utils.lua `strip_uri_args`, kong/tools/uri.lua): escapes of
//! characters that are not reserved decoded, escapes of reserved ones kept
//! with upper-case digits, dot segments removed and slashes merged.

use std::borrow::Cow;

use super::path_escapes::recoded;

/// Characters RFC 3986 reserves, which Kong keeps escaped (plus `%`).
const RESERVED: &[u8] = b"!*'();:@&=+$,/?%#[]";

/// `path` (up to its query) as Kong's router reads it; bytes that are not
/// UTF-8 once decoded read as U+FFFD. Borrowed when there is nothing to
/// normalise.
pub fn kong_path(path: &str) -> Cow<'_, str> {
    let raw = path.as_bytes();
    if raw.is_empty() || raw == b"/" {
        return Cow::Borrowed(path);
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
        true => Cow::Borrowed(path),
        false => Cow::Owned(String::from_utf8_lossy(&normalised).into_owned()),
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
            (
                "/%C3%A4/a/%2e./a%2E//a/%2e/./a/../a/%2e%2E/%5f%99%af%2f%2F",
                "/ä/a./a/_\u{fffd}\u{fffd}%2F%2F",
            ),
            // A `%` without two hex digits stays; decoding is one pass.
            ("/a%zz/%2", "/a%zz/%2"),
            ("/a%252e", "/a%252e"),
            ("/api/x/../search", "/api/search"),
            ("/.hidden/a..b/", "/.hidden/a..b/"),
        ] {
            assert_eq!(kong_path(path), read, "{path}");
        }
    }

    #[test]
    fn a_path_with_nothing_to_normalise_is_borrowed() {
        for path in ["/api/users/7", "/a.b/c", "/a-b_c~d"] {
            assert!(matches!(kong_path(path), Cow::Borrowed(p) if p == path));
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
                proptest::prop_assert_eq!(kong_path(&path), path.as_str());
            }
            let once = kong_path(&path).into_owned();
            if !once.contains('%') {
                proptest::prop_assert_eq!(kong_path(&once), once.as_str());
            }
        }
    }
}
