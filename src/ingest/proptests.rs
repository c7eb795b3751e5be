//! Property tests of ingestion on arbitrary and hostile input: no parser panics,
//! and every line is accounted for (`lines + glued = parsed + skipped`, one
//! event per parsed entry) whatever the bytes, the format string, the field mapping or the
//! chunking. The fuzz targets in `fuzz/` run the same checks for much longer.

use crate::ingest::KeptPaths;
use proptest::prelude::*;

use super::arrival::TimeOf;
use super::chunk::{ChunkContext, ChunkResult, parse_chunk};
use super::combined::CombinedParser;
use super::container::{ContainerParser, Wrapper};
use super::detect::choose;
use super::formats;
use super::json::JsonParser;
use super::key::{KeySet, KeySpec};
use super::log_format::LogFormatParser;
use super::nginx_conf::{find_log_format, log_formats};
use super::record::{LineParser, SkipReason};
use super::{FormatChoice, Settings, ingest};

pub(crate) fn keys() -> KeySet {
    let mut keys = KeySet::new(KeySpec::parse("ip", Some(24), Some(64)).unwrap());
    keys.add(KeySpec::parse("user", None, None).unwrap());
    keys.add(KeySpec::parse("xff+user", None, None).unwrap());
    keys
}

/// The lines the chunk parser must count in `data`.
fn line_count(data: &[u8]) -> u64 {
    if data.is_empty() {
        return 0;
    }
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    body.split(|&b| b == b'\n').count() as u64
}

/// Parses `data` as one chunk and checks the accounting.
pub(crate) fn parse_and_reconcile(
    data: &[u8],
    parser: &mut dyn LineParser,
    keys: &KeySet,
) -> ChunkResult {
    let ctx = ChunkContext {
        keys,
        routes: &[],
        paths: KeptPaths::All,
    };
    let r = parse_chunk(data, 1, parser, &ctx);
    assert_eq!(r.lines, line_count(data), "lines miscounted");
    assert_eq!(
        r.lines + r.glued,
        r.parsed + r.skipped.values().sum::<u64>()
    );
    assert_eq!(r.events.len() as u64, r.parsed);
    for column in &r.extra_keys {
        assert_eq!(column.ids.len(), r.events.len());
    }
    r
}

/// Lines built from pieces of real lines and hostile bytes, so that some parse
/// and the rest fail in every way a parser can fail.
fn log_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(&b"10.0.0.1 - - [05/Jan/2026:00:00:00 +0000] \"GET /a HTTP/1.1\" 200 5"[..]),
        Just(&b"10.0.0.3 - bob [05/Jan/2026:00:00:02 +0100] \"GET /b HTTP/1.0\" 404"[..]),
        Just(&b" \"-\" \"ua\" \"203.0.113.9, 10.0.0.1\""[..]),
        Just(&b"1767571200.123 10.0.0.2 \"POST /login HTTP/1.1\" 429 0.001 \"bob\""[..]),
        Just(&b"{\"time\":\"2026-01-05T00:00:01Z\",\"remote_addr\":\"::1\",\"request\":\"GET /x HTTP/1.1\",\"status\":200}"[..]),
        Just(&b"\n"[..]),
        Just(&b"\r\n"[..]),
        Just(&b"\""[..]),
        Just(&b"\\"[..]),
        Just(&b"["[..]),
        Just(&b"]"[..]),
        Just(&b"{"[..]),
        Just(&b" "[..]),
        Just(&b"\x00\xff\xfe\x1b[2J"[..]),
        Just(&b"<script>|`=cmd"[..]),
        Just(&b"2026-01-05T00:00:00.123456789Z stdout F "[..]),
        Just(&b"2026-01-05T00:00:00Z stderr P "[..]),
        Just(&b"{\"log\":\""[..]),
        Just(&b"\\n\",\"stream\":\"stdout\",\"time\":\"2026-01-05T00:00:00Z\"}"[..]),
        Just(&b"\\\""[..]),
        Just(&b"#Fields: date time c-ip cs-method cs-uri-stem cs-uri-query sc-status time-taken\n"[..]),
        Just(&b"2026-01-05 00:00:01 192.0.2.1 GET /a q=1 200 15"[..]),
        Just(&b"\t"[..]),
        Just(&b"h2 2026-01-05T00:00:01.100000Z app/lb/1 192.0.2.1:4 - -1 -1 -1 460 - 1 0 \"GET https://h:443/ HTTP/2.0\" \"ua\" - - - \"Root\" \"h\" \"-\" 0 2026-01-05T00:00:00.900000Z"[..]),
        Just(&b"haproxy[1]: 192.0.2.1:3 [05/Jan/2026:00:00:00.120] fe be/s1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {h} {} \"GET / HTTP/1.1\""[..]),
        Just(&b"[2026-01-05T00:00:00.310Z] \"POST /api HTTP/2\" 204 - 154 0 226 100 \"203.0.113.9\" \"ua\" \"id\" \"auth\" \"10.0.2.1:80\""[..]),
    ];
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(piece, 0..30).prop_map(|pieces| pieces.concat()),
    ]
}

