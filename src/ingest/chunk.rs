//! Parsing one chunk of lines into events with chunk-local interned ids.
//!
//! Chunks are parsed in parallel; each returns its own small interners, which
//! [`super::Merger`] maps onto the table's ids in input order, so the result does
//! not depend on the number of threads.

use std::collections::BTreeMap;

use super::KeptPaths;
use super::endpoint::RouteRule;
use super::key::{KeySet, canonical_chunk};
use super::lines::MAX_LINE_BYTES;
use super::record::{LineParser, Record, SkipReason, parse_with};
use super::requests::{RequestCache, RequestInterners};
use super::time;
use crate::events::{Event, Id, Interner, KeyColumn, Logged, NO_KEY};
use crate::text::cache::ReadAhead;

/// How far ahead of the line being parsed a chunk's bytes are asked for
/// (about a dozen lines): a mapped file's next page is then on its way
/// when parsing reaches it (see `docs/performance.md`, eighteenth pass).
const READ_AHEAD: usize = 2048;

/// How many skipped lines per chunk are kept as examples: as many as the
/// report keeps in all, so that the chunks' examples, taken in order, are the
/// input's first skipped lines (found by review: with 5 a chunk, the report
/// showed lines 1, 2, 3, 4, 7 and then the next chunk's, past lines 10, 13…).
pub const EXAMPLES_PER_CHUNK: usize = 10;

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
    /// Entries found glued after another on the same line: each is parsed
    /// or skipped as a line is, so `lines + glued = parsed + skipped`.
    pub glued: u64,
    pub parsed: u64,
    /// Skipped lines by reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// The first few skipped lines: (1-based line number, reason).
    pub examples: Vec<(u64, SkipReason)>,
    /// The first skipped line that was not blank (what `--strict` reports).
    pub first_bad: Option<(u64, SkipReason)>,
    /// The first line that changed the columns ([`SkipReason::ColumnsChanged`]):
    /// an error, whatever `--strict` says.
    pub columns_changed: Option<u64>,
    /// True when any parsed timestamp had a fraction of a second.
    pub subsecond: bool,
    /// Lines whose key or endpoint had bytes that are not UTF-8.
    pub invalid_utf8: u64,
}

impl ChunkResult {
    /// Shifts every line number by `lines_before` (the lines of the input before
    /// this chunk, when it was parsed counting from 1).
    pub fn renumber(&mut self, lines_before: u64) {
        for (line, _) in self.examples.iter_mut().chain(&mut self.first_bad) {
            *line += lines_before;
        }
        if let Some(line) = &mut self.columns_changed {
            *line += lines_before;
        }
    }

    /// Records a skipped line.
    pub fn skip(&mut self, line: u64, reason: SkipReason) {
        *self.skipped.entry(reason).or_default() += 1;
        if reason == SkipReason::ColumnsChanged && self.columns_changed.is_none() {
            self.columns_changed = Some(line);
        }
        if !matches!(reason, SkipReason::Blank | SkipReason::Directive) && self.first_bad.is_none()
        {
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
    /// Which events' paths are interned; the others have path id 0, and
    /// with none [`ChunkResult::paths`] stays empty.
    pub paths: KeptPaths,
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
    if data.is_empty() {
        return out;
    }
    // Sized for typical logs (lines of 150 bytes or more, a third of requests
    // distinct in a chunk), so that the tables rarely grow while parsing.
    let distinct = data.len() / 512;
    let mut state = LineState {
        record: Record::default(),
        key: String::new(),
        extra_key: String::new(),
        requests: RequestCache::with_capacity(distinct),
        replaced_clients: Vec::new(),
        replaced_extra: vec![Vec::new(); ctx.keys.extra.len()],
        clients_with_colon: Vec::new(),
    };
    // Endpoints are as many as the requests when most paths are distinct.
    out.endpoints = Interner::with_capacity(distinct, distinct * 32);
    match ctx.paths {
        KeptPaths::None => {}
        KeptPaths::All => out.paths = Interner::with_capacity(distinct, distinct * 32),
        // Path id 0, of the requests no route named, is no path.
        KeptPaths::Routed => {
            out.paths.intern("");
        }
        // Path id 0, of the requests whose paths are read as logged, is `/`.
        KeptPaths::Unusual => {
            out.paths.intern("/");
        }
    }
    out.events.reserve(data.len() / 128);
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let mut start = 0;
    let mut this_line = first_line;
    let mut ahead = ReadAhead::<READ_AHEAD>::new(body);
    for end in memchr::memchr_iter(b'\n', body) {
        ahead.reached(end);
        parse_line(
            &body[start..end],
            this_line,
            parser,
            ctx,
            &mut state,
            &mut out,
        );
        start = end + 1;
        this_line += 1;
    }
    parse_line(&body[start..], this_line, parser, ctx, &mut state, &mut out);
    canonical_chunk(ctx.keys, &state.clients_with_colon, &mut out);
    out
}

/// Buffers reused from one line to the next.
struct LineState<'a> {
    record: Record<'a>,
    key: String,
    extra_key: String,
    requests: RequestCache,
    /// Whether each client id's name was read from bytes that are not UTF-8
    /// (and so holds `\xHH`).
    replaced_clients: Vec<bool>,
    /// The same, per name of each other key a policy's rule reads.
    replaced_extra: Vec<Vec<bool>>,
    /// The clients whose names have a colon (IPv6 addresses, which may need
    /// writing canonically: see [`canonical_chunk`]).
    clients_with_colon: Vec<Id>,
}

fn parse_line<'a>(
    raw: &'a [u8],
    this_line: u64,
    parser: &mut dyn LineParser,
    ctx: &ChunkContext<'_>,
    state: &mut LineState<'a>,
    out: &mut ChunkResult,
) {
    let line = raw.strip_suffix(b"\r").unwrap_or(raw);
    out.lines += 1;
    if line.len() > MAX_LINE_BYTES {
        out.skip(this_line, SkipReason::TooLong);
        return;
    }
    if line.trim_ascii().is_empty() {
        out.skip(this_line, SkipReason::Blank);
        return;
    }
    // Each entry of the line: one, unless the parser finds others glued on.
    let (mut entry, mut glued_on) = (line, false);
    loop {
        let parsed = parse_entry(entry, glued_on, parser, ctx, state, out);
        let glued = parser.glued();
        match parsed {
            Err(SkipReason::Malformed(_) | SkipReason::BadStatus | SkipReason::BadJson)
                if glued.is_some() =>
            {
                out.skip(this_line, SkipReason::CutShort);
            }
            Err(reason) => out.skip(this_line, reason),
            Ok(()) => out.parsed += 1,
        }
        // A parser's second entry starts inside the entry, after its start.
        let Some(at) = glued.filter(|&at| (1..entry.len()).contains(&at)) else {
            break;
        };
        out.glued += 1;
        (entry, glued_on) = (&entry[at..], true);
    }
}

