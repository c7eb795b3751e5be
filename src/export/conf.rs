//! The shared emitter of the line-based exporters (nginx.conf, haproxy.cfg):
//! a [`Conf`] written line by line with `#` comments, nesting and braced
//! blocks, plus the comment head every text and YAML export starts with.
//!
//! It owns layout only (indentation, comment markers, escaping of comment
//! text through [`super::comment_block`]); what a line says is the exporter's.

use super::{comment_block, header_advice};
use crate::policy::CheckedRule;

/// A configuration file written line by line at a nesting depth.
#[derive(Debug, Clone, Default)]
pub struct Conf {
    out: String,
    depth: usize,
    unit: &'static str,
}

impl Conf {
    /// An empty file whose nesting indents by `unit` per level.
    pub fn new(unit: &'static str) -> Conf {
        Conf {
            out: String::new(),
            depth: 0,
            unit,
        }
    }

    fn indent(&self) -> String {
        self.unit.repeat(self.depth)
    }

    /// One line at the current depth.
    pub fn line(&mut self, text: impl AsRef<str>) -> &mut Conf {
        let indent = self.indent();
        self.out.push_str(&indent);
        self.out.push_str(text.as_ref());
        self.out.push('\n');
        self
    }

    /// An empty line.
    pub fn blank(&mut self) -> &mut Conf {
        self.out.push('\n');
        self
    }

    /// `# ` comment lines at the current depth (escaped; an empty line is a bare `#`).
    pub fn comments(&mut self, lines: &[String]) -> &mut Conf {
        let prefix = format!("{}# ", self.indent());
        self.out.push_str(&comment_block(&prefix, lines));
        self
    }

    /// One `# ` comment line at the current depth.
    pub fn comment(&mut self, line: impl Into<String>) -> &mut Conf {
        self.comments(&[line.into()])
    }

    /// Lines written by `body` one level deeper.
    pub fn nested(&mut self, body: impl FnOnce(&mut Conf)) -> &mut Conf {
        self.depth += 1;
        body(self);
        self.depth -= 1;
        self
    }

    /// `head {`, the lines of `body` one level deeper, `}`.
    pub fn block(&mut self, head: &str, body: impl FnOnce(&mut Conf)) -> &mut Conf {
        self.line(format!("{head} {{"));
        self.nested(body);
        self.line("}")
    }

    /// The lines of `other` (written at depth 0) at the current depth.
    pub fn append(&mut self, other: &Conf) -> &mut Conf {
        for line in other.out.lines() {
            if line.is_empty() {
                self.blank();
            } else {
                self.line(line);
            }
        }
        self
    }

    /// The text written so far.
    /// The text so far.
    pub fn text(&self) -> &str {
        &self.out
    }

    pub fn finish(self) -> String {
        self.out
    }
}

/// The comment head of an export: `intro` lines, an empty line, then
/// `headers_intro` and one `  name: advice` line per rule ([`header_advice`]).
pub fn head(intro: &[&str], headers_intro: &[&str], rules: &[CheckedRule]) -> Vec<String> {
    let mut lines: Vec<String> = intro.iter().map(|l| l.to_string()).collect();
    lines.push(String::new());
    lines.extend(headers_intro.iter().map(|l| l.to_string()));
    lines.extend(
        rules
            .iter()
            .map(|r| format!("  {}: {}", r.name, header_advice(r))),
    );
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_blocks_and_comments_indent_by_the_unit() {
        let mut conf = Conf::new("    ");
        conf.comment("a\nb").block("map $a $b", |c| {
            c.line("x y;").comments(&["".into(), "z".into()]);
        });
        conf.blank().line("end;");
        assert_eq!(
            conf.finish(),
            "# a\\nb\nmap $a $b {\n    x y;\n    #\n    # z\n}\n\nend;\n"
        );
    }

    #[test]
    fn the_head_ends_with_one_header_line_per_rule() {
        let rules = crate::policy::Policy::parse(
            "[[rule]]\nname='a'\nlimit='5/1m'\n[[rule]]\nname='b'\nlimit='2/s'",
            "p",
        )
        .unwrap();
        assert_eq!(
            head(&["x", "y"], &["Headers:"], &rules),
            [
                "x",
                "y",
                "",
                "Headers:",
                "  a: RateLimit-Policy: 5;w=60  X-RateLimit-Limit: 5",
                "  b: RateLimit-Policy: 2;w=1  X-RateLimit-Limit: 2",
            ]
        );
    }

    #[test]
    fn appended_lines_take_the_current_depth() {
        let mut inner = Conf::new("  ");
        inner.line("a").blank().nested(|c| {
            c.line("b");
        });
        let mut outer = Conf::new("  ");
        outer.nested(|c| {
            c.append(&inner);
        });
        assert_eq!(outer.finish(), "  a\n\n    b\n");
    }
}