/// Format strings mixing nginx variables, literals and stray `$`, `{`, `}`.
fn format_string() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("$msec"),
        Just("$time_local"),
        Just("$time_iso8601"),
        Just("$remote_addr"),
        Just("$request"),
        Just("$request_method"),
        Just("$request_uri"),
        Just("$uri"),
        Just("$status"),
        Just("$remote_user"),
        Just("$http_x_forwarded_for"),
        Just("$limit_req_status"),
        Just("$request_time"),
        Just("${msec}"),
        Just("${"),
        Just("$"),
        Just(" "),
        Just("\""),
        Just("["),
        Just("]"),
        Just(" - "),
        Just("é"),
        Just("\\"),
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn combined_accounts_for_every_line(data in log_bytes()) {
        let keys = keys();
        let mut parser = CombinedParser::new(&["http_user_agent".into()]).unwrap();
        parse_and_reconcile(&data, &mut parser, &keys);
    }

    #[test]
    fn container_wrappers_account_for_every_line(data in log_bytes(), docker in any::<bool>(), json in any::<bool>()) {
        let keys = keys();
        let inner: Box<dyn LineParser> = if json {
            Box::new(JsonParser::new(&[], &[]).unwrap())
        } else {
            Box::new(CombinedParser::new(&[]).unwrap())
        };
        let wrapper = if docker { Wrapper::DockerJson } else { Wrapper::Cri };
        parse_and_reconcile(&data, &mut ContainerParser::new(wrapper, inner), &keys);
    }

    #[test]
    fn every_named_source_accounts_for_every_line(data in log_bytes(), source in 0..formats::SOURCES.len(), logged in any::<bool>()) {
        let keys = keys();
        let settings = Settings {
            keys: keys.clone(),
            time_of: if logged { TimeOf::Logged } else { TimeOf::Arrival },
            ..Settings::for_detection()
        };
        // Header-driven sources need a `#Fields:` line in the data.
        if let Ok(mut parser) = formats::parser(&formats::SOURCES[source], &settings, &data) {
            parse_and_reconcile(&data, parser.as_mut(), &keys);
        }
    }

    #[test]
    fn detection_never_panics_and_its_parser_accounts_for_every_line(data in log_bytes()) {
        let keys = keys();
        let settings = Settings { keys: keys.clone(), ..Settings::for_detection() };
        if let Ok(mut chosen) = choose(&settings, Some(&data), "input") {
            parse_and_reconcile(&data, chosen.parser.as_mut(), &keys);
        }
    }

    #[test]
    fn json_accounts_for_every_line(
        data in log_bytes(),
        mapping in prop::collection::vec(("[a-z]{1,8}", "[a-zA-Z_.@-]{0,12}"), 0..3),
    ) {
        let keys = keys();
        let mapping: Vec<(String, String)> = mapping;
        if let Ok(mut parser) = JsonParser::new(&mapping, &["request.headers.ua".into()]) {
            parse_and_reconcile(&data, &mut parser, &keys);
        }
    }

    #[test]
    fn any_log_format_compiles_or_fails_cleanly_and_accounts_for_every_line(
        format in format_string(),
        data in log_bytes(),
    ) {
        let keys = keys();
        if let Ok(mut parser) = LogFormatParser::new(&format, &[]) {
            parse_and_reconcile(&data, &mut parser, &keys);
        }
    }

    #[test]
    fn nginx_conf_extraction_never_panics(conf in "(log_format|main|escape=json|'|\"|\\\\|\\$msec|#|;|\\{|\\}|\n| |[a-z])*") {
        let combined = find_log_format(&conf, "combined");
        match log_formats(&conf) {
            Ok(formats) => {
                prop_assert!(combined.is_ok());
                for f in formats {
                    prop_assert_eq!(find_log_format(&conf, &f.name).unwrap().name, f.name);
                }
            }
            Err(_) => prop_assert!(combined.is_err()),
        }
    }

    #[test]
    fn chunking_does_not_change_the_result(data in log_bytes(), cut in any::<prop::sample::Index>()) {
        let keys = keys();
        let ctx = ChunkContext {
            keys: &keys,
            routes: &[],
            paths: KeptPaths::All,
        };
        let mut parser = CombinedParser::new(&[]).unwrap();
        let whole = parse_chunk(&data, 1, &mut parser, &ctx);
        let newlines: Vec<usize> = data.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i).collect();
        prop_assume!(!newlines.is_empty());
        let (head, tail) = data.split_at(newlines[cut.index(newlines.len())] + 1);
        let first = parse_chunk(head, 1, &mut parser, &ctx);
        let second = parse_chunk(tail, 1 + first.lines, &mut CombinedParser::new(&[]).unwrap(), &ctx);
        prop_assert_eq!(first.lines + second.lines, whole.lines);
        prop_assert_eq!(first.parsed + second.parsed, whole.parsed);
        let times: Vec<i64> = first.events.iter().chain(&second.events).map(|e| e.ts).collect();
        prop_assert_eq!(times, whole.events.iter().map(|e| e.ts).collect::<Vec<_>>());
    }
}

