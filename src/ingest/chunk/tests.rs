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
fn a_line_is_counted_once_when_any_ingested_key_is_not_utf8() {
    // User j\xFFdoe seen three times, once with a path that is not UTF-8
    // either; bob is plain. Each line counts once, whichever key holds it.
    let data = b"1.2.3.4 - j\xffdoe [10/Oct/2000:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1\n5.6.7.8 - j\xffdoe [10/Oct/2000:13:55:37 +0000] \"GET /\xff HTTP/1.1\" 200 1\n1.2.3.4 - bob [10/Oct/2000:13:55:38 +0000] \"GET /a HTTP/1.1\" 200 1\n1.2.3.4 - j\xffdoe [10/Oct/2000:13:55:39 +0000] \"GET /a HTTP/1.1\" 200 1\n";
    let mut keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
    let parse = |keys: &KeySet| {
        let ctx = ChunkContext {
            keys,
            routes: &[],
            paths: KeptPaths::All,
        };
        parse_chunk(data, 1, &mut CombinedParser::new(&[]).unwrap(), &ctx)
    };
    assert_eq!(parse(&keys).invalid_utf8, 1);
    keys.add(KeySpec::parse("user", None, None).unwrap());
    let r = parse(&keys);
    assert_eq!((r.parsed, r.invalid_utf8), (4, 3));
    assert_eq!(names(&r.extra_keys[0].names), ["j\\xFFdoe", "bob"]);
}

#[test]
fn routed_paths_only_are_kept_for_the_requests_a_route_named() {
    let data = b"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] \"GET /p/about HTTP/1.1\" 200 1\n1.2.3.4 - - [10/Oct/2000:13:55:37 +0000] \"GET /p/x-1 HTTP/1.1\" 200 1\n1.2.3.4 - - [10/Oct/2000:13:55:38 +0000] \"GET /p/team?a=1 HTTP/1.1\" 200 1\n";
    let keys = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
    let routes = [crate::ingest::endpoint::RouteRule::parse("^/p/(about|team)$=pages").unwrap()];
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
    use crate::ingest::endpoint::{endpoint, replayed_path};
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
            out.skip(n, keys.primary.why_no_key(&record));
            continue;
        }
        endpoint(
            (!record.no_method).then_some(&record.method[..]),
            &record.path,
            &[],
            &mut name,
        );
        out.invalid_utf8 +=
            u64::from(keys.primary.writes_bytes_not_text(&record) || name.contains('\u{fffd}'));
        out.parsed += 1;
        let path = String::from_utf8_lossy(&record.path);
        out.events.push(Event {
            ts: stamp.ms,
            client: out.clients.intern(&key),
            endpoint: out.endpoints.intern(&name),
            // An absolute-form target's path, its origin left out, with a
            // query a product refuses (every path is kept, as for a replay).
            path: out.paths.intern(replayed_path(&path)),
            method: out.methods.intern(&String::from_utf8_lossy(&record.method)),
            status: record.status.unwrap_or(0),
            logged: logged_decision(&record),
            protocol: record.protocol,
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
