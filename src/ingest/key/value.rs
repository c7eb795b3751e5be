//! A record's key as ingestion interns it ([`KeyValue`]), and the first
//! bytes of a key that a product keeps ([`first_bytes`]).

use std::borrow::Cow;
use std::fmt::Write;

use crate::events::{Id, Interner};

/// A record's key ([`KeySpec::key_value`]): logged bytes or built text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyValue<'r> {
    /// The bytes of one field as logged, read as [`escaped_text`].
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
            KeyValue::Bytes(bytes) => names.intern_or(bytes, |b| escaped_text(b).into_owned()),
            KeyValue::Text(text) => names.intern(text),
        }
    }
}

/// The first `n` bytes of a key, as a product storing that many bytes keeps
/// them, as text ([`escaped_text`]): a character the cut splits is written as
/// `\xHH` escapes of the bytes kept, so that keys whose last kept bytes
/// differ stay apart.
pub(super) fn first_bytes(bytes: &[u8], n: usize) -> String {
    escaped_text(&bytes[..n.min(bytes.len())]).into_owned()
}

/// `bytes` as text, each byte that is not part of a UTF-8 character written
/// `\xHH` as nginx's log escaping writes it: two clients whose keys differ
/// only in such bytes stay two (read as U+FFFD, `k\xFF` and `k\xFE` were one).
pub fn escaped_text(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02X}");
        }
    }
    Cow::Owned(out)
}