proptest! {
    // Each case writes a file and runs the whole pipeline: fewer cases.
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn the_whole_pipeline_accounts_for_every_line(
        data in log_bytes(),
        format in 0usize..4,
        strict in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input.log");
        std::fs::write(&path, &data).unwrap();
        let settings = Settings {
            inputs: vec![path],
            format: [
                FormatChoice::Auto,
                FormatChoice::Combined,
                FormatChoice::Json,
                FormatChoice::log_format("$msec $remote_addr \"$request\" $status $request_time \"$remote_user\""),
            ][format].clone(),
            json_fields: Vec::new(),
            keys: keys(),
            routes: Vec::new(),
            strict,
            progress: None,
            paths: KeptPaths::All,
            time_of: Default::default(),
        };
        if let Ok(done) = ingest(&settings) {
            let report = &done.report;
            prop_assert_eq!(report.lines, line_count(&data));
            prop_assert_eq!(report.lines + report.glued, report.parsed + report.skipped);
            prop_assert_eq!(report.skipped, report.skipped_by_reason.values().sum::<u64>());
            prop_assert_eq!(done.table.len() as u64, report.parsed);
            prop_assert!(done.table.ts.windows(2).all(|w| w[0] <= w[1]));
            if strict {
                let benign = [SkipReason::Blank.to_string(), SkipReason::Directive.to_string()];
                prop_assert!(report.skipped_by_reason.keys().all(|r| benign.contains(r)));
            }
        }
    }
}

/// A whole combined line whose address is IPv4 or IPv6, ending with a quote
/// (the user agent) or with `-` (a `common` line without bytes), and the
/// same line cut short anywhere after its time.
pub(crate) fn glueable_line() -> impl Strategy<Value = (String, String)> {
    let address = prop_oneof![
        (1u8..=255, any::<u8>(), any::<u8>(), any::<u8>())
            .prop_map(|(a, b, c, d)| format!("{a}.{b}.{c}.{d}")),
        (0u16..0xffff).prop_map(|h| format!("2001:db8::{h:x}")),
    ];
    (
        address,
        "-|bob",
        0u32..60,
        "(GET|POST) /[a-z0-9./]{0,10}",
        "(\"-\" \"[a-zA-Z0-9/. é€😀<&]{0,10}\"|-)",
        any::<prop::sample::Index>(),
    )
        .prop_map(|(addr, user, second, request, tail, cut)| {
            let head = format!("{addr} - {user} [05/Jan/2026:00:00:{second:02} +0000] \"");
            let line = match tail.as_str() {
                "-" => format!("{head}{request} HTTP/1.1\" 200 -"),
                tail => format!("{head}{request} HTTP/1.1\" 200 5 {tail}"),
            };
            let end = line.floor_char_boundary(head.len() + cut.index(line.len() - head.len()));
            let short = &line[..end];
            (line.clone(), short.to_string())
        })
}

