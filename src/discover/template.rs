//! Path templates (`/api/orders/:id`, `/static/app.:hash.js`): their syntax,
//! how a path matches them, and the regex that matches the same paths.
//!
//! A template is `/` followed by segments separated by `/`. A segment that is
//! exactly `:NAME` (NAME: a letter or `_`, then letters, digits or `_`) is a
//! whole parameter and matches any non-empty segment. A segment holding
//! `:NAME` among other text is a pattern: each `:NAME` matches one or more
//! ASCII letters or digits, the rest matches itself. Any other segment is
//! literal. `\:` is a colon that starts no parameter: a routes file writes
//! a literal segment with a colon of its own so (`/v1/jobs\:cancel`, a
//! custom method in Google's API design, which discovery keeps by name).
//!
//! When several templates match a path, the first in precedence order wins:
//! compared segment by segment, a literal comes before a pattern, patterns
//! with more literal characters come first (then by text), and a whole
//! parameter comes last. The SQL and policy regexes are tried in that order.
//!
//! A path that is the text of a template in a set also maps to that template
//! ([`TemplateSet::find`]): `/static/app.:hash.js` does not match its own
//! pattern (`:hash` is not letters and digits), yet an endpoint already
//! named by a template must keep its name when the same routes are applied
//! again (`rlctl simulate --events` over a table `rlctl convert --routes`
//! wrote). No template before it in precedence can match that text, so this
//! never changes which template an ordinary path gets.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

use super::matcher::MatchNode;
use crate::text::{escape, path_regex};

/// One part of a pattern segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    Text(String),
    Param,
}

/// One segment of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Literal(String),
    Pattern(String),
    Whole(String),
}

impl Segment {
    /// The segment written `text` in a template.
    pub(crate) fn parse(text: &str) -> Segment {
        let parts = parts(text);
        match parts.as_slice() {
            [Part::Param] => Segment::Whole(text.to_string()),
            p if p.contains(&Part::Param) => Segment::Pattern(text.to_string()),
            [Part::Text(t)] => Segment::Literal(t.clone()),
            _ => Segment::Literal(String::new()),
        }
    }

    /// A segment of a path as discovery keeps it by name: rlctl's own
    /// parameters (a whole `:NAME` segment, which ingestion's shape rules
    /// write, and `:hash` within one) are parameters; any other colon is text
    /// (`jobs:cancel`, a custom method in Google's API design).
    pub(crate) fn of_name(name: &str) -> Segment {
        match Segment::parse(name) {
            Segment::Whole(text) => Segment::Whole(text),
            Segment::Pattern(text) if only_hash_parameters(&text) => Segment::Pattern(text),
            // The name as it is: a backslash in a path escapes nothing.
            _ => Segment::Literal(name.to_string()),
        }
    }

    /// The segment as a routes file writes it: a literal's colons that would
    /// start a parameter, or follow a backslash, written `\:`, so that the
    /// line parses back to it.
    fn line_text(&self) -> Cow<'_, str> {
        let Segment::Literal(t) = self else {
            return Cow::Borrowed(self.text());
        };
        let b = t.as_bytes();
        let escaped = |i: usize| {
            parameter_end(b, i).is_some() || (b[i] == b':' && i > 0 && b[i - 1] == b'\\')
        };
        if !(0..b.len()).any(escaped) {
            return Cow::Borrowed(t);
        }
        let mut out = String::with_capacity(t.len() + 2);
        for (i, c) in t.char_indices() {
            if escaped(i) {
                out.push('\\');
            }
            out.push(c);
        }
        Cow::Owned(out)
    }

    /// Whether the path segment `s` matches this template segment.
    pub fn matches(&self, s: &str) -> bool {
        match self {
            Segment::Literal(l) => l == s,
            Segment::Whole(_) => !s.is_empty(),
            Segment::Pattern(p) => match_parts(&parts(p), s),
        }
    }

    pub(super) fn text(&self) -> &str {
        match self {
            Segment::Literal(t) | Segment::Pattern(t) | Segment::Whole(t) => t,
        }
    }

    /// The precedence rank: (class, fewer literal characters first negated, text).
    pub(super) fn rank(&self) -> (u8, usize, &str) {
        match self {
            Segment::Literal(t) => (0, 0, t),
            Segment::Pattern(t) => {
                let literal: usize = parts(t)
                    .iter()
                    .map(|p| match p {
                        Part::Text(x) => x.len(),
                        Part::Param => 0,
                    })
                    .sum();
                (1, usize::MAX - literal, t)
            }
            Segment::Whole(_) => (2, 0, ""),
        }
    }

    /// The regex (without anchors) of the path segments this one matches,
    /// its text written by `literal`.
    fn regex(&self, literal: fn(&str) -> String) -> String {
        match self {
            Segment::Literal(t) => literal(t),
            Segment::Whole(_) => "[^/]+".into(),
            Segment::Pattern(t) => parts(t)
                .iter()
                .map(|p| match p {
                    Part::Text(x) => literal(x),
                    Part::Param => "[A-Za-z0-9]+".into(),
                })
                .collect(),
        }
    }
}

