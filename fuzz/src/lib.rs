//! Shared checks for the fuzz targets: every target feeds its parser to
//! [`check_chunk`], which runs the chunk parser the pipeline uses and asserts the
//! accounting invariants that must hold for any input, so a fuzz run finds wrong
//! counts as well as panics.

use rlctl::ingest::KeptPaths;
use rlctl::ingest::chunk::{ChunkContext, ChunkResult, EXAMPLES_PER_CHUNK, parse_chunk};
use rlctl::ingest::key::{ForwardedReading, KeyReading, KeySet, KeySpec};
use rlctl::ingest::record::{LineParser, SkipReason};

/// The keys every target records: the client by address, plus user and
/// X-Forwarded-For as extra keys (so the key builders run on fuzzed fields too).
pub fn keys() -> KeySet {
    let mut keys = KeySet::new(KeySpec::parse("ip", Some(24), Some(64)).expect("valid key"));
    keys.add(KeySpec::parse("user", None, None).expect("valid key"));
    keys.add(KeySpec::parse("xff+user", None, None).expect("valid key"));
    // One address as logged: its names are put in canonical form per chunk.
    keys.add(KeySpec::parse("ip", None, None).expect("valid key"));
    // X-Forwarded-For as each gateway reads it (HAProxy's and AWS WAF's
    // address parsers run on fuzzed fields too).
    keys.add_policy_keys(
        [],
        &[
            ForwardedReading::TokenAsWritten,
            ForwardedReading::AddressElseConnection,
            ForwardedReading::AddressOrUncounted,
        ]
        .map(KeyReading::addresses),
    );
    keys
}

/// The number of lines the chunk parser must see in `data`.
pub fn expected_lines(data: &[u8]) -> u64 {
    if data.is_empty() {
        return 0;
    }
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    body.split(|&b| b == b'\n').count() as u64
}

/// Parses `data` as one chunk and checks the accounting; then checks that a
/// fresh parser and a split into two chunks at a line boundary give the same
/// events and counts (parsers keep caches, chunks are parsed in any order).
pub fn check_chunk(data: &[u8], parser: &mut dyn LineParser, keys: &KeySet) -> ChunkResult {
    let ctx = ChunkContext {
        keys,
        routes: &[],
        paths: KeptPaths::All,
    };
    let whole = parse_chunk(data, 1, parser, &ctx);
    check_accounting(data, 1, &whole, keys);

    let mut fresh = parser.fork();
    let again = parse_chunk(data, 1, fresh.as_mut(), &ctx);
    assert_eq!(summary(&whole), summary(&again), "a fresh parser disagrees");

    if let Some(cut) = memchr_middle(data) {
        let (head, tail) = data.split_at(cut + 1);
        let mut first_parser = parser.fork();
        let first = parse_chunk(head, 1, first_parser.as_mut(), &ctx);
        let second_start = 1 + first.lines;
        // A parser whose lines depend on those before them parses its
        // chunks in order, the second after the first (as the pipeline does).
        let second_parser = match parser.in_order() {
            true => &mut first_parser,
            false => &mut fresh,
        };
        let second = parse_chunk(tail, second_start, second_parser.as_mut(), &ctx);
        check_accounting(head, 1, &first, keys);
        check_accounting(tail, second_start, &second, keys);
        assert_eq!(first.lines + second.lines, whole.lines);
        assert_eq!(first.glued + second.glued, whole.glued);
        assert_eq!(first.parsed + second.parsed, whole.parsed);
        let mut skipped = first.skipped.clone();
        for (reason, n) in &second.skipped {
            *skipped.entry(*reason).or_default() += n;
        }
        assert_eq!(skipped, whole.skipped, "skip reasons depend on chunking");
        let times: Vec<i64> = first
            .events
            .iter()
            .chain(&second.events)
            .map(|e| e.ts)
            .collect();
        assert_eq!(times, whole.events.iter().map(|e| e.ts).collect::<Vec<_>>());
    }
    whole
}

/// The newline closest to the middle of `data`, if it is not the last byte.
fn memchr_middle(data: &[u8]) -> Option<usize> {
    let mid = data.len() / 2;
    let at = data[mid..]
        .iter()
        .position(|&b| b == b'\n')
        .map(|p| mid + p)
        .or_else(|| data[..mid].iter().rposition(|&b| b == b'\n'))?;
    (at + 1 < data.len()).then_some(at)
}

type Summary = (u64, u64, Vec<(SkipReason, u64)>, Vec<i64>, Vec<String>);

fn summary(r: &ChunkResult) -> Summary {
    (
        r.lines + r.glued,
        r.parsed,
        r.skipped.iter().map(|(k, v)| (*k, *v)).collect(),
        r.events.iter().map(|e| e.ts).collect(),
        r.events
            .iter()
            .map(|e| {
                format!(
                    "{}|{}|{}|{}",
                    r.clients.name(e.client),
                    r.endpoints.name(e.endpoint),
                    r.methods.name(e.method),
                    e.status
                )
            })
            .collect(),
    )
}

/// lines + glued = parsed + skipped, one event per parsed entry, ids in range.
pub fn check_accounting(data: &[u8], first_line: u64, r: &ChunkResult, keys: &KeySet) {
    assert_eq!(r.lines, expected_lines(data), "lines miscounted");
    let skipped: u64 = r.skipped.values().sum();
    assert_eq!(r.lines + r.glued, r.parsed + skipped, "lines + glued != parsed + skipped");
    assert_eq!(r.events.len() as u64, r.parsed);
    assert_eq!(r.extra_keys.len(), keys.extra.len());
    for column in &r.extra_keys {
        assert_eq!(column.ids.len(), r.events.len());
    }
    for e in &r.events {
        assert!((e.client as usize) < r.clients.len());
        assert!((e.endpoint as usize) < r.endpoints.len());
        assert!((e.path as usize) < r.paths.len());
        assert!((e.method as usize) < r.methods.len());
        assert!(!r.clients.name(e.client).is_empty(), "empty client key");
    }
    assert!(r.examples.len() <= EXAMPLES_PER_CHUNK);
    let last = first_line + r.lines;
    // Entries glued onto one line share its number.
    assert!(r.examples.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(
        r.examples
            .iter()
            .all(|(n, _)| (first_line..last).contains(n))
    );
    if let Some((n, reason)) = r.first_bad {
        assert!(reason != SkipReason::Blank && (first_line..last).contains(&n));
    }
    assert!(r.invalid_utf8 <= r.parsed);
}

/// Splits `data` at its first newline: a configuration line and the log lines.
pub fn split_first_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[]),
    }
}
