//! Route regexes for PCRE without UTF mode, as nginx (`ngx_regex_compile`)
//! and HAProxy (`regex_comp`) compile them: a pattern is matched against the
//! bytes of the path, and `\x{..}` above `\x{ff}` is refused
//! (`pcre2_compile() failed: character code point value in \x{} or \o{} is
//! too large`), while `\x{80}`..`\x{ff}` match one byte, not the character's
//! UTF-8 encoding that `$uri` and `path` hold.
//!
//! A policy's route is a Rust regex, read as Unicode text. [`translate`]
//! writes it so that PCRE matches the bytes of a path as the route's text
//! says, wherever the two engines can agree:
//!
//! - each non-ASCII character, escaped (`\x{200b}`, which the routes rlctl
//!   writes use for hidden characters, `\xad`, `\u{..}`, `\U..`) or not, is
//!   written as the bytes of its UTF-8 encoding (`\xE2\x80\x8B`), grouped
//!   when a repetition follows (`(?:\xC3\xA9)+`), as the repetition would
//!   otherwise take its last byte alone; an ASCII `\u0041` is `\x{41}`, which
//!   PCRE reads (it refuses `\u`);
//! - a `$` that ends the text is `\z`: PCRE's `$` also matches before a final
//!   newline, which nginx's decoded `%0a` puts there (found by review: a
//!   route `^/api/search$` took `/api/search%0a` in nginx only);
//! - what only Rust's engine has is refused, with why: a non-ASCII character
//!   in a class (a class takes one byte there), nested classes and class
//!   operations (`[[a-c]]`, `&&`, `--`, `~~`; PCRE reads `[[a-c]` as a class
//!   then `]`), `\<`, `\>`, `\b{..}` and Unicode classes `\p`, `\P`.
//!
//! What stays as written reads alike in PCRE and in Rust's engine without
//! Unicode (`regex::bytes` with `unicode(false)`), which is how the nginx
//! and HAProxy replays match a route ([`bytes_matcher`]): `.`, `\w`, `\d`,
//! `\s`, `\b`, classes and `(?i)` are ASCII and byte-wise in both.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// `route` (a Rust regex) as PCRE without UTF mode matches it on the UTF-8
/// bytes of a path; an error says why it cannot be.
pub fn translate(route: &str) -> Result<String, String> {
    let mut out = String::with_capacity(route.len());
    let mut rest = route;
    let mut class_depth = 0usize;
    static FLAGS_WITH_M: OnceLock<regex::Regex> = OnceLock::new();
    let multi_line = (FLAGS_WITH_M
        .get_or_init(|| regex::Regex::new(r"\(\?[a-zA-Z]*m").expect("a valid regex")))
    .is_match(route);
    while let Some(c) = rest.chars().next() {
        let (atom, len) = match c {
            '\\' => escape(rest)?,
            c => (Atom::Char(c), c.len_utf8()),
        };
        rest = &rest[len..];
        let text = &route[route.len() - rest.len() - len..route.len() - rest.len()];
        match atom {
            Atom::Refused(what) => {
                return Err(format!(
                    "the route uses `{what}`, which nginx and HAProxy (PCRE) do not read as rlctl does; write it with plain classes (`[A-Za-z0-9_]`)"
                ));
            }
            Atom::Char(c) if !c.is_ascii() && class_depth > 0 => {
                return Err(format!(
                    "the route's class holds `{}`, which nginx and HAProxy (PCRE without UTF mode) read as bytes, a class taking one; write the character outside a class (`(?:a|é)`)",
                    c.escape_unicode()
                ));
            }
            Atom::Char(c) if !c.is_ascii() => {
                let bytes: String = c
                    .to_string()
                    .bytes()
                    .map(|b| format!("\\x{b:02X}"))
                    .collect();
                match rest.starts_with(['*', '+', '?', '{']) {
                    true => out.push_str(&format!("(?:{bytes})")),
                    false => out.push_str(&bytes),
                }
            }
            Atom::Char(c) if text != c.to_string() => {
                // An escaped ASCII character (`\u0041`): PCRE reads `\x{41}`.
                out.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
            }
            Atom::Char('[') if class_depth > 0 => match rest.find(":]") {
                Some(end) if rest.starts_with(':') => {
                    // An ASCII class (`[:alpha:]`), which both engines read.
                    out.push('[');
                    out.push_str(&rest[..end + 2]);
                    rest = &rest[end + 2..];
                }
                _ => return Err("the route nests a class in a class (`[[a-c]]`), which PCRE reads as a class and a `]`; write one class".into()),
            },
            Atom::Char('[') => {
                class_depth += 1;
                out.push('[');
                // A `]` (after a `^`) that opens a class is one of its members.
                for opener in ["^]", "]", "^"] {
                    if let Some(after) = rest.strip_prefix(opener) {
                        out.push_str(opener);
                        rest = after;
                        break;
                    }
                }
            }
            Atom::Char(']') if class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            Atom::Char(c @ ('&' | '-' | '~')) if class_depth > 0 && rest.starts_with(c) => {
                return Err(format!(
                    "the route's class uses the operation `{c}{c}`, which PCRE does not have; write the class out"
                ));
            }
            Atom::Char('$') if class_depth == 0 && !multi_line => out.push_str("\\z"),
            _ => out.push_str(text),
        }
    }
    Ok(out)
}

