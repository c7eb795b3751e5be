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
use super::record::{LineParser, Record, SkipReason};
use super::requests::{RequestCache, RequestInterners};
use super::time;
use crate::events::{Event, Id, Interner, KeyColumn, Logged, NO_KEY};
use crate::text::cache::ReadAhead;

/// How far ahead of the line being parsed a chunk's bytes are asked for
/// (about a dozen lines): a mapped file's next page is then on its way
/// when parsing reaches it (see `docs/performance.md`, eighteenth pass).
const READ_AHEAD: usize = 2048;

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
    /// Shifts every line number by `lines_before` (the lines of the input before
    /// this chunk, when it was parsed counting from 1).
    pub fn renumber(&mut self, lines_before: u64) {
        for (line, _) in self.examples.iter_mut().chain(&mut self.first_bad) {
            *line += lines_before;
        }
    }

    /// Records a skipped line.
    pub fn skip(&mut self, line: u64, reason: SkipReason) {
        *self.skipped.entry(reason).or_default() += 1;
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
    /// Whether each client id's name holds U+FFFD.
    replaced_clients: Vec<bool>,
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
    let LineState {
        record,
        key,
        extra_key,
        requests,
        replaced_clients,
        clients_with_colon,
    } = state;
    record.clear(ctx.keys.fields.len());
    if let Err(reason) = parser.parse(line, record) {
        out.skip(this_line, reason);
        return;
    }
    let Some(stamp) = record.time.filter(|s| time::in_range(s.ms)) else {
        out.skip(this_line, SkipReason::BadTime);
        return;
    };
    let Some(key) = ctx.keys.primary.key_value(record, key) else {
        out.skip(this_line, SkipReason::NoClient);
        return;
    };
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
            routed_paths_only: ctx.paths == KeptPaths::Routed,
            methods: &mut out.methods,
        },
    );
    let client = key.intern(&mut out.clients);
    // Whether the key holds U+FFFD ([`KeyValue::has_replacement`]) is a
    // property of its name (bytes that are not UTF-8 are interned as their
    // lossy text), so it is found once per client of the chunk.
    //
    // [`KeyValue::has_replacement`]: super::key::KeyValue::has_replacement
    if client as usize == replaced_clients.len() {
        let name = out.clients.name(client);
        replaced_clients.push(name.contains('\u{fffd}'));
        if memchr::memchr(b':', name.as_bytes()).is_some() {
            clients_with_colon.push(client);
        }
    }
    if request.invalid_utf8 || replaced_clients[client as usize] {
        out.invalid_utf8 += 1;
    }
    out.subsecond |= stamp.subsecond;
    out.parsed += 1;
    for (spec, column) in ctx.keys.extra.iter().zip(&mut out.extra_keys) {
        let id: Id = match spec.key_value(record, extra_key) {
            Some(key) => key.intern(&mut column.names),
            None => NO_KEY,
        };
        column.ids.push(id);
    }
    out.events.push(Event {
        ts: stamp.ms,
        client,
        endpoint: request.endpoint,
        path: request.path,
        method: request.method,
        status: record.status.unwrap_or(0),
        logged: logged_decision(record),
    });
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
            paths: KeptPaths::All,
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
    fn routed_paths_only_are_kept_for_the_requests_a_route_named() {
        let data = b"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /p/about HTTP/1.1\" 200 1\n1.2.3.4 - - [10/Oct/2000:13:55:37 +0000] \"GET /p/x-1 HTTP/1.1\" 200 1\n1.2.3.4 - - [10/Oct/2000:13:55:38 +0000] \"GET /p/team?a=1 HTTP/1.1\" 200 1\n";
        let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let routes =
            [crate::ingest::endpoint::RouteRule::parse("^/p/(about|team)$=pages").unwrap()];
        let ctx = ChunkContext {
            keys: &keys,
            routes: &routes,
            paths: KeptPaths::Routed,
        };
        let r = parse_chunk(data, 1, &mut CombinedParser::new(&[]).unwrap(), &ctx);
        let paths: Vec<&str> = r.events.iter().map(|e| r.paths.name(e.path)).collect();
        assert_eq!(paths, ["/p/about", "", "/p/team"]);
        assert_eq!(
            r.paths.len(),
            3,
            "no path interned for the unrouted request"
        );
    }

    /// Parsing without the request cache, as every line was parsed before it.
    fn parse_uncached(data: &[u8], parser: &mut dyn LineParser, keys: &KeySet) -> ChunkResult {
        use crate::ingest::endpoint::endpoint;
        let mut out = ChunkResult::default();
        let (mut key, mut name) = (String::new(), String::new());
        for (n, line) in (1..).zip(
            data.strip_suffix(b"\n")
                .unwrap_or(data)
                .split(|&b| b == b'\n'),
        ) {
            out.lines += 1;
            let mut record = Record::default();
            if line.trim_ascii().is_empty() {
                out.skip(n, SkipReason::Blank);
                continue;
            }
            if let Err(reason) = parser.parse(line, &mut record) {
                out.skip(n, reason);
                continue;
            }
            let Some(stamp) = record.time.filter(|s| time::in_range(s.ms)) else {
                out.skip(n, SkipReason::BadTime);
                continue;
            };
            if !keys.primary.build(&record, &mut key) {
                out.skip(n, SkipReason::NoClient);
                continue;
            }
            endpoint(
                (!record.no_method).then_some(&record.method[..]),
                &record.path,
                &[],
                &mut name,
            );
            out.invalid_utf8 += u64::from(key.contains('\u{fffd}') || name.contains('\u{fffd}'));
            out.parsed += 1;
            let path = String::from_utf8_lossy(&record.path);
            out.events.push(Event {
                ts: stamp.ms,
                client: out.clients.intern(&key),
                endpoint: out.endpoints.intern(&name),
                path: out
                    .paths
                    .intern(path.split(['?', '#']).next().unwrap_or_default()),
                method: out.methods.intern(&String::from_utf8_lossy(&record.method)),
                status: record.status.unwrap_or(0),
                logged: logged_decision(&record),
            });
        }
        out
    }

    fn names(i: &Interner) -> Vec<String> {
        i.names().map(str::to_string).collect()
    }

    proptest::proptest! {
        #[test]
        fn the_request_cache_changes_no_result(
            lines in proptest::collection::vec((0usize..5, 0usize..6, 0usize..14, 0usize..3), 0..60)
        ) {
            let addrs = ["1.2.3.4", "5.6.7.8", "\"9.9.9.9, 10.0.0.1\" 10.0.0.2", "-", "\u{fffd}x"];
            let methods = ["GET", "POST", "get", "-", "", "PUT"];
            let targets = [
                "/a/1?x=1", "/a/2#f", "http://h?x/a/3", "/\u{e9}/4", "/users/12", "", "?q", "/a/1", "/s?x=/1",
                "/a", "/12", "/a/1/b", "/a/0123456789abcdef0", "/a/1/",
            ];
            let mut data = Vec::new();
            for (a, m, t, shape) in lines {
                let request = format!("{} {} HTTP/1.1", methods[m], targets[t]);
                let line = match shape {
                    0 => format!("{} - - [10/Oct/2000:13:55:36 +0000] \"{request}\" 200 1 \"-\" \"ua\"", addrs[a]),
                    1 => format!("{} - - [10/Oct/2000:13:55:37 +0000] \"{request}\" 429 1", addrs[a]),
                    _ => "not a log line".to_string(),
                };
                data.extend(line.as_bytes());
                data.push(b'\n');
            }
            data.extend(b"1.1.1.1 - - [10/Oct/2000:13:55:38 +0000] \"GET /\xff/5 HTTP/1.1\" 200 1\n");
            // A client whose address is not UTF-8, seen twice.
            for _ in 0..2 {
                data.extend(b"\xfe1.1.1.1 - - [10/Oct/2000:13:55:38 +0000] \"GET /a HTTP/1.1\" 200 1\n");
            }
            let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
            let ctx = ChunkContext {
                keys: &keys,
                routes: &[],
                paths: KeptPaths::All,
            };
            let mut parser = CombinedParser::new(&[]).unwrap().with_xff(false);
            let got = parse_chunk(&data, 1, &mut parser, &ctx);
            let want = parse_uncached(&data, &mut CombinedParser::new(&[]).unwrap(), &keys);
            proptest::prop_assert_eq!(&got.events, &want.events);
            proptest::prop_assert_eq!(names(&got.clients), names(&want.clients));
            proptest::prop_assert_eq!(names(&got.endpoints), names(&want.endpoints));
            proptest::prop_assert_eq!(names(&got.paths), names(&want.paths));
            proptest::prop_assert_eq!(names(&got.methods), names(&want.methods));
            proptest::prop_assert_eq!((got.lines, got.parsed, got.invalid_utf8), (want.lines, want.parsed, want.invalid_utf8));
            proptest::prop_assert_eq!(&got.skipped, &want.skipped);
            proptest::prop_assert_eq!(&got.examples, &want.examples);
        }
    }
}
