//! A record's key as ingestion interns it ([`KeyValue`]), and the first
//! bytes of a key that a product keeps ([`first_bytes`]).

use std::fmt::Write;

use crate::events::{Id, Interner};

/// A record's key ([`KeySpec::key_value`]): logged bytes or built text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyValue<'r> {
    /// The bytes of one field as logged, read as UTF-8 with U+FFFD for invalid sequences.
    Bytes(&'r [u8]),
    /// Text built from the record.
    Text(&'r str),
}

impl KeyValue<'_> {
    /// The key's bytes (text as UTF-8).
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            KeyValue::Bytes(bytes) => bytes,
            KeyValue::Text(text) => text.as_bytes(),
        }
    }

    /// The key's id in `names` (added when new).
    pub fn intern(self, names: &mut Interner) -> Id {
        match self {
            KeyValue::Bytes(bytes) => names.intern_lossy(bytes),
            KeyValue::Text(text) => names.intern(text),
        }
    }

    /// True when the key holds U+FFFD (bytes that are not UTF-8, or the character itself).
    pub fn has_replacement(self) -> bool {
        match self {
            KeyValue::Bytes(bytes) => {
                !bytes.is_ascii() && crate::ingest::endpoint::lossy(bytes).contains('\u{fffd}')
            }
            KeyValue::Text(text) => !text.is_ascii() && text.contains('\u{fffd}'),
        }
    }
}

/// The first `n` bytes of a key, as a product storing that many bytes keeps
/// them, as text: bytes that are not UTF-8 read as U+FFFD, as in every key,
/// but a character the cut splits is written as `\xHH` escapes of the bytes
/// kept, so that keys whose last kept bytes differ stay apart.
pub(super) fn first_bytes(bytes: &[u8], n: usize) -> String {
    let cut = &bytes[..n.min(bytes.len())];
    let mut out = String::with_capacity(cut.len() + 8);
    let mut chunks = cut.utf8_chunks().peekable();
    while let Some(chunk) = chunks.next() {
        out.push_str(chunk.valid());
        let invalid = chunk.invalid();
        if invalid.is_empty() {
            continue;
        }
        let start = cut.len() - invalid.len();
        let split = chunks.peek().is_none()
            && (bytes[start..].utf8_chunks().next()).is_some_and(|c| !c.valid().is_empty());
        match split {
            true => invalid.iter().for_each(|b| {
                let _ = write!(out, "\\x{b:02X}");
            }),
            false => out.push('\u{fffd}'),
        }
    }
    out
}