/// The route as nginx and HAProxy match it, on a path's bytes: its
/// [`translate`]d pattern in Rust's engine without Unicode; an error when it
/// cannot be written for them. Compiled once per route (`watch` asks for
/// each rule's again with every chunk).
pub fn bytes_matcher(route: &str) -> Result<regex::bytes::Regex, String> {
    type Compiled = HashMap<String, Result<regex::bytes::Regex, String>>;
    static COMPILED: OnceLock<Mutex<Compiled>> = OnceLock::new();
    let cache = || {
        COMPILED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    };
    if let Some(found) = cache().get(route) {
        return found.clone();
    }
    let compiled = translate(route).and_then(|written| {
        (regex::bytes::RegexBuilder::new(&written).unicode(false))
            .build()
            .map_err(|e| e.to_string())
    });
    cache().insert(route.to_string(), compiled.clone());
    compiled
}

/// What one piece of a route stands for: a character (written or escaped),
/// an escape PCRE reads otherwise, or any other escape (`\d`, `\.`), copied
/// as written.
enum Atom {
    Char(char),
    Refused(&'static str),
    Other,
}

/// The escape at the start of `text` (which starts with `\`) and its length.
fn escape(text: &str) -> Result<(Atom, usize), String> {
    let after = &text[1..];
    let Some(kind) = after.chars().next() else {
        return Ok((Atom::Other, 1));
    };
    let digits = match kind {
        'x' => 2,
        'u' => 4,
        'U' => 8,
        '<' => return Ok((Atom::Refused("\\<"), 2)),
        '>' => return Ok((Atom::Refused("\\>"), 2)),
        'p' => return Ok((Atom::Refused("\\p"), 2)),
        'P' => return Ok((Atom::Refused("\\P"), 2)),
        'b' | 'B' if after[1..].starts_with('{') => return Ok((Atom::Refused("\\b{..}"), 2)),
        other => return Ok((Atom::Other, 1 + other.len_utf8())),
    };
    let body = &after[1..];
    let (hex, len) = match body.strip_prefix('{') {
        Some(braced) => {
            let end = braced.find('}').ok_or("an escape's `{` never closes")?;
            (&braced[..end], 2 + end + 2)
        }
        None => {
            let hex = body.get(..digits).unwrap_or(body);
            (hex, 2 + hex.len())
        }
    };
    let c = u32::from_str_radix(hex, 16)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(|| format!("`\\{kind}{hex}` names no character"))?;
    Ok((Atom::Char(c), len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_ascii_characters_become_their_utf8_bytes() {
        for (route, written) in [
            (r"^/z\x{200b}w$", r"^/z\xE2\x80\x8Bw\z"),
            (r"^/a\x{ad}b$", r"^/a\xC2\xADb\z"),
            (r"^/a\xadb", r"^/a\xC2\xADb"),
            (
                r"^/a\u00adb\u{ad}\U000000AD$",
                r"^/a\xC2\xADb\xC2\xAD\xC2\xAD\z",
            ),
            ("^/café$", r"^/caf\xC3\xA9\z"),
            ("^/caé+", r"^/ca(?:\xC3\xA9)+"),
            (r"^/ca\x{e9}{2,}", r"^/ca(?:\xC3\xA9){2,}"),
            // ASCII escapes as PCRE reads them; the rest as written.
            (r"^/a\x41\u0042\.[^/]+\d", r"^/a\x{41}\x{42}\.[^/]+\d"),
            (r"^/[]a]\x{2f}[$]\$", r"^/[]a]\x{2f}[$]\$"),
            (r"^/[^]\]][[:alpha:]x]", r"^/[^]\]][[:alpha:]x]"),
            // `$` is the end of the text; not so in multi-line mode.
            (r"(?m)^/a$", r"(?m)^/a$"),
        ] {
            assert_eq!(translate(route).as_deref(), Ok(written), "{route}");
        }
    }

    #[test]
    fn what_pcre_reads_otherwise_is_refused() {
        for (route, says) in [
            (r"^/[é]$", "class"),
            (r"^/[a\x{200b}]$", "class"),
            (r"^/[]é]$", "class"),
            (r"^/[[:alpha:]é]$", "class"),
            (r"^/c/[[a-c]]$", "nests"),
            (r"^/[a-z&&[^x]]$", "&&"),
            (r"^/[a-z--c]$", "--"),
            (r"^/[a-c~~b]$", "~~"),
            (r"^/\<x", r"\<"),
            (r"^/x\>", r"\>"),
            (r"^/\b{start}x", r"\b{..}"),
            (r"^/\p{L}+$", r"\p"),
            (r"^/\PL$", r"\P"),
        ] {
            let error = translate(route).unwrap_err();
            assert!(error.contains(says), "{route}: {error}");
        }
        assert!(translate(r"^/[a]é$").is_ok());
        assert!(translate(r"^/a-b&&c~~d$").is_ok());
    }

    #[test]
    fn the_bytes_matcher_reads_as_nginx_does() {
        // Each found by review against nginx 1.22: `$` before a final
        // newline, and `\w`, `\d`, `(?i)` of non-ASCII characters.
        let matches = |route: &str, path: &[u8]| bytes_matcher(route).unwrap().is_match(path);
        assert!(!matches(r"^/api/search$", b"/api/search\n"));
        assert!(matches(r"^/api/search$", b"/api/search"));
        assert!(!matches(r"^/u/\w+$", "/u/é".as_bytes()));
        assert!(!matches(r"^/n/\d+$", "/n/\u{661}".as_bytes()));
        assert!(!matches(r"(?i)^/caf\x{e9}$", "/CAFÉ".as_bytes()));
        assert!(matches(r"(?i)^/caf\x{e9}$", "/CAFé".as_bytes()));
        assert!(!matches(r"(?i)^/kb$", "/\u{212a}b".as_bytes()));
        assert!(!matches(r"^/caf.$", "/café".as_bytes()));
    }

    proptest::proptest! {
        /// What the translated route matches on a path's bytes, as PCRE
        /// without UTF mode does (Rust's byte regex, Unicode off), is what
        /// the route matches on its text.
        #[test]
        fn the_bytes_match_as_the_text_does(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "é", r"\x{e9}", r"\x{200b}", "\u{200b}", r"\.", "/", "[a-z]", "[^é]",
                    "+", "*", "?", "{1,2}",
                ]),
                1..8,
            ),
            path in "[aé/.\u{200b}]{0,8}",
        ) {
            let route = format!("^{}$", pieces.concat());
            let Ok(text) = regex::Regex::new(&route) else { return Ok(()) };
            let Ok(bytes) = bytes_matcher(&route) else { return Ok(()) };
            proptest::prop_assert_eq!(
                bytes.is_match(path.as_bytes()),
                text.is_match(&path),
                "{} as {:?}", route, bytes
            );
        }
    }
}
