//! A logged path as a route regex that gateways reading the path decoded
//! match too. nginx (`$uri`) and Traefik (`PathRegexp`) match the decoded
//! path, Kong decodes only unreserved characters, and rlctl's own replay
//! reads the path as logged: a route of `^/percent%20x$` never fires in
//! nginx, which sees `/percent x`. So each `%XX` escape of the path matches
//! itself in either hex case and the character it decodes to.

use std::fmt::Write;

use super::escape::regex_literal;

/// `path` as a regex matching it literally ([`regex_literal`]), but each
/// `%XX` escape (with those of the other UTF-8 bytes of its character)
/// matches the escapes in either hex case or the character they decode to:
/// `/percent%20x` is `/percent(?:%20| )x`, `/caf%C3%A9` is
/// `/caf(?:%[cC]3%[aA]9|é)`. An escape of a byte that is no character on its
/// own (`%E9`) matches only as an escape (`%[eE]9`). A path without `%` gives
/// what [`regex_literal`] gives.
pub fn literal(path: &str) -> String {
    if !path.contains('%') {
        return regex_literal(path);
    }
    let b = path.as_bytes();
    let mut out = String::with_capacity(path.len() + 16);
    // The text before `i` not yet written starts at `plain`.
    let (mut plain, mut i) = (0, 0);
    while i < b.len() {
        let Some((end, decoded)) = escaped_char(b, i) else {
            i += 1;
            continue;
        };
        out.push_str(&regex_literal(&path[plain..i]));
        let escapes = either_case(&path[i..end]);
        match decoded {
            Some(c) => {
                let _ = write!(
                    out,
                    "(?:{escapes}|{})",
                    regex_literal(c.encode_utf8(&mut [0; 4]))
                );
            }
            None => out.push_str(&escapes),
        }
        (plain, i) = (end, end);
    }
    out.push_str(&regex_literal(&path[plain..]));
    out
}

/// Whether `path` is UTF-8 once its `%XX` escapes are decoded, and held no
/// byte that was not (read as U+FFFD): the paths a route can be written for.
/// nginx's `$uri` holds `/%FF` as the byte 0xFF, which no route regex
/// rlctl writes matches, and Kong answers such a path 404 itself.
pub fn decodes_to_text(path: &str) -> bool {
    if path.contains(char::REPLACEMENT_CHARACTER) {
        return false;
    }
    let (b, mut i) = (path.as_bytes(), 0);
    while i < b.len() {
        i = match escaped_char(b, i) {
            Some((_, None)) => return false,
            Some((end, Some(_))) => end,
            None => i + 1,
        };
    }
    true
}

/// The byte the escape `%XX` at `i` of `b` stands for, if one starts there.
fn escaped_byte(b: &[u8], i: usize) -> Option<u8> {
    match b.get(i..i + 3)? {
        [b'%', hi, lo] => {
            let digit = |d: u8| (d as char).to_digit(16);
            Some((digit(*hi)? * 16 + digit(*lo)?) as u8)
        }
        _ => None,
    }
}

/// The escapes of one character starting at `i` of `b` (a `%XX` and those
/// of the other bytes of its UTF-8 sequence): where they end, and the
/// character (`None`: the first escape alone, a byte that is no character).
fn escaped_char(b: &[u8], i: usize) -> Option<(usize, Option<char>)> {
    let lead = escaped_byte(b, i)?;
    let len = match lead {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Some((i + 3, None)),
    };
    let bytes: Option<Vec<u8>> = (0..len).map(|k| escaped_byte(b, i + 3 * k)).collect();
    match bytes.as_deref().map(std::str::from_utf8) {
        Some(Ok(text)) => Some((i + 3 * len, text.chars().next())),
        _ => Some((i + 3, None)),
    }
}

/// Escapes `%XX...` with each hex letter matching either case: `%2[fF]`.
fn either_case(escapes: &str) -> String {
    let mut out = String::with_capacity(escapes.len() * 2);
    for c in escapes.chars() {
        match c.is_ascii_alphabetic() {
            true => {
                let _ = write!(
                    out,
                    "[{}{}]",
                    c.to_ascii_lowercase(),
                    c.to_ascii_uppercase()
                );
            }
            false => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the anchored regex of `path` matches each of `paths`.
    fn matches(path: &str, paths: &[&str]) -> Vec<bool> {
        let re = regex::Regex::new(&format!("^{}$", literal(path))).unwrap();
        paths.iter().map(|p| re.is_match(p)).collect()
    }

    #[test]
    fn an_escape_matches_as_logged_in_either_case_and_decoded() {
        assert_eq!(literal("/percent%20x"), "/percent(?:%20| )x");
        assert_eq!(
            matches(
                "/percent%20x",
                &["/percent%20x", "/percent x", "/percentQx"]
            ),
            [true, true, false]
        );
        assert_eq!(literal("/a%2Fb"), "/a(?:%2[fF]|/)b");
        assert_eq!(
            matches("/a%2fb", &["/a%2Fb", "/a%2fb", "/a/b", "/a%2Xb"]),
            [true, true, true, false]
        );
        // Decoded characters are literal: `%2E` is a dot, not any character.
        assert_eq!(literal("/a%2E"), r"/a(?:%2[eE]|\.)");
        assert_eq!(literal("/a%0A"), r"/a(?:%0[aA]|\x{a})");
    }

    #[test]
    fn a_utf8_sequence_matches_its_character_and_a_stray_byte_only_escaped() {
        assert_eq!(literal("/caf%C3%A9"), "/caf(?:%[cC]3%[aA]9|é)");
        assert_eq!(
            matches(
                "/caf%c3%a9",
                &["/caf%C3%A9", "/caf%c3%A9", "/café", "/cafe"]
            ),
            [true, true, true, false]
        );
        assert_eq!(literal("/%E9x"), "/%[eE]9x");
        assert_eq!(literal("/%C3%41"), "/%[cC]3(?:%41|A)");
        assert_eq!(literal("/%F0%9F%98"), "/%[fF]0%9[fF]%98");
        assert_eq!(
            matches("/%F0%9F%98%80", &["/%f0%9f%98%80", "/😀"]),
            [true, true]
        );
    }

    #[test]
    fn paths_that_are_no_text_once_decoded_are_told() {
        use super::decodes_to_text;
        for path in [
            "/a",
            "/caf%C3%A9",
            "/caf\u{e9}",
            "/%20x",
            "/100%",
            "/%zz",
            "/%E2%82%AC",
        ] {
            assert!(decodes_to_text(path), "{path}");
        }
        for path in [
            "/%FF%FE",
            "/caf%C3",
            "/%E9t%E9",
            "/a\u{fffd}b",
            "/%C3%A9%80",
        ] {
            assert!(!decodes_to_text(path), "{path}");
        }
    }

    #[test]
    fn paths_without_an_escape_are_as_regex_literal_writes_them() {
        for path in [
            "/api/orders",
            "/a.b+(c)",
            "/g\x1b[2J",
            "/100%",
            "/%zz/%4",
            "/%",
        ] {
            assert_eq!(literal(path), regex_literal(path), "{path}");
        }
    }
}
