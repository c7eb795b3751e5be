//! One JSON line seen through the questions the JSON parser asks of it (follow
//! a dotted path; a value as text, a timestamp or a status), answered either
//! from the zero-copy [`Tape`] or from a `serde_json::Value` for the lines the
//! tape does not read. Both answer every question the same way; the tape
//! borrows strings from the line instead of copying them.

use std::borrow::Cow;

use serde_json::Value;

use super::json_tape::{Kind, NONE, Node, Tape};
use super::record::{Bytes, SkipReason, parse_status, status_number};
use super::time::{self, Stamp};

/// A dotted field path, with the index of its first key among all first keys.
#[derive(Debug, Clone)]
pub struct FieldPath {
    pub keys: Vec<String>,
    /// Index of `keys[0]` in the parser's list of first keys.
    pub first: usize,
    /// For a path with dots: the whole text as one key (`"client.ip": ...`),
    /// read when the object has no such nesting.
    pub flat: Option<Box<FieldPath>>,
}

/// What the JSON parser asks of a line.
pub trait JsonDoc<'a> {
    /// A value found by a path.
    type Found: Copy;

    /// Follows `path`; an array on the way (or at the end) yields its first
    /// element; a missing or null value is `None`.
    fn lookup(&self, path: &FieldPath) -> Option<Self::Found>;
    /// [`Self::lookup`], or else the path's text as one key (a key holding dots).
    fn find(&self, path: &FieldPath) -> Option<Self::Found> {
        self.lookup(path)
            .or_else(|| path.flat.as_deref().and_then(|flat| self.lookup(flat)))
    }
    /// The value if it is a string.
    fn as_str(&self, value: Self::Found) -> Option<&[u8]>;
    /// A string's contents, or any other value as JSON text.
    fn text(&self, value: Self::Found) -> Bytes<'a>;
    /// A timestamp: an epoch number or a text in any shape `time::parse_any` reads.
    fn time(&self, value: Self::Found) -> Option<Stamp>;
    /// A status: a number or such a text ([`status_number`], [`parse_status`]).
    fn status(&self, value: Self::Found) -> Result<Option<u16>, SkipReason>;
    /// A number, or a text holding one (`"0.012"`, Go's `"0.012s"`).
    fn number(&self, value: Self::Found) -> Option<f64>;
}

fn number_text(text: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(text).ok()?;
    text.trim().trim_end_matches('s').parse().ok()
}

/// The JSON object `text` holds, if it holds one. Bytes that are not UTF-8
/// inside its strings are read as U+FFFD, as in the other formats: nginx's
/// `escape=json` writes bytes from 0x80 up as they came.
pub fn json_object(text: &[u8]) -> Option<Value> {
    let value = match serde_json::from_slice::<Value>(text) {
        Ok(value) => value,
        Err(_) if std::str::from_utf8(text).is_err() => {
            serde_json::from_str(&String::from_utf8_lossy(text)).ok()?
        }
        Err(_) => return None,
    };
    value.is_object().then_some(value)
}

/// A line parsed by `serde_json` (the object at the root).
pub struct ValueDoc<'v>(pub &'v Value);

fn first_of(value: &Value) -> &Value {
    match value {
        Value::Array(items) => items.first().unwrap_or(&Value::Null),
        other => other,
    }
}

fn time_of(value: &Value) -> Option<Stamp> {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(time::epoch_integer(i)),
            None => time::epoch_float(n.as_f64()?),
        },
        Value::String(s) => time::parse_any(s.as_bytes()),
        _ => None,
    }
}

fn status_of(value: &Value) -> Result<Option<u16>, SkipReason> {
    match value {
        Value::Number(n) => n.as_i64().map_or(Err(SkipReason::BadStatus), status_number),
        Value::String(s) => parse_status(s.as_bytes()),
        _ => Err(SkipReason::BadStatus),
    }
}

fn text_of(value: &Value) -> Bytes<'static> {
    match value {
        Value::String(s) => Cow::Owned(s.clone().into_bytes()),
        other => Cow::Owned(other.to_string().into_bytes()),
    }
}

impl<'a, 'v> JsonDoc<'a> for ValueDoc<'v> {
    type Found = &'v Value;