/// Parses one entry (a line, or part of one holding several: `glued_on`
/// after the first) into an event.
fn parse_entry<'a>(
    line: &'a [u8],
    glued_on: bool,
    parser: &mut dyn LineParser,
    ctx: &ChunkContext<'_>,
    state: &mut LineState<'a>,
    out: &mut ChunkResult,
) -> Result<(), SkipReason> {
    let LineState {
        record,
        key,
        extra_key,
        requests,
        replaced_clients,
        replaced_extra,
        clients_with_colon,
    } = state;
    record.clear(ctx.keys.fields.len());
    parse_with(parser, glued_on, line, record)?;
    let stamp = (record.time)
        .filter(|s| time::in_range(s.ms))
        .ok_or(SkipReason::BadTime)?;
    let key = (ctx.keys.primary.key_value(record, key))
        .ok_or_else(|| ctx.keys.primary.why_no_key(record))?;
    // The virtual host, read only when a route is limited to one.
    let host = ctx
        .routes
        .iter()
        .find_map(|r| r.host.as_ref())
        .map_or(&b""[..], |h| &record.extra[h.field]);
    let request = requests.ids(
        (!record.no_method).then_some(&record.method[..]),
        host,
        &record.path,
        ctx.routes,
        RequestInterners {
            endpoints: &mut out.endpoints,
            paths: (ctx.paths != KeptPaths::None).then_some(&mut out.paths),
            kept: ctx.paths,
            methods: &mut out.methods,
        },
    );
    let client = key.intern(&mut out.clients);
    // Whether the key was read from bytes that are not UTF-8 is a property
    // of its name (they are written `\xHH`), so it is found once per client
    // of the chunk, from its first record.
    if client as usize == replaced_clients.len() {
        let name = out.clients.name(client);
        replaced_clients.push(ctx.keys.primary.writes_bytes_not_text(record));
        if memchr::memchr(b':', name.as_bytes()).is_some() {
            clients_with_colon.push(client);
        }
    }
    let mut invalid_utf8 = request.invalid_utf8 || replaced_clients[client as usize];
    out.subsecond |= stamp.subsecond;
    let extra = (ctx.keys.extra.iter())
        .zip(&mut out.extra_keys)
        .zip(replaced_extra);
    for ((spec, column), replaced) in extra {
        let id: Id = match spec.key_value(record, extra_key) {
            Some(key) => key.intern(&mut column.names),
            None => NO_KEY,
        };
        if id != NO_KEY {
            if id as usize == replaced.len() {
                replaced.push(spec.writes_bytes_not_text(record));
            }
            invalid_utf8 |= replaced[id as usize];
        }
        column.ids.push(id);
    }
    out.invalid_utf8 += u64::from(invalid_utf8);
    out.events.push(Event {
        ts: stamp.ms,
        client,
        endpoint: request.endpoint,
        path: request.path,
        method: request.method,
        status: record.status.unwrap_or(0),
        logged: logged_decision(record),
        protocol: record.protocol,
    });
    Ok(())
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
mod tests;
