//! Parsing one chunk of lines into events with chunk-local interned ids.
//!
//! Chunks are parsed in parallel; each returns its own small interners, which
//! [`super::Merger`] maps onto the table's ids in input order, so the result does
//! not depend on the number of threads.

use std::collections::BTreeMap;

use super::endpoint::{RouteRule, endpoint};
use super::key::KeySet;
use super::lines::MAX_LINE_BYTES;
use super::record::{LineParser, Record, SkipReason};
use super::time;
use crate::events::{Event, Id, Interner, KeyColumn, Logged, NO_KEY};

/// How many skipped lines per chunk are kept as examples.
pub const EXAMPLES_PER_CHUNK: usize = 5;

/// What parsing a chunk produced.
#[derive(Debug, Default)]
pub struct ChunkResult {
    /// Events with chunk-local client and endpoint ids.
    pub events: Vec<Event>,
    pub clients: Interner,
    pub endpoints: Interner,
    pub paths: Interner,
    pub methods: Interner,
    /// Columns of the extra keys, aligned with `events`, chunk-local ids.
    pub extra_keys: Vec<KeyColumn>,
    pub lines: u64,
    pub parsed: u64,
    /// Skipped lines by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// The first few skipped lines: (1-based line number, reason).
    pub examples: Vec<(u64, SkipReason)>,
    /// The first skipped line that was not blank (what `--strict` reports).
    pub first_bad: Option<(u64, SkipReason)>,
    /// True when any parsed timestamp had a fraction of a second.
    pub subsecond: bool,
    /// Lines whose key or endpoint had bytes that are not UTF-8.
    pub invalid_utf8: u64,
}

impl ChunkResult {
    /// Records a skipped line.
    pub fn skip(&mut self, line: u64, reason: SkipReason) {
        *self.skipped.entry(reason).or_default() += 1;
        if reason != SkipReason::Blank && self.first_bad.is_none() {
            self.first_bad = Some((line, reason));
        }
        if self.examples.len() < EXAMPLES_PER_CHUNK {
            self.examples.push((line, reason));
        }
    }
}

/// What a chunk parser needs besides the line parser.
pub struct ChunkContext<'a> {
    pub keys: &'a KeySet,
    pub routes: &'a [RouteRule],
}

/// Parses `data` (whole lines; the first is line `first_line`).
pub fn parse_chunk(
    data: &[u8],
    first_line: u64,
    parser: &mut dyn LineParser,
    ctx: &ChunkContext<'_>,
) -> ChunkResult {
    let mut out = ChunkResult {
        extra_keys: vec![KeyColumn::default(); ctx.keys.extra.len()],
        ..ChunkResult::default()
    };
    let mut record = Record::default();
    let mut key = String::new();
    let mut endpoint_name = String::new();
    let extra = ctx.keys.fields.len();
    if data.is_empty() {
        return out;
    }
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    for (this_line, raw) in (first_line..).zip(body.split(|&b| b == b'\n')) {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        out.lines += 1;
        if line.len() > MAX_LINE_BYTES {
            out.skip(this_line, SkipReason::TooLong);
            continue;
        }
        if line.trim_ascii().is_empty() {
            out.skip(this_line, SkipReason::Blank);
            continue;
        }
        record.clear(extra);
        if let Err(reason) = parser.parse(line, &mut record) {
            out.skip(this_line, reason);
            continue;
        }
        let Some(stamp) = record.time.filter(|s| time::in_range(s.ms)) else {
            out.skip(this_line, SkipReason::BadTime);
            continue;
        };
        if !ctx.keys.primary.build(&record, &mut key) {
            out.skip(this_line, SkipReason::NoClient);
            continue;
        }
        endpoint(&record.method, &record.path, ctx.routes, &mut endpoint_name);
        if key.contains('\u{fffd}') || endpoint_name.contains('\u{fffd}') {
            out.invalid_utf8 += 1;
        }
        out.subsecond |= stamp.subsecond;
        out.parsed += 1;
        let client = out.clients.intern(&key);
        for (spec, column) in ctx.keys.extra.iter().zip(&mut out.extra_keys) {
            let id: Id = if spec.build(&record, &mut key) {
                column.names.intern(&key)
            } else {
                NO_KEY
            };
            column.ids.push(id);
        }
        let path = String::from_utf8_lossy(&record.path);
        let path = path.split(['?', '#']).next().unwrap_or_default();
        out.events.push(Event {
            ts: stamp.ms,
            client,
            endpoint: out.endpoints.intern(&endpoint_name),
            path: out.paths.intern(path),
            method: out.methods.intern(&String::from_utf8_lossy(&record.method)),
            status: record.status.unwrap_or(0),
            logged: logged_decision(&record),
        });
    }
    out
}

/// The limiter decision a line records: `$limit_req_status` when logged, else
/// status 429/503 as rejected and any other status as passed.
fn logged_decision(record: &Record<'_>) -> Logged {
    match Logged::from_limit_req_status(&record.limit_req_status) {
        Logged::Unknown => match record.status {
            Some(429 | 503) => Logged::Rejected,
            Some(_) => Logged::Passed,
            None => Logged::Unknown,
        },
        known => known,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::combined::CombinedParser;
    use crate::ingest::key::KeySpec;

    #[test]
    fn counts_reconcile_and_examples_carry_line_numbers() {
        let data = b"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /a/1 HTTP/1.1\" 200 1\n\nbad line\n5.6.7.8 - - [10/Oct/2000:13:55:37 +0000] \"GET /a/2 HTTP/1.1\" 429 1\n";
        let mut keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        keys.add(KeySpec::parse("user", None, None).unwrap());
        let mut parser = CombinedParser::new(&[]).unwrap();
        let ctx = ChunkContext {
            keys: &keys,
            routes: &[],
        };
        let r = parse_chunk(data, 10, &mut parser, &ctx);
        assert_eq!((r.lines, r.parsed), (4, 2));
        assert_eq!(r.skipped.values().sum::<u64>(), 2);
        assert_eq!(r.examples[0], (11, SkipReason::Blank));
        assert!(matches!(r.examples[1], (12, SkipReason::Malformed(_))));
        assert_eq!(r.endpoints.len(), 1);
        assert_eq!(r.events[1].logged, Logged::Rejected);
        assert_eq!(r.events[0].logged, Logged::Passed);
        assert_eq!(
            (
                r.paths.name(r.events[1].path),
                r.methods.name(r.events[1].method)
            ),
            ("/a/2", "GET")
        );
        assert_eq!(r.extra_keys[0].ids, vec![NO_KEY, NO_KEY]);
    }

    #[test]
    fn times_outside_years_1_to_9999_are_bad_timestamps() {
        let data = b"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.1\" 200 1\n";
        let format = "$msec $remote_addr \"$request\" $status";
        let far = b"9000000000000000.5 1.2.3.4 \"GET / HTTP/1.1\" 200\n-62135596800001 1.2.3.4 \"GET / HTTP/1.1\" 200\n253402300799 1.2.3.4 \"GET / HTTP/1.1\" 200\n";
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let ctx = ChunkContext {
            keys: &keys,
            routes: &[],
        };
        let mut parser = crate::ingest::log_format::LogFormatParser::new(format, &[]).unwrap();
        let r = parse_chunk(far, 1, &mut parser, &ctx);
        assert_eq!((r.lines, r.parsed), (3, 1));
        assert_eq!(r.skipped[&SkipReason::BadTime], 2);
        let r = parse_chunk(data, 1, &mut CombinedParser::new(&[]).unwrap(), &ctx);
        assert_eq!(r.parsed, 1);
    }
}
