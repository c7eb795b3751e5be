//! Route regexes for PCRE without UTF mode, as nginx (`ngx_regex_compile`)
//! and HAProxy (`regex_comp`) compile them: a pattern is matched against the
//! bytes of the path, and `\x{..}` above `\x{ff}` is refused
//! (`pcre2_compile() failed: character code point value in \x{} or \o{} is
//! too large`), while `\x{80}`..`\x{ff}` match one byte, not the character's
//! UTF-8 encoding that `$uri` and `path` hold.
//!
//! A policy's route is a Rust regex, read as Unicode text. Each non-ASCII
//! character it names by an escape (`\x{200b}`, which the routes rlctl writes
//! use for hidden characters, `\xad`, `\u{..}`, `\U..`) is written as the
//! bytes of its UTF-8 encoding (`\xE2\x80\x8B`); a non-ASCII character, escaped
//! or not, that a repetition follows is grouped (`(?:\xC3\xA9)+`), as the
//! repetition would otherwise take its last byte alone. A non-ASCII
//! character inside a class (`[é]`) is refused: a class takes one byte there.
//! Everything else is copied as written.

/// `route` (a Rust regex) as PCRE without UTF mode matches it on the UTF-8
/// bytes of a path; an error says why it cannot be.
pub fn translate(route: &str) -> Result<String, String> {
    let mut out = String::with_capacity(route.len());
    let mut rest = route;
    let mut class_depth = 0usize;
    while let Some(c) = rest.chars().next() {
        let (atom, len) = match c {
            '\\' => escape(rest)?,
            c => (Atom::Char(c), c.len_utf8()),
        };
        rest = &rest[len..];
        let text = &route[route.len() - rest.len() - len..route.len() - rest.len()];
        match atom {
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
            Atom::Char('[') if text == "[" => {
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
            Atom::Char(']') if text == "]" && class_depth > 0 => {
                class_depth -= 1;
                out.push(']');
            }
            _ => out.push_str(text),
        }
    }
    Ok(out)
}

/// What one piece of a route stands for: a character (written or escaped),
/// or any other escape (`\d`, `\.`), copied as written.
enum Atom {
    Char(char),
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
            (r"^/z\x{200b}w$", r"^/z\xE2\x80\x8Bw$"),
            (r"^/a\x{ad}b$", r"^/a\xC2\xADb$"),
            (r"^/a\xadb$", r"^/a\xC2\xADb$"),
            (
                r"^/a\u00adb\u{ad}\U000000AD$",
                r"^/a\xC2\xADb\xC2\xAD\xC2\xAD$",
            ),
            ("^/café$", r"^/caf\xC3\xA9$"),
            ("^/caé+$", r"^/ca(?:\xC3\xA9)+$"),
            (r"^/ca\x{e9}{2,}$", r"^/ca(?:\xC3\xA9){2,}$"),
            // ASCII and other escapes stay as written.
            (r"^/a\x41\.[^/]+\d$", r"^/a\x41\.[^/]+\d$"),
            (r"^/[]a]\x{2f}$", r"^/[]a]\x{2f}$"),
            (r"^/[^]\]]$", r"^/[^]\]]$"),
        ] {
            assert_eq!(translate(route).as_deref(), Ok(written), "{route}");
        }
    }

    #[test]
    fn a_class_holding_a_non_ascii_character_is_refused() {
        for route in [r"^/[é]$", r"^/[a\x{200b}]$", r"^/[]é]$", r"^/[[:alpha:]é]$"] {
            let error = translate(route).unwrap_err();
            assert!(error.contains("class"), "{route}: {error}");
        }
        assert!(translate(r"^/[a]é$").is_ok());
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
            let Ok(written) = translate(&route) else { return Ok(()) };
            let bytes = regex::bytes::RegexBuilder::new(&written)
                .unicode(false)
                .build()
                .unwrap();
            proptest::prop_assert_eq!(
                bytes.is_match(path.as_bytes()),
                text.is_match(&path),
                "{} as {}", route, written
            );
        }
    }
}
