//! A validating, zero-copy reader for the JSON that access logs are made of:
//! one pass over the line records every value as a node (kind and byte span)
//! on a reused tape, so fields are found without building a `serde_json::Value`.
//!
//! It accepts a strict subset of JSON: no backslash escapes anywhere, numbers
//! that are integers of at most 18 digits or decimals without an exponent, and
//! at most [`MAX_DEPTH`] levels of nesting. Anything else, valid or not, is
//! [`Unsupported`]: the caller then parses the line with `serde_json`, so the
//! result never depends on which reader ran. Within the subset, it accepts
//! exactly what `serde_json` accepts.

/// Deepest nesting the tape reads (`serde_json` allows 128; deeper lines fall back).
pub const MAX_DEPTH: usize = 64;

/// The line is outside the subset (or not JSON): parse it with `serde_json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsupported;

/// What a node holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A string; the span is its contents, without quotes (valid UTF-8, no escapes).
    String,
    /// A number; the span is its text (as for every kind but strings).
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
    /// An object; its members are its children, each with its key.
    Object,
    /// An array; its elements are its children.
    Array,
}

/// No node (end of a list of children).
pub const NONE: u32 = u32::MAX;

/// One value on the tape.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub kind: Kind,
    /// Where the value is in the line (see [`Kind`]).
    pub start: u32,
    pub end: u32,
    /// For a member of an object: its key's span (contents without quotes).
    pub key_start: u32,
    pub key_end: u32,
    /// For an object or array: its first member.
    pub first_child: u32,
    /// The next member of the same object or array.
    pub next: u32,
}

/// A parsed line: nodes in document order, the root first.
#[derive(Debug, Default, Clone)]
pub struct Tape {
    pub nodes: Vec<Node>,
}

impl Tape {
    /// Reads `text` (one JSON value with optional surrounding white space) onto the tape.
    pub fn parse(&mut self, text: &[u8]) -> Result<(), Unsupported> {
        self.nodes.clear();
        if text.len() >= NONE as usize {
            return Err(Unsupported);
        }
        let mut reader = Reader {
            text,
            pos: 0,
            tape: self,
        };
        reader.skip_space();
        reader.value(0)?;
        reader.skip_space();
        if reader.pos != text.len() {
            return Err(Unsupported);
        }
        Ok(())
    }

    /// The root node.
    pub fn root(&self) -> &Node {
        &self.nodes[0]
    }

    /// The members of an object or array, in order.
    pub fn children(&self, node: &Node) -> Children<'_> {
        Children {
            tape: self,
            next: node.first_child,
        }
    }
}

/// Iterator over the members of an object or array.
pub struct Children<'t> {
    tape: &'t Tape,
    next: u32,
}

impl<'t> Iterator for Children<'t> {
    type Item = (u32, &'t Node);

    fn next(&mut self) -> Option<Self::Item> {
        if self.next == NONE {
            return None;
        }
        let index = self.next;
        let node = &self.tape.nodes[index as usize];
        self.next = node.next;
        Some((index, node))
    }
}

struct Reader<'a, 't> {
    text: &'a [u8],
    pos: usize,
    tape: &'t mut Tape,
}

impl Reader<'_, '_> {
    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.pos) {
            self.pos += 1;
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize) -> u32 {
        let index = self.tape.nodes.len() as u32;
        self.tape.nodes.push(Node {
            kind,
            start: start as u32,
            end: end as u32,
            key_start: 0,
            key_end: 0,
            first_child: NONE,
            next: NONE,
        });
        index
    }

    /// Reads one value at `pos` (no leading space); returns its node.
    fn value(&mut self, depth: usize) -> Result<u32, Unsupported> {
        let start = self.pos;
        match *self.text.get(start).ok_or(Unsupported)? {
            b'"' => {
                let (from, to) = self.string()?;
                Ok(self.push(Kind::String, from, to))
            }
            b'{' => self.container(Kind::Object, depth),
            b'[' => self.container(Kind::Array, depth),
            b't' => self.literal(b"true", Kind::Bool),
            b'f' => self.literal(b"false", Kind::Bool),
            b'n' => self.literal(b"null", Kind::Null),
            b'-' | b'0'..=b'9' => {
                self.number()?;
                Ok(self.push(Kind::Number, start, self.pos))
            }
            _ => Err(Unsupported),
        }
    }

    fn literal(&mut self, word: &[u8], kind: Kind) -> Result<u32, Unsupported> {
        let start = self.pos;
        if !self.text[start..].starts_with(word) {
            return Err(Unsupported);
        }
        self.pos += word.len();
        Ok(self.push(kind, start, self.pos))
    }

    /// A string at `pos` (on its opening quote); returns the span of its contents.
    fn string(&mut self) -> Result<(usize, usize), Unsupported> {
        let from = self.pos + 1;
        let rest = &self.text[from..];
        let close = memchr::memchr2(b'"', b'\\', rest).ok_or(Unsupported)?;
        let contents = &rest[..close];
        if rest[close] == b'\\' || contents.iter().any(|&b| b < 0x20) {
            return Err(Unsupported);
        }
        if !contents.is_ascii() && std::str::from_utf8(contents).is_err() {
            return Err(Unsupported);
        }
        self.pos = from + close + 1;
        Ok((from, from + close))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most 18 integer digits, no exponent.
    fn number(&mut self) -> Result<(), Unsupported> {
        if self.text.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let digits = self.digits();
        let first = self.text.get(self.pos - digits).copied();
        if digits == 0 || digits > 18 || (digits > 1 && first == Some(b'0')) {
            return Err(Unsupported);
        }
        if self.text.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(Unsupported);
            }
        }
        match self.text.get(self.pos) {
            Some(b'e' | b'E') => Err(Unsupported),
            _ => Ok(()),
        }
    }

    fn digits(&mut self) -> usize {
        let n = self.text[self.pos..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        self.pos += n;
        n
    }

    /// An object or array at `pos` (on its opening bracket).
    fn container(&mut self, kind: Kind, depth: usize) -> Result<u32, Unsupported> {
        if depth >= MAX_DEPTH {
            return Err(Unsupported);
        }
        let start = self.pos;
        let node = self.push(kind, start, start);
        let close = if kind == Kind::Object { b'}' } else { b']' };
        self.pos += 1;
        self.skip_space();
        let mut last = NONE;
        if self.text.get(self.pos) == Some(&close) {
            self.pos += 1;
        } else {
            loop {
                let key = if kind == Kind::Object {
                    if self.text.get(self.pos) != Some(&b'"') {
                        return Err(Unsupported);
                    }
                    let key = self.string()?;
                    self.skip_space();
                    if self.text.get(self.pos) != Some(&b':') {
                        return Err(Unsupported);
                    }
                    self.pos += 1;
                    self.skip_space();
                    Some(key)
                } else {
                    None
                };
                let child = self.value(depth + 1)?;
                if let Some((from, to)) = key {
                    let member = &mut self.tape.nodes[child as usize];
                    (member.key_start, member.key_end) = (from as u32, to as u32);
                }
                match last {
                    NONE => self.tape.nodes[node as usize].first_child = child,
                    previous => self.tape.nodes[previous as usize].next = child,
                }
                last = child;
                self.skip_space();
                match self.text.get(self.pos) {
                    Some(b',') => {
                        self.pos += 1;
                        self.skip_space();
                    }
                    Some(&b) if b == close => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(Unsupported),
                }
            }
        }
        self.tape.nodes[node as usize].end = self.pos as u32;
        Ok(node)
    }
}

#[cfg(test)]
mod tests;
