//! JSON entries glued onto one line (a newline missing): `{…}{…}`, or an
//! entry cut short and the next after it. See `docs/sources.md`, "Glued
//! entries".

use super::JsonParser;
use crate::ingest::record::{Record, SkipReason};

/// How many `{` after a line's first an object glued onto it may start at
/// (each is tried as the start of the rest of the line): enough for the
/// nested objects of an entry cut short, few enough that a line of braces
/// costs a few readings of it.
const GLUE_TRIES: usize = 16;

impl JsonParser {
    /// Where a second entry starts in `text`, a line that is not one JSON
    /// object: the first of the next [`GLUE_TRIES`] `{` that starts an
    /// object with request fields, or any object when the text before it is
    /// one (a server's other messages among its access entries). An object
    /// that more text follows on the line must be a whole entry, read
    /// without error, so that an object nested in an entry cut short is not
    /// taken for one. Entries glued onto one line (`{…}{…}`, one cut short
    /// and the next after it, three or more) are so read apart, each on its
    /// own.
    pub(super) fn second_entry(&mut self, text: &[u8], extra: usize) -> Option<usize> {
        let mut read = |text| {
            let mut scratch = Record::default();
            scratch.clear(extra);
            self.parse_object(text, &mut scratch)
        };
        memchr::memchr_iter(b'{', text)
            .skip(1)
            .take(GLUE_TRIES)
            .find(|&at| {
                let Some(object) = leading_object(&text[at..]) else {
                    return false;
                };
                let whole_entry = match read(object) {
                    Ok(()) => true,
                    Err(SkipReason::BadJson) => return false,
                    Err(SkipReason::NotAccessEntry) => false,
                    Err(_) => at + object.len() == text.len(),
                };
                whole_entry || read(before_entry(text, at)) != Err(SkipReason::BadJson)
            })
    }
}

/// The object `text` starts with (at a `{`): up to its matching `}`, or all
/// of `text` when that never comes; `None` when a `}` after it closes an
/// object opened before `text` (the `{` starts an object nested in another).
/// Braces inside strings are not counted.
pub(in crate::ingest) fn leading_object(text: &[u8]) -> Option<&[u8]> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut end = None;
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
                depth = depth.checked_sub(1)?;
                if depth == 0 && end.is_none() {
                    end = Some(i);
                }
            }
            _ => {}
        }
    }
    Some(end.map_or(text, |end| &text[..=end]))
}

/// The entry before the one glued on at `at`: up to its last `}` (what
/// follows that is the glued entry's prefix, as `caddy  | `), or all of it
/// when it has none (it was cut short).
pub(super) fn before_entry(text: &[u8], at: usize) -> &[u8] {
    let first = &text[..at];
    memchr::memrchr(b'}', first).map_or(first, |end| &first[..=end])
}
