//! JSON entries glued onto one line (a newline missing): `{…}{…}`, or an
//! entry cut short and the next after it. See `docs/sources.md`, "Glued
//! entries".

use super::JsonParser;
use crate::ingest::record::{Record, SkipReason};

/// How many entries cut short with another glued after them are looked past
/// in one line; the rest of the line after that many is one entry.
const CUT_SHORT_PER_LINE: usize = 16;

/// How many `{` after a line's first an object glued onto it may start at
/// (each is tried as the start of the rest of the line): enough for the
/// nested objects of an entry cut short, few enough that a line of braces
/// costs a few readings of it.
const GLUE_TRIES: usize = 16;

impl JsonParser {
    /// Where a second entry starts in `text`, a line that is not one JSON
    /// object. After a whole object (read without a JSON error), the next
    /// `{` starts it, unless that opens an object nested in another. After
    /// an entry cut short (at most [`CUT_SHORT_PER_LINE`] in a line), the
    /// first of the next [`GLUE_TRIES`] `{` does that starts an object with
    /// request fields, or any object when the text before it is one (a
    /// server's other messages among its access entries); an object that
    /// more text follows on the line must be a whole entry, read without
    /// error, so that an object nested in the entry cut short is not taken
    /// for one. Entries glued
    /// onto one line (`{…}{…}`, one cut short and the next after it, three
    /// or more) are so read apart, each on its own, and finding each costs
    /// the reading of the entry before it, not of the rest of the line.
    pub(super) fn second_entry(&mut self, text: &[u8], extra: usize) -> Option<usize> {
        if let Some(first) = leading_object(text).filter(|first| first.len() < text.len())
            && let Some(next) =
                memchr::memchr(b'{', &text[first.len()..]).map(|at| first.len() + at)
            && leading_object(&text[next..]).is_some()
            && self.read_apart(first, extra) != Err(SkipReason::BadJson)
        {
            return Some(next);
        }
        // Looking past an entry cut short reads up to the rest of the line
        // for each of its candidates: a line gets that for its first few
        // such entries only, so that no line costs its length squared.
        if self.cut_short == CUT_SHORT_PER_LINE {
            return None;
        }
        self.cut_short += 1;
        memchr::memchr_iter(b'{', text)
            .skip(1)
            .take(GLUE_TRIES)
            .find(|&at| {
                let Some(object) = leading_object(&text[at..]) else {
                    return false;
                };
                let whole_entry = match self.read_apart(object, extra) {
                    Ok(()) => true,
                    Err(SkipReason::BadJson) => return false,
                    Err(SkipReason::NotAccessEntry) => false,
                    Err(_) => text[at + object.len()..].trim_ascii_start().is_empty(),
                };
                whole_entry
                    || self.read_apart(before_entry(text, at), extra) != Err(SkipReason::BadJson)
            })
    }

    /// Reads `text` as an entry of its own, into a record thrown away.
    fn read_apart(&mut self, text: &[u8], extra: usize) -> Result<(), SkipReason> {
        let mut scratch = Record::default();
        scratch.clear(extra);
        self.parse_object(text, &mut scratch)
    }
}

/// The object `text` starts with (at a `{`): up to its matching `}`, or all
/// of `text` when that never comes; `None` when a `,`, `}` or `]` follows
/// it (past spaces): the `{` opens an object nested in another. Braces
/// inside strings are not counted. Reads no further than the object and
/// the spaces after it.
pub(in crate::ingest) fn leading_object(text: &[u8]) -> Option<&[u8]> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in text.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let after = text[i + 1..].trim_ascii_start();
                    let nested = matches!(after.first(), Some(b',' | b'}' | b']'));
                    return (!nested).then_some(&text[..=i]);
                }
            }
            _ => {}
        }
    }
    Some(text)
}

/// Whether nothing but spaces follows the object `text` starts with (at a
/// `{`), or that object never closes.
pub(super) fn only_object(text: &[u8]) -> bool {
    leading_object(text).is_some_and(|object| text[object.len()..].trim_ascii_start().is_empty())
}

/// The entry before the one glued on at `at`: up to its last `}` (what
/// follows that is the glued entry's prefix, as `caddy  | `), or all of it
/// when it has none (it was cut short).
pub(super) fn before_entry(text: &[u8], at: usize) -> &[u8] {
    let first = &text[..at];
    memchr::memrchr(b'}', first).map_or(first, |end| &first[..=end])
}