/// Splits a segment into text and `:NAME` parameters.
pub(super) fn parts(text: &str) -> Vec<Part> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut literal = String::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b':') {
            literal.push(':');
            i += 2;
        } else if let Some(j) = parameter_end(b, i) {
            if !literal.is_empty() {
                out.push(Part::Text(std::mem::take(&mut literal)));
            }
            out.push(Part::Param);
            i = j;
        } else {
            let ch = text[i..].chars().next().expect("i is on a char boundary");
            literal.push(ch);
            i += ch.len_utf8();
        }
    }
    if !literal.is_empty() {
        out.push(Part::Text(literal));
    }
    out
}

/// The end of the `:NAME` parameter starting at byte `i` of `b` (a colon,
/// then a letter or `_`, then letters, digits and `_`), if one starts there.
fn parameter_end(b: &[u8], i: usize) -> Option<usize> {
    let starts =
        b[i] == b':' && (b.get(i + 1)).is_some_and(|&n| n.is_ascii_alphabetic() || n == b'_');
    starts.then(|| {
        (i + 1..b.len())
            .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
            .unwrap_or(b.len())
    })
}

/// Whether every `:NAME` of a pattern segment (but an escaped `\:`) is `:hash`.
fn only_hash_parameters(text: &str) -> bool {
    let b = text.as_bytes();
    (0..b.len()).all(|i| {
        let escaped = i > 0 && b[i - 1] == b'\\';
        escaped || parameter_end(b, i).is_none_or(|end| &text[i + 1..end] == "hash")
    })
}

/// Whether `s` is the concatenation the parts describe (parameters: 1+ ASCII alphanumerics).
pub(super) fn match_parts(parts: &[Part], s: &str) -> bool {
    match parts.split_first() {
        None => s.is_empty(),
        Some((Part::Text(t), rest)) => s
            .strip_prefix(t.as_str())
            .is_some_and(|r| match_parts(rest, r)),
        Some((Part::Param, rest)) => {
            let run = s.bytes().take_while(u8::is_ascii_alphanumeric).count();
            (1..=run).rev().any(|n| match_parts(rest, &s[n..]))
        }
    }
}

/// A path template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pub segments: Vec<Segment>,
}

