//! Route regexes as AWS WAF takes them: it refuses capturing groups
//! ("Supported regular expression syntax in AWS WAF", AWS WAF Developer
//! Guide: "AWS WAF does not support ... backreferences and capturing
//! subexpressions"), so each is written as a non-capturing group, which
//! matches the same text.

use std::borrow::Cow;
use std::convert::Infallible;

use regex_syntax::ast::{self, Ast, GroupKind, Visitor};

/// `pattern` with every capturing group (`(a)`, `(?P<n>a)`, `(?<n>a)`)
/// opened as a non-capturing one (`(?:a)`); the rest of the text is kept as
/// written. A pattern the parser refuses is given back as it is.
pub fn without_captures(pattern: &str) -> Cow<'_, str> {
    let Ok(parsed) = ast::parse::Parser::new().parse(pattern) else {
        return Cow::Borrowed(pattern);
    };
    let Ok(openings) = ast::visit(&parsed, Openings(Vec::new()));
    if openings.is_empty() {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 2 * openings.len());
    let mut copied = 0;
    for (open, inner) in openings {
        out.push_str(&pattern[copied..open]);
        out.push_str("(?:");
        copied = inner;
    }
    out.push_str(&pattern[copied..]);
    Cow::Owned(out)
}

/// Where each capturing group opens and where its inner expression starts
/// (byte offsets), in the order they open.
struct Openings(Vec<(usize, usize)>);

impl Visitor for Openings {
    type Output = Vec<(usize, usize)>;
    type Err = Infallible;

    fn finish(self) -> Result<Self::Output, Infallible> {
        Ok(self.0)
    }

    fn visit_pre(&mut self, ast: &Ast) -> Result<(), Infallible> {
        if let Ast::Group(group) = ast
            && !matches!(group.kind, GroupKind::NonCapturing(_))
        {
            let inner = group.ast.span().start.offset;
            self.0.push((group.span.start.offset, inner));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    #[test]
    fn capturing_groups_open_as_non_capturing_ones() {
        for (given, written) in [
            (r"^/api/(users|orders)/\d+$", r"^/api/(?:users|orders)/\d+$"),
            (r"^/(?P<v>v[12])/(?<k>[a-z]+)$", r"^/(?:v[12])/(?:[a-z]+)$"),
            (r"^/((a)(b))()$", r"^/(?:(?:a)(?:b))(?:)$"),
            // Kept: escaped and bracketed parentheses, groups that capture
            // nothing already, flags.
            (r"^/\(x\)[(]y[)]$", r"^/\(x\)[(]y[)]$"),
            (r"^/(?:a|b)(?i:c)(?i)d$", r"^/(?:a|b)(?i:c)(?i)d$"),
            (r"^/[()\]]+(x)", r"^/[()\]]+(?:x)"),
            ("^/é(ü)$", "^/é(?:ü)$"),
        ] {
            let out = without_captures(given);
            assert_eq!(out, written, "{given}");
            assert_eq!(Regex::new(&out).unwrap().captures_len(), 1, "{given}");
        }
    }

    #[test]
    fn in_extended_mode_the_blanks_after_an_opening_go_with_it() {
        assert_eq!(without_captures("(?x)^/( a | b )$"), "(?x)^/(?:a | b )$");
    }

    proptest::proptest! {
        /// Patterns of a few pieces, groups of every kind among them: the
        /// written one captures nothing and matches what the given one does.
        #[test]
        fn the_written_pattern_matches_the_same_paths(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "(", ")", "(?:", "(?P<n>", "(?<m>", "a", "b", "/", "|", "*", "?",
                    r"\(", r"\)", "[()]", "[^)]", ".", r"\d",
                ]),
                0..14,
            ),
            paths in proptest::collection::vec("[ab/()1]{0,8}", 1..12),
        ) {
            // Patterns the regex crate refuses (unbalanced, a name used
            // twice) are no routes.
            let given = pieces.concat();
            let Ok(original) = Regex::new(&given) else { return Ok(()) };
            let written = Regex::new(&without_captures(&given)).unwrap();
            proptest::prop_assert_eq!(written.captures_len(), 1);
            for path in &paths {
                proptest::prop_assert_eq!(original.find(path), written.find(path), "{} on {}", given, path);
            }
        }
    }
}
