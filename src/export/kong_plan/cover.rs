//! Whether one route regex certainly matches every path another does: what
//! the Kong plan needs to say that a route Kong takes first leaves a later
//! one nothing ([`super::Plan::taken_first`]). It claims only what is
//! certain, from literal anchored prefixes; any other pair is not claimed.

/// Whether route regex `outer` certainly matches every path that `inner`
/// matches (`None`: every path): they are the same, or `outer` is a literal
/// anchored prefix (`^/api/`) that begins `inner`'s literal anchored prefix
/// (`^/api/search$`, `^/api/v[12]`). Any other pair is not claimed.
pub fn path_covers(outer: Option<&str>, inner: Option<&str>) -> bool {
    let (Some(outer), Some(inner)) = (outer, inner) else {
        return outer.is_none();
    };
    if outer == inner {
        return true;
    }
    let Some(outer_prefix) = literal_prefix(outer).filter(|p| p.whole) else {
        return false;
    };
    literal_prefix(inner).is_some_and(|p| p.text.starts_with(&outer_prefix.text))
}

/// The text every match of an anchored regex starts with, and whether the
/// regex is that text and nothing more.
struct LiteralPrefix {
    text: String,
    whole: bool,
}

/// The characters whose escape (`\.`) is the character itself in every
/// regex engine a route meets.
const ESCAPED_LITERALS: &str = "\\.+*?()|[]{}^$/-";

/// The literal prefix of `regex` when it starts with `^` and has no `|` out
/// of a group or a class (an alternative would not start with it).
fn literal_prefix(regex: &str) -> Option<LiteralPrefix> {
    let body = regex.strip_prefix('^')?;
    if has_top_level_bar(body) {
        return None;
    }
    let mut text = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        let literal = match c {
            // Only an escaped metacharacter is sure to be itself: `\<` and
            // `\>` are word boundaries to the regex crate (and so to Kong's
            // atc-router), `\d` a class.
            '\\' => match chars.next() {
                Some(d) if ESCAPED_LITERALS.contains(d) => d,
                _ => break,
            },
            '.' | '[' | '(' | ')' | '{' | '}' | '$' | '^' | '|' | '*' | '?' | '+' => break,
            c => c,
        };
        // A character before one of these quantifiers may be absent.
        if matches!(chars.peek(), Some('*' | '?' | '{')) {
            break;
        }
        text.push(literal);
        if chars.peek().is_none() {
            return Some(LiteralPrefix { text, whole: true });
        }
    }
    Some(LiteralPrefix { text, whole: false })
}

/// Whether `body` has a `|` outside every group and class.
fn has_top_level_bar(body: &str) -> bool {
    let (mut depth, mut class, mut escaped) = (0usize, false, false);
    for c in body.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ']' if class => class = false,
            _ if class => {}
            '[' => class = true,
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever pair of regexes `path_covers` claims, no path matches
        /// the inner one and not the outer one.
        #[test]
        fn path_covers_claims_nothing_false(
            outer in proptest::collection::vec(piece(), 0..5),
            inner in proptest::collection::vec(piece(), 0..6),
            anchored in proptest::bool::weighted(0.8),
            paths in proptest::collection::vec("[/abx.<]{0,8}", 64),
        ) {
            let text = |pieces: &[usize]| pieces.iter().map(|&i| PIECES[i]).collect::<String>();
            let anchor = if anchored { "^" } else { "" };
            let (outer, inner) = (format!("^{}", text(&outer)), format!("{anchor}{}", text(&inner)));
            let (Ok(o), Ok(i)) = (regex::Regex::new(&outer), regex::Regex::new(&inner)) else {
                return Ok(());
            };
            if path_covers(Some(&outer), Some(&inner)) {
                for path in paths.iter().filter(|p| i.is_match(p)) {
                    proptest::prop_assert!(o.is_match(path), "{outer} misses {path:?} that {inner} matches");
                }
            }
        }
    }

    /// Pieces of route regexes: the literal ones first, and drawn most often.
    const PIECES: [&str; 17] = [
        "/", "a", "b", "x", "<", "\\.", "/a", "^", ".", "?", "*", "$", "(a|b)", "|", "[ab]", "\\<",
        "\\b",
    ];

    fn piece() -> impl proptest::strategy::Strategy<Value = usize> {
        proptest::prop_oneof![4 => 0..7usize, 1 => 0..PIECES.len()]
    }

    #[test]
    fn path_covers_only_what_it_is_sure_of() {
        let covers = |outer: &str, inner: &str| path_covers(Some(outer), Some(inner));
        assert!(path_covers(None, Some("^/a")));
        assert!(!path_covers(Some("^/a"), None));
        assert!(covers("^/api/", "^/api/search$"));
        assert!(covers("^/api", "^/api$"));
        assert!(covers("^/a\\.b", "^/a\\.b/c"));
        assert!(covers("^/api/", "^/api/(a|b)"));
        assert!(covers("a|b", "a|b"), "the same regex");
        assert!(
            !covers("^/api/", "^/api/a|^/other"),
            "an alternative elsewhere"
        );
        assert!(!covers("^/api/x", "^/api/x?"), "x may be absent");
        assert!(!covers("^/api/x", "^/api/x{0,1}"));
        assert!(
            !covers("^/api$", "^/api$x"),
            "the outer is not a bare prefix"
        );
        assert!(
            !covers("/api", "^/api/x"),
            "an unanchored outer is not claimed"
        );
        assert!(!covers("^/a.", "^/ab"), "a dot is no literal");
        assert!(!covers("^/api/", "/api/x"));
        assert!(!covers("^/api/\\d", "^/api/\\d1"));
        // Found by review: `\<` is a word boundary, not `<`.
        assert!(!covers("^/v1/<", "^/v1/\\<x"));
        assert!(!covers("^/a/\\>", "^/a/>x"));
        assert!(covers("^/a\\/", "^/a\\/b"));
    }
}
