//! nginx's `$uri`: the path decoded and normalised by
//! `ngx_http_parse_complex_uri` (nginx's src/http/ngx_http_parse.c), ported
//! for Linux with `merge_slashes on` (the default).

use std::borrow::Cow;

use super::path_escapes::hex;
use crate::ingest::KeptPaths;

/// Where `ngx_http_parse_complex_uri` is in a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Usual,
    Slash,
    Dot,
    DotDot,
    Quoted,
    QuotedSecond,
}

/// `path` (a request's path, up to its query) as nginx's `$uri`, or `None`
/// where nginx answers 400; bytes that are not UTF-8 once decoded read as
/// U+FFFD. A port of `ngx_http_parse_complex_uri` on Linux with
/// `merge_slashes on`. A target not starting with `/` (`x`, `*`) is
/// answered 400 by `ngx_http_parse_request_line`, and so is an empty one
/// (nginx logs `""` for a connection closed before its request line) and
/// one with a space or a control byte.
pub fn nginx_uri(path: &str) -> Option<Cow<'_, str>> {
    let raw = path.as_bytes();
    if raw.first() != Some(&b'/') {
        return None;
    }
    // No escape, `#`, `//` or dot segment: `$uri` is the path itself.
    if !KeptPaths::may_read_otherwise(raw) {
        return Some(Cow::Borrowed(path));
    }
    // Since 1.21.1 `ngx_http_parse_request_line` answers 400 to a space or
    // a control byte in the target (as logged: a space is logged as sent,
    // the others as `\xHH`, which no path holds unless another server wrote
    // the log).
    if raw.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return None;
    }
    let mut u: Vec<u8> = Vec::with_capacity(raw.len());
    let (mut state, mut quoted_state) = (State::Usual, State::Usual);
    let mut decoded = 0u8;
    let mut p = 0;
    // `None` past the end: what ends the path there.
    let next = |p: &mut usize| {
        let ch = raw.get(*p).copied();
        *p += 1;
        ch
    };
    let mut ch = next(&mut p);
    while let Some(c) = ch {
        let mut advance = true;
        match state {
            State::Usual => match c {
                b'/' => {
                    state = State::Slash;
                    u.push(c);
                }
                b'%' => (quoted_state, state) = (state, State::Quoted),
                b'#' => break,
                _ => u.push(c),
            },
            State::Slash => match c {
                b'/' => {}
                b'.' => {
                    state = State::Dot;
                    u.push(c);
                }
                b'%' => (quoted_state, state) = (state, State::Quoted),
                b'#' => break,
                _ => {
                    state = State::Usual;
                    u.push(c);
                }
            },
            State::Dot => match c {
                b'/' => {
                    state = State::Slash;
                    u.pop();
                }
                b'.' => {
                    state = State::DotDot;
                    u.push(c);
                }
                b'%' => (quoted_state, state) = (state, State::Quoted),
                b'#' => {
                    u.pop();
                    return Some(text(u));
                }
                _ => {
                    state = State::Usual;
                    u.push(c);
                }
            },
            State::DotDot => match c {
                b'/' | b'#' => {
                    up_one(&mut u)?;
                    if c == b'#' {
                        return Some(text(u));
                    }
                    state = State::Slash;
                }
                b'%' => (quoted_state, state) = (state, State::Quoted),
                _ => {
                    state = State::Usual;
                    u.push(c);
                }
            },
            State::Quoted => {
                decoded = hex(c)?;
                state = State::QuotedSecond;
            }
            State::QuotedSecond => {
                let low = hex(c)?;
                let byte = (decoded << 4) + low;
                // nginx keeps a decoded `%` and `#` (second digit a digit)
                // and `?` (second digit a letter) as plain bytes, refuses
                // a decoded NUL, and reads any other byte again in the state
                // before the escape.
                let keep = match c.is_ascii_digit() {
                    true => byte == b'%' || byte == b'#',
                    false => byte == b'?',
                };
                if keep {
                    state = State::Usual;
                    u.push(byte);
                } else if byte == 0 && c.is_ascii_digit() {
                    return None;
                } else {
                    state = quoted_state;
                    ch = Some(byte);
                    advance = false;
                }
            }
        }
        if advance {
            ch = next(&mut p);
        }
    }
    match state {
        State::Quoted | State::QuotedSecond if ch.is_none() => return None,
        State::Dot if ch.is_none() => {
            u.pop();
        }
        State::DotDot if ch.is_none() => up_one(&mut u)?,
        _ => {}
    }
    Some(text(u))
}

/// Drops the segment before a `/..` that `u` ends with and the `/..`, back to
/// the slash before that segment (kept); `None` above the root (nginx: 400).
fn up_one(u: &mut Vec<u8>) -> Option<()> {
    // `u` ends `/..`: the slash before the segment it leaves.
    let end = u.len().checked_sub(4)?;
    let slash = u[..=end].iter().rposition(|&b| b == b'/')?;
    u.truncate(slash + 1);
    Some(())
}

fn text(u: Vec<u8>) -> Cow<'static, str> {
    Cow::Owned(match String::from_utf8(u) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_uri_decodes_merges_and_resolves_as_nginx_does() {
        for (path, uri) in [
            ("/api/search", Some("/api/search")),
            ("/api//search", Some("/api/search")),
            ("//api///search/", Some("/api/search/")),
            ("/api/%73earch", Some("/api/search")),
            ("/api%2Fsearch", Some("/api/search")),
            ("/api%2f%2fsearch", Some("/api/search")),
            ("/a/./b/.", Some("/a/b/")),
            ("/a/b/../c", Some("/a/c")),
            ("/a/b/..", Some("/a/")),
            ("/a/%2e%2E/c", Some("/c")),
            ("/a/.b/..c", Some("/a/.b/..c")),
            // Decoded `%`, `#` and `?` are kept as bytes.
            ("/100%25", Some("/100%")),
            ("/a%23b", Some("/a#b")),
            ("/a%3Fb", Some("/a?b")),
            ("/a%3fb", Some("/a?b")),
            ("/%2e%2e%2fx", None),
            ("/a+b", Some("/a+b")),
            ("/caf%C3%A9", Some("/café")),
            ("/%ff", Some("/\u{fffd}")),
            // 400 in nginx: bad escapes, NUL, above the root.
            ("/a%zz", None),
            ("/a%4", None),
            ("/a%", None),
            ("/a%00", None),
            ("/..", None),
            ("/a/../..", None),
            ("/%2e%2e/x", None),
        ] {
            assert_eq!(nginx_uri(path).as_deref(), uri, "{path}");
        }
    }

    proptest::proptest! {
        /// Paths of escapes, slashes and dots: `$uri` starts with `/` and
        /// holds no `//` and no `.` or `..` segment (a decoded `%2F` is a
        /// slash like any other), and a path without them is its own `$uri`.
        #[test]
        fn uri_is_merged_and_resolved(
            path in "/(/|\\.|a|%|2|e|E|f|F|5|3|#|\\?){0,16}",
        ) {
            let Some(uri) = nginx_uri(&path) else { return Ok(()) };
            proptest::prop_assert!(uri.starts_with('/') && !uri.contains("//"), "{} -> {}", path, uri);
            let segments: Vec<&str> = uri.split('/').collect();
            for (i, segment) in segments.iter().enumerate() {
                let dots = *segment == "." || *segment == "..";
                proptest::prop_assert!(!dots, "{} -> {} (segment {})", path, uri, i);
            }
            if !crate::ingest::KeptPaths::may_read_otherwise(path.as_bytes()) {
                proptest::prop_assert_eq!(uri.as_ref(), path.as_str());
            }
        }
    }
}
