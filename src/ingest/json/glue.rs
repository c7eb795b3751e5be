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
    /// object: the first of the next [`GLUE_TRIES`] `{` from which the rest
    /// of the line is an object with request fields, or any object after
    /// one (a server's other messages among its access entries). Two
    /// entries glued onto one line (`{…}{…}`, or one cut short and the next
    /// after it) are so read apart, each on its own.
    pub(super) fn second_entry(&mut self, text: &[u8], extra: usize) -> Option<usize> {
        let mut is_object = |text| {
            let mut scratch = Record::default();
            scratch.clear(extra);
            match self.parse_object(text, &mut scratch) {
                Err(SkipReason::BadJson) => None,
                Err(SkipReason::NotAccessEntry) => Some(false),
                _ => Some(true),
            }
        };
        memchr::memchr_iter(b'{', text)
            .skip(1)
            .take(GLUE_TRIES)
            .find(|&at| match is_object(&text[at..]) {
                Some(entry) => entry || is_object(before_entry(text, at)).is_some(),
                None => false,
            })
    }
}

/// The entry before the one glued on at `at`: up to its last `}` (what
/// follows that is the glued entry's prefix, as `caddy  | `), or all of it
/// when it has none (it was cut short).
pub(super) fn before_entry(text: &[u8], at: usize) -> &[u8] {
    let first = &text[..at];
    memchr::memrchr(b'}', first).map_or(first, |end| &first[..=end])
}
