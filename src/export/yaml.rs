//! The YAML emitter of the Envoy, Traefik and Kong exporters: a small document
//! tree ([`Value`], [`Map`], [`Seq`]) that carries the comments a serializer
//! cannot (a `# ` line before an entry or item, a trailing `# note`), written
//! in one fixed style: two-space indentation, sequences at their key's
//! indentation, flow collections on one line.
//!
//! Strings from a policy are [`Value::Str`] and always double-quoted
//! ([`super::quoted`], valid in YAML and JSON); [`Value::Plain`] is for
//! numbers, keywords and durations the exporter writes itself, and keys are
//! written as given (fixed names and [`super::identifiers`]).

use super::{comment, comment_block, quoted};

/// A YAML value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A plain scalar, written as is: numbers, keywords, durations.
    Plain(String),
    /// A string, written double-quoted.
    Str(String),
    /// `{key: value, ...}` on one line (keys as given).
    FlowMap(Vec<(&'static str, Value)>),
    /// `[value, ...]` on one line.
    FlowSeq(Vec<Value>),
    /// One entry per line, indented under its key (`key:` alone when empty).
    Map(Map),
    /// One `- ` item per line, at its key's indentation (`key:` alone when empty).
    Seq(Seq),
}

/// A plain scalar (see [`Value::Plain`]).
pub fn plain(text: impl ToString) -> Value {
    Value::Plain(text.to_string())
}

/// A double-quoted string (see [`Value::Str`]).
pub fn string(text: impl Into<String>) -> Value {
    Value::Str(text.into())
}

/// `{key: value, ...}` on one line.
pub fn flow<const N: usize>(entries: [(&'static str, Value); N]) -> Value {
    Value::FlowMap(entries.into())
}

/// A block mapping of one entry (`- key: value` as a sequence item).
pub fn single(key: &str, value: impl Into<Value>) -> Value {
    let mut map = Map::new();
    map.set(key, value);
    Value::Map(map)
}

/// A block mapping whose entries may carry comments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Map {
    entries: Vec<Entry>,
    pending: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    comments: Vec<String>,
    key: String,
    value: Value,
    note: Option<String>,
}

impl Map {
    /// An empty mapping.
    pub fn new() -> Map {
        Map::default()
    }

    /// Comment lines written before the next entry.
    pub fn comments(&mut self, lines: &[String]) -> &mut Map {
        self.pending.extend_from_slice(lines);
        self
    }

    /// One comment line written before the next entry.
    pub fn comment(&mut self, line: impl Into<String>) -> &mut Map {
        self.pending.push(line.into());
        self
    }

    /// `key: value`.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) -> &mut Map {
        self.entries.push(Entry {
            comments: std::mem::take(&mut self.pending),
            key: key.into(),
            value: value.into(),
            note: None,
        });
        self
    }

    /// A trailing `  # note` on the last entry's line.
    pub fn note(&mut self, note: impl Into<String>) -> &mut Map {
        if let Some(last) = self.entries.last_mut() {
            last.note = Some(note.into());
        }
        self
    }

    /// Whether the mapping has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn write(&self, out: &mut String, indent: usize, first_inline: bool) {
        for (i, entry) in self.entries.iter().enumerate() {
            let pad = " ".repeat(indent);
            if !(first_inline && i == 0) {
                out.push_str(&comment_block(&format!("{pad}# "), &entry.comments));
                out.push_str(&pad);
            }
            out.push_str(&entry.key);
            out.push(':');
            let note = |out: &mut String| {
                if let Some(n) = &entry.note {
                    out.push_str("  # ");
                    out.push_str(&comment(n));
                }
                out.push('\n');
            };
            match &entry.value {
                Value::Map(map) => {
                    note(out);
                    map.write(out, indent + 2, false);
                }
                Value::Seq(seq) => {
                    note(out);
                    seq.write(out, indent);
                }
                flow => {
                    out.push(' ');
                    flow.write_flow(out);
                    note(out);
                }
            }
        }
    }

    /// The mapping as a YAML document (trailing comments of the last entry
    /// included; comments pending after it are dropped).
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0, false);
        out
    }
}

/// A block sequence whose items may carry comments.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seq {
    items: Vec<(Vec<String>, Value)>,
    pending: Vec<String>,
}