    fn lookup(&self, path: &FieldPath) -> Option<&'v Value> {
        let mut value = self.0;
        for key in &path.keys {
            value = first_of(value).as_object()?.get(key)?;
        }
        let value = first_of(value);
        (!value.is_null()).then_some(value)
    }

    fn as_str(&self, value: &'v Value) -> Option<&[u8]> {
        value.as_str().map(str::as_bytes)
    }

    fn text(&self, value: &'v Value) -> Bytes<'a> {
        text_of(value)
    }

    fn time(&self, value: &'v Value) -> Option<Stamp> {
        time_of(value)
    }

    fn status(&self, value: &'v Value) -> Result<Option<u16>, SkipReason> {
        status_of(value)
    }

    fn number(&self, value: &'v Value) -> Option<f64> {
        match value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => number_text(s.as_bytes()),
            _ => None,
        }
    }
}

/// A line read onto a [`Tape`] (the object at the root).
pub struct TapeDoc<'a, 't> {
    /// The JSON text the tape's spans point into.
    pub text: &'a [u8],
    pub tape: &'t Tape,
    /// Per first key of the parser's paths: the root member with that key (the
    /// last one when a key repeats, as `serde_json` keeps), or [`NONE`].
    pub firsts: &'t [u32],
}

impl<'a> TapeDoc<'a, '_> {
    fn node(&self, index: u32) -> &Node {
        &self.tape.nodes[index as usize]
    }

    fn span(&self, node: &Node) -> &'a [u8] {
        &self.text[node.start as usize..node.end as usize]
    }

    /// The first element of an array (`None` when empty), or the node itself.
    fn first_of(&self, index: u32) -> Option<u32> {
        let node = self.node(index);
        if node.kind == Kind::Array {
            return (node.first_child != NONE).then_some(node.first_child);
        }
        Some(index)
    }

    /// A non-string value as `serde_json` reads it on its own.
    fn value(&self, index: u32) -> Option<Value> {
        serde_json::from_slice(self.span(self.node(index))).ok()
    }

    /// A number without a fraction as the integer it is (the tape allows at most
    /// 18 digits, so it fits); `None` for a decimal.
    fn integer(&self, index: u32) -> Option<i64> {
        let span = self.span(self.node(index));
        let (negative, digits) = match span.strip_prefix(b"-") {
            Some(digits) => (true, digits),
            None => (false, span),
        };
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let n = digits
            .iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0'));
        Some(if negative { -n } else { n })
    }
}

impl<'a> JsonDoc<'a> for TapeDoc<'a, '_> {
    type Found = u32;

    fn lookup(&self, path: &FieldPath) -> Option<u32> {
        let mut index = self.firsts[path.first];
        if index == NONE {
            return None;
        }
        for key in &path.keys[1..] {
            let object = self.node(self.first_of(index)?);
            if object.kind != Kind::Object {
                return None;
            }
            index = self
                .tape
                .children(object)
                .filter(|(_, member)| {
                    &self.text[member.key_start as usize..member.key_end as usize] == key.as_bytes()
                })
                .last()?
                .0;
        }
        let index = self.first_of(index)?;
        (self.node(index).kind != Kind::Null).then_some(index)
    }

    fn as_str(&self, index: u32) -> Option<&[u8]> {
        let node = self.node(index);
        (node.kind == Kind::String).then(|| self.span(node))
    }

    fn text(&self, index: u32) -> Bytes<'a> {
        let node = self.node(index);
        match node.kind {
            Kind::String => Cow::Borrowed(self.span(node)),
            _ => self.value(index).map(|v| text_of(&v)).unwrap_or_default(),
        }
    }

    fn time(&self, index: u32) -> Option<Stamp> {
        let node = self.node(index);
        match node.kind {
            Kind::String => time::parse_any(self.span(node)),
            Kind::Number => match self.integer(index) {
                Some(n) => Some(time::epoch_integer(n)),
                None => time_of(&self.value(index)?),
            },
            _ => None,
        }
    }

    fn status(&self, index: u32) -> Result<Option<u16>, SkipReason> {
        let node = self.node(index);
        match node.kind {
            Kind::String => parse_status(self.span(node)),
            Kind::Number => match self.integer(index) {
                Some(n) => status_number(n),
                None => Err(SkipReason::BadStatus), // a decimal
            },
            _ => Err(SkipReason::BadStatus),
        }
    }

    fn number(&self, index: u32) -> Option<f64> {
        let node = self.node(index);
        match node.kind {
            Kind::String | Kind::Number => number_text(self.span(node)),
            _ => None,
        }
    }
}