/// Each event of a chunk as text: time, client, endpoint, status.
pub(crate) fn events_of(r: &ChunkResult) -> Vec<String> {
    r.events
        .iter()
        .map(|e| {
            let (client, endpoint) = (r.clients.name(e.client), r.endpoints.name(e.endpoint));
            format!("{} {client} {endpoint} {}", e.ts, e.status)
        })
        .collect()
}

proptest! {
    /// Two entries glued onto one line are read as the two lines they should
    /// have been; an entry cut short before the second is skipped or read,
    /// never taking the second's fields, when the text at the cut cannot be
    /// read as part of the second's address (a hex digit, `.` or `:`).
    #[test]
    fn entries_glued_onto_one_line_are_read_as_two(
        (first, cut_first) in glueable_line(),
        (second, _) in glueable_line(),
    ) {
        let parse = |data: String| parse_and_reconcile(data.as_bytes(), &mut CombinedParser::new(&[]).unwrap(), &keys());
        let apart = parse(format!("{first}\n{second}\n"));
        prop_assert_eq!(apart.parsed, 2);
        let glued = parse(format!("{first}{second}\n"));
        prop_assert_eq!((glued.lines, glued.glued), (1, 1));
        prop_assert_eq!(events_of(&glued), events_of(&apart));

        let last = cut_first.as_bytes()[cut_first.len() - 1];
        if !(last.is_ascii_hexdigit() || last == b'.' || last == b':') {
            let cut = parse(format!("{cut_first}{second}\n"));
            prop_assert_eq!((cut.lines, cut.glued), (1, 1));
            let (cut, apart) = (events_of(&cut), events_of(&apart));
            prop_assert_eq!(cut.last(), apart.last());
        }
    }
}

/// A JSON line: an nginx `escape=json` entry, a Caddy entry (nested
/// objects, a `{` in a string), or a message that is no access entry; and
/// the same line cut short anywhere.
pub(crate) fn json_line() -> impl Strategy<Value = (String, String)> {
    (
        0u32..3,
        (1u8..=255, any::<u8>()),
        0u32..60,
        "/[a-z0-9{}\"]{0,8}",
        any::<prop::sample::Index>(),
    )
        .prop_map(|(kind, (a, b), second, path, cut)| {
            let addr = format!("{a}.{b}.0.1");
            let path = path.replace('"', "\\\"");
            let line = match kind {
                0 => format!(
                    r#"{{"time":"2026-01-05T00:00:{second:02}Z","remote_addr":"{addr}","request":"GET {path} HTTP/1.1","status":200}}"#
                ),
                1 => format!(
                    r#"{{"level":"info","ts":{}.5,"request":{{"remote_ip":"{addr}","method":"GET","uri":"{path}","headers":{{"User-Agent":["x{{y"]}}}},"status":200}}"#,
                    1_767_571_200 + second
                ),
                _ => format!(r#"{{"level":"info","msg":"started {second}"}}"#),
            };
            let short = line[..1 + cut.index(line.len() - 1)].to_string();
            (line, short)
        })
}

proptest! {
    /// JSON entries glued onto one line are read as the two lines they
    /// should have been; after an entry cut short, the second is read as it
    /// is on its own.
    #[test]
    fn json_entries_glued_onto_one_line_are_read_as_two(
        (first, cut_first) in json_line(),
        (second, _) in json_line(),
    ) {
        let parse = |data: String| {
            parse_and_reconcile(data.as_bytes(), &mut JsonParser::new(&[], &[]).unwrap(), &keys())
        };
        let apart = parse(format!("{first}\n{second}\n"));
        let glued = parse(format!("{first}{second}\n"));
        prop_assert_eq!((glued.lines, glued.glued), (1, 1));
        prop_assert_eq!(events_of(&glued), events_of(&apart));
        prop_assert_eq!(&glued.skipped, &apart.skipped);
        let alone = parse(format!("{second}\n"));
        let cut = parse(format!("{cut_first}{second}\n"));
        if alone.parsed == 1 {
            prop_assert_eq!((cut.lines, cut.glued), (1, 1));
            let (cut, alone) = (events_of(&cut), events_of(&alone));
            prop_assert_eq!(cut.last(), alone.last());
        }
    }
}
