//! The routes file (`--write-routes FILE`, `--routes FILE`): one path template
//! per line, `#` starts a comment, blank lines are ignored.
//!
//! ```text
//! # rlctl routes: path templates, first match by precedence
//! /api/orders/:id          # 4112 paths, e.g. /api/orders/4f9c2a1e
//! /api/orders/search
//! /static/app.:hash.js     # 310 paths, e.g. /static/app.206277e0.js
//! /v1/jobs\:cancel           # a colon of its own: a literal segment
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
/// breaks in them are replaced so the file always parses back). A template
/// whose text a line cannot carry (white space, a control character, `?` or
/// `#`: paths from hostile or malformed logs) is left out, and the header
/// says how many were.
pub fn format(header: &[&str], lines: &[Line<'_>]) -> String {
    let mut out = String::new();
    for h in header {
        let _ = writeln!(out, "# {}", clean(h));
    }
    let (lines, left_out): (Vec<&Line<'_>>, Vec<&Line<'_>>) =
        lines.iter().partition(|l| writable(l.template));
    if !left_out.is_empty() {
        let _ = writeln!(
            out,
            "# {} template(s) left out: their paths hold white space, control characters, `?` or `#`, which a line of this file cannot carry.",
            left_out.len()
        );
    }
    let width = lines
        .iter()
        .map(|l| l.template.line().len())
        .max()
        .unwrap_or(0);
    for l in lines {
        let t = l.template.line();
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

/// Whether `template` written on a line reads back as itself, and shows as
/// itself in a terminal.
fn writable(template: &Template) -> bool {
    let text = template.line();
    !text.chars().any(char::is_control)
        && parse(&text, "").is_ok_and(|back| back.as_slice() == std::slice::from_ref(template))
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

    #[test]
    fn templates_a_line_cannot_carry_are_left_out_and_counted() {
        // Found by review: a path with an escape sequence or a line break
        // from a hostile log went into the file as it was.
        let texts = ["/ok/:id", "/a\u{1b}[2Jb", "/n\nl", "/x#y", "/t "];
        // As discovery makes them: literal segments where the text does not parse.
        let template = |t: &str| {
            Template::parse(t).unwrap_or_else(|_| Template {
                segments: t[1..]
                    .split('/')
                    .map(|s| crate::discover::template::Segment::Literal(s.into()))
                    .collect(),
            })
        };
        let templates: Vec<Template> = texts.iter().map(|t| template(t)).collect();
        let lines: Vec<Line<'_>> = templates
            .iter()
            .map(|template| Line {
                template,
                note: None,
            })
            .collect();
        let written = format(&["routes"], &lines);
        assert!(written.contains("# 4 template(s) left out"), "{written}");
        assert!(
            !written.chars().any(|c| c.is_control() && c != '\n'),
            "{written}"
        );
        let back = parse(&written, "x").unwrap();
        assert_eq!(back, vec![templates[0].clone()]);
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