impl Template {
    /// Parses `/a/:id/b` (must start with `/`; no white space, `?` or `#`).
    pub fn parse(text: &str) -> Result<Template, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!("`{text}`: a template starts with /"));
        };
        if let Some(bad) = text
            .chars()
            .find(|c| c.is_whitespace() || matches!(c, '?' | '#'))
        {
            return Err(format!(
                "`{text}`: {bad:?} cannot appear in a path template"
            ));
        }
        Ok(Template {
            segments: rest.split('/').map(Segment::parse).collect(),
        })
    }

    /// Whether the path (no query string) matches.
    pub fn matches(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        let mut segments = rest.split('/');
        self.segments
            .iter()
            .all(|t| segments.next().is_some_and(|s| t.matches(s)))
            && segments.next().is_none()
    }

    /// The anchored route regex of a rule for this template: the same
    /// paths, each `%XX` escape of its text also matched in the other hex
    /// case and decoded, as nginx and Traefik read paths
    /// ([`path_regex::literal`]).
    pub fn regex(&self) -> String {
        self.regex_of(path_regex::literal, "$")
    }

    /// The regex matching the same paths as logged, from `^` to `end` (`$`,
    /// or `\z` where `$` would also match before a final line break).
    pub fn anchored_regex(&self, end: &str) -> String {
        self.regex_of(escape::regex_literal, end)
    }

    fn regex_of(&self, literal: fn(&str) -> String, end: &str) -> String {
        let body: Vec<String> = self.segments.iter().map(|s| s.regex(literal)).collect();
        format!("^/{}{end}", body.join("/"))
    }

    /// Precedence order (see the module documentation).
    pub fn precedence(&self, other: &Template) -> Ordering {
        for (a, b) in self.segments.iter().zip(&other.segments) {
            match a.rank().cmp(&b.rank()) {
                Ordering::Equal => continue,
                unequal => return unequal,
            }
        }
        self.segments.len().cmp(&other.segments.len())
    }

    /// Whether `path` is the text of this template (`/api/orders/:id`).
    pub fn is_text(&self, path: &str) -> bool {
        let Some(rest) = path.strip_prefix('/') else {
            return false;
        };
        let mut segments = rest.split('/');
        self.segments
            .iter()
            .all(|t| segments.next() == Some(t.text()))
            && segments.next().is_none()
    }

    /// True when a segment is a pattern (`app.:hash.js`): the only kind that
    /// does not match its own text.
    pub fn has_patterns(&self) -> bool {
        self.segments
            .iter()
            .any(|s| matches!(s, Segment::Pattern(_)))
    }

    /// True when some segment is a parameter or a pattern.
    pub fn has_parameters(&self) -> bool {
        self.segments
            .iter()
            .any(|s| !matches!(s, Segment::Literal(_)))
    }
}

impl Template {
    /// The template as a line of a routes file writes it, which parses back
    /// to it (its text, but for a literal segment's colons: see
    /// [`Segment::line_text`]).
    pub fn line(&self) -> String {
        self.segments
            .iter()
            .map(|s| format!("/{}", s.line_text()))
            .collect()
    }
}

impl std::fmt::Display for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for s in &self.segments {
            write!(f, "/{}", s.text())?;
        }
        Ok(())
    }
}

/// Templates in precedence order, matched first-wins.
#[derive(Debug, Clone, Default)]
pub struct TemplateSet {
    templates: Vec<Template>,
    /// The templates arranged segment by segment, for [`TemplateSet::find`].
    index: MatchNode,
    /// The position of each template with a parameter by its text, so a path
    /// that is a template's own text (`/static/app.:hash.js`, which its
    /// pattern does not match) maps to that template.
    texts: HashMap<Box<str>, usize>,
}

impl TemplateSet {
    /// The set of `templates` (duplicates dropped), sorted by precedence.
    pub fn new(mut templates: Vec<Template>) -> Self {
        templates.sort_by(|a, b| {
            a.precedence(b)
                .then_with(|| a.to_string().cmp(&b.to_string()))
        });
        templates.dedup_by(|a, b| a.precedence(b) == Ordering::Equal);
        let index = MatchNode::build(&templates);
        let mut texts = HashMap::new();
        for (i, t) in templates.iter().enumerate() {
            if t.has_parameters() {
                texts.entry(t.to_string().into()).or_insert(i);
            }
        }
        TemplateSet {
            templates,
            index,
            texts,
        }
    }

    /// The templates in precedence order.
    pub fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The template whose text `path` is, else the first template matching
    /// `path` (in precedence order).
    pub fn find(&self, path: &str) -> Option<&Template> {
        self.find_index(path).map(|i| &self.templates[i])
    }

    /// The position in [`TemplateSet::templates`] of [`TemplateSet::find`]'s template.
    pub fn find_index(&self, path: &str) -> Option<usize> {
        if path.contains(':')
            && let Some(&i) = self.texts.get(path)
        {
            return Some(i);
        }
        self.index.find(path)
    }

    /// True when the set is empty.
    pub fn is_empty(&self) -> bool {
        self.templates.is_empty()
    }
}

#[cfg(test)]
mod tests;
