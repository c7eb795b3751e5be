//! The routes file (`--write-routes FILE`, `--routes FILE`): one path template
//! per line, `#` starts a comment, blank lines are ignored.
//!
//! ```text
//! # rlctl routes: path templates, first match by precedence
//! /api/orders/:id          # 4112 paths, e.g. /api/orders/4f9c2a1e
//! /api/orders/search
//! /static/app.:hash.js     # 310 paths, e.g. /static/app.206277e0.js
//! ```

use std::fmt::Write;

use super::template::Template;

/// Longest line accepted (a template is a path; paths are short).
pub const MAX_LINE: usize = 4096;

/// A line of a routes file that is not a template.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}:{line}: {message}")]
pub struct RoutesError {
    pub origin: String,
    pub line: usize,
    pub message: String,
}

/// Parses a routes file (`origin` names it in messages).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Template>, RoutesError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let fail = |message: String| RoutesError {
            origin: origin.to_string(),
            line: i + 1,
            message,
        };
        if raw.len() > MAX_LINE {
            return Err(fail(format!("line longer than {MAX_LINE} bytes")));
        }
        let line = raw.split('#').next().unwrap_or_default().trim();
        if line.is_empty() {
            continue;
        }
        out.push(Template::parse(line).map_err(fail)?);
    }
    Ok(out)
}

/// One line to write: a template and an optional note after it.
pub struct Line<'a> {
    pub template: &'a Template,
    pub note: Option<String>,
}

/// The text of a routes file (notes are written as comments; `#` and line
/// breaks in them are replaced so the file always parses back).
pub fn format(header: &[&str], lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for h in header {
        let _ = writeln!(out, "# {}", clean(h));
    }
    let width = lines
        .iter()
        .map(|l| l.template.to_string().len())
        .max()
        .unwrap_or(0);
    for l in lines {
        let t = l.template.to_string();
        match &l.note {
            Some(note) => {
                let _ = writeln!(out, "{t:<width$}  # {}", clean(note));
            }
            None => {
                let _ = writeln!(out, "{t}");
            }
        }
    }
    out
}

fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blanks_are_skipped_and_errors_carry_the_line() {
        let t = parse("# header\n\n/api/orders/:id  # note\n/a\n", "r.txt").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].to_string(), "/api/orders/:id");
        let e = parse("/a\nno-slash\n", "r.txt").unwrap_err();
        assert_eq!((e.line, e.origin.as_str()), (2, "r.txt"));
        assert!(e.to_string().starts_with("r.txt:2: "), "{e}");
    }

    proptest::proptest! {
        #[test]
        fn parse_never_panics(text in "[/a-z:.#\\n ?_0-9\u{e9}-]{0,80}") {
            let _ = parse(&text, "x");
        }

        #[test]
        fn written_templates_parse_back(
            segments in proptest::collection::vec("(:[a-z]{1,3}|[a-z0-9.]{0,4}(:[a-z]{1,3})?[a-z0-9.-]{0,3})", 0..5),
            note in "[ -~\u{e9}\\n#]{0,20}"
        ) {
            let text = format!("/{}", segments.join("/"));
            let template = Template::parse(&text).unwrap();
            let written = format(&["routes", "a #hash\nline"], &[Line { template: &template, note: Some(note) }]);
            let back = parse(&written, "x").unwrap();
            proptest::prop_assert_eq!(back, vec![template]);
        }
    }
}