impl Seq {
    /// An empty sequence.
    pub fn new() -> Seq {
        Seq::default()
    }

    /// Comment lines written before the next item.
    pub fn comments(&mut self, lines: &[String]) -> &mut Seq {
        self.pending.extend_from_slice(lines);
        self
    }

    /// One comment line written before the next item.
    pub fn comment(&mut self, line: impl Into<String>) -> &mut Seq {
        self.pending.push(line.into());
        self
    }

    /// `- value`.
    pub fn push(&mut self, value: impl Into<Value>) -> &mut Seq {
        self.items
            .push((std::mem::take(&mut self.pending), value.into()));
        self
    }

    /// Whether the sequence has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn write(&self, out: &mut String, indent: usize) {
        let pad = " ".repeat(indent);
        for (comments, value) in &self.items {
            let mut comments = comments.clone();
            if let Value::Map(map) = value
                && let Some(first) = map.entries.first()
            {
                // A map item's first entry shares the `- ` line: its comments go before it.
                comments.extend_from_slice(&first.comments);
            }
            out.push_str(&comment_block(&format!("{pad}# "), &comments));
            out.push_str(&pad);
            out.push_str("- ");
            match value {
                Value::Map(map) if !map.is_empty() => map.write(out, indent + 2, true),
                other => {
                    other.write_flow(out);
                    out.push('\n');
                }
            }
        }
    }
}

impl Value {
    /// The value on one line (block collections as flow ones, their comments dropped).
    fn write_flow(&self, out: &mut String) {
        let pairs = |out: &mut String, pairs: &mut dyn Iterator<Item = (&str, &Value)>| {
            out.push('{');
            for (i, (key, value)) in pairs.enumerate() {
                out.push_str(if i > 0 { ", " } else { "" });
                out.push_str(key);
                out.push_str(": ");
                value.write_flow(out);
            }
            out.push('}');
        };
        let items = |out: &mut String, items: &mut dyn Iterator<Item = &Value>| {
            out.push('[');
            for (i, value) in items.enumerate() {
                out.push_str(if i > 0 { ", " } else { "" });
                value.write_flow(out);
            }
            out.push(']');
        };
        match self {
            Value::Plain(text) => out.push_str(text),
            Value::Str(text) => out.push_str(&quoted(text)),
            Value::FlowMap(entries) => pairs(out, &mut entries.iter().map(|(k, v)| (*k, v))),
            Value::Map(map) => pairs(
                out,
                &mut map.entries.iter().map(|e| (e.key.as_str(), &e.value)),
            ),
            Value::FlowSeq(values) => items(out, &mut values.iter()),
            Value::Seq(seq) => items(out, &mut seq.items.iter().map(|(_, v)| v)),
        }
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Map(map)
    }
}

impl From<Seq> for Value {
    fn from(seq: Seq) -> Value {
        Value::Seq(seq)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        plain(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_and_flow_collections_in_the_exporters_style() {
        let mut item = Map::new();
        item.set("name", plain("a"))
            .note("first\nline")
            .set("tags", Value::FlowSeq(vec![string("x\"y"), plain(1)]));
        let mut seq = Seq::new();
        seq.comment("item").push(item).push(Value::FlowMap(vec![]));
        let mut inner = Map::new();
        inner.set("n", 2u64);
        let mut doc = Map::new();
        doc.comment("top")
            .set("list", seq)
            .set("inner", inner)
            .set("empty", Seq::new());
        assert_eq!(
            doc.render(),
            "# top\nlist:\n# item\n- name: a  # first\\nline\n  tags: [\"x\\\"y\", 1]\n- {}\ninner:\n  n: 2\nempty:\n"
        );
    }

    #[test]
    fn a_map_items_first_entry_comments_go_before_the_dash() {
        let mut item = Map::new();
        item.comment("c")
            .set("k", plain("v"))
            .comment("d")
            .set("l", plain("w"));
        let mut seq = Seq::new();
        seq.push(item);
        let mut doc = Map::new();
        doc.set("s", seq);
        assert_eq!(doc.render(), "s:\n# c\n- k: v\n  # d\n  l: w\n");
    }
}
