use super::*;
use crate::ingest::formats;

fn layout(name: &str) -> &'static Layout {
    match formats::named(name).map(|s| &s.family) {
        Some(formats::Family::Columns(layout)) => layout,
        _ => panic!("{name} is not a columns source"),
    }
}

fn names(text: &str) -> Vec<String> {
    text.split(' ').map(str::to_string).collect()
}

fn parse<'a>(parser: &mut ColumnsParser, line: &'a str) -> Result<Record<'a>, SkipReason> {
    let mut r = Record::default();
    r.clear(parser.extra.len());
    parser.parse(line.as_bytes(), &mut r).map(|()| r)
}

#[test]
fn spaces_and_quoted_columns() {
    let mut spans = Vec::new();
    let line = br#"a "b c" "" d "e"f" g"#;
    split_spaces(line, &mut spans).unwrap();
    let got: Vec<&[u8]> = spans.iter().map(|&(s, e)| &line[s..e]).collect();
    assert_eq!(got, [&b"a"[..], b"b c", b"", b"d", br#"e"f"#, b"g"]);
    spans.clear();
    assert!(split_spaces(br#"a "b"#, &mut spans).is_err());
    // A backslash escapes a quote, not an escaped backslash (found by review:
    // ELB and ALB user agents such as `Alba 10\" Build`).
    spans.clear();
    let line = br#""Mozilla \"evil\" x" "a\\" "\"q\"" z"#;
    split_spaces(line, &mut spans).unwrap();
    let got: Vec<&[u8]> = spans.iter().map(|&(s, e)| &line[s..e]).collect();
    assert_eq!(
        got,
        [&br#"Mozilla \"evil\" x"#[..], br#"a\\"#, br#"\"q\""#, b"z"]
    );
}

#[test]
fn alb_entries() {
    let fields: Vec<String> = ALB_NAMES.iter().map(|s| s.to_string()).collect();
    let mut p = ColumnsParser::new(
        layout("alb"),
        &fields,
        Separator::Space,
        &["user_agent".into()],
        TimeOf::Arrival,
    )
    .unwrap();
    let line = r#"h2 2026-01-05T00:00:01.100000Z app/my-lb/50dc6c495c0c9188 2001:db8::1:51000 - -1 -1 -1 460 - 120 0 "GET https://www.example.com:443/api?x=1 HTTP/2.0" "Mozilla/5.0 (X11)" ECDHE-RSA-AES128-GCM-SHA256 TLSv1.2 - "Root=1-58337262-36d228ad5d99923122bbe354" "www.example.com" "arn:aws:acm:us-east-2:123456789012:certificate/12345678-1234-1234-1234-123456789012" -1 2026-01-05T00:00:00.900000Z "waf,forward" "-" "-" "-" "-" "-" "-" TID_1234"#;
    let r = parse(&mut p, line).unwrap();
    assert_eq!(&*r.addr, b"2001:db8::1");
    assert_eq!(
        (&*r.method, &*r.path),
        (&b"GET"[..], &b"https://www.example.com:443/api?x=1"[..])
    );
    assert_eq!(
        (r.status, &*r.extra[0]),
        (Some(460), &b"Mozilla/5.0 (X11)"[..])
    );
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_900);
    // An escaped quote followed by a space stays inside its column.
    let escaped = line.replace("\"Mozilla/5.0 (X11)\"", r#""Mozilla \"evil\" x""#);
    let r = parse(&mut p, &escaped).unwrap();
    assert_eq!(&*r.extra[0], br#"Mozilla \"evil\" x"#);
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_900);
    p.time_of = TimeOf::Logged;
    assert_eq!(
        parse(&mut p, line).unwrap().time.unwrap().ms,
        1_767_571_201_100
    );
    // Another connection type is not an ALB entry.
    let other = line.replacen("h2 ", "tcp ", 1);
    assert!(matches!(
        parse(&mut p, &other),
        Err(SkipReason::Malformed(_))
    ));
    assert!(matches!(
        parse(&mut p, "http 2026-01-05T00:00:01Z"),
        Err(SkipReason::Malformed(_))
    ));
}

const ALB_NAMES: &[&str] = &[
    "type",
    "time",
    "elb",
    "client:port",
    "target:port",
    "request_processing_time",
    "target_processing_time",
    "response_processing_time",
    "elb_status_code",
    "target_status_code",
    "received_bytes",
    "sent_bytes",
    "request",
    "user_agent",
    "ssl_cipher",
    "ssl_protocol",
    "target_group_arn",
    "trace_id",
    "domain_name",
    "chosen_cert_arn",
    "matched_rule_priority",
    "request_creation_time",
];

/// A W3C parser of the file whose header is `head`.
fn w3c_parser(head: &[u8]) -> ColumnsParser {
    let fields = header_fields(head).unwrap();
    ColumnsParser::new(
        layout("w3c"),
        &fields,
        Separator::Space,
        &[],
        TimeOf::Arrival,
    )
    .unwrap()
}

#[test]
fn a_w3c_cs_uri_column_is_the_target() {
    // The W3C draft's own example field (found by review: every request
    // was read as `/`).
    let mut p = w3c_parser(b"#Version: 1.0\n#Fields: date time c-ip cs-method cs-uri sc-status\n");
    let r = parse(&mut p, "2026-01-05 00:34:24 192.0.2.1 GET /search?q=x 200").unwrap();
    assert_eq!((&*r.method, &*r.path), (&b"GET"[..], &b"/search?q=x"[..]));
    // A stem and query, where a file has them too, win.
    let mut p = w3c_parser(
        b"#Fields: date time c-ip cs-method cs-uri cs-uri-stem cs-uri-query sc-status\n",
    );
    let r = parse(&mut p, "2026-01-05 00:34:24 192.0.2.1 GET /x?y /a q=1 200").unwrap();
    assert_eq!(&*r.path, b"/a?q=1");
}

#[test]
fn w3c_lines_with_their_header() {
    let head = b"#Version: 1.0\n#Fields: date time c-ip cs-method cs-uri-stem cs-uri-query sc-status time-taken\n2026-01-05 00:00:10 192.0.2.1 GET /a q=1 200 700\n";
    let fields = header_fields(head).unwrap();
    assert_eq!(separator_of(head), Separator::Space);
    let mut p = ColumnsParser::new(
        layout("w3c"),
        &fields,
        Separator::Space,
        &[],
        TimeOf::Arrival,
    )
    .unwrap();
    let r = parse(&mut p, "2026-01-05 00:00:10 192.0.2.1 GET /a q=1 200 700").unwrap();
    assert_eq!(
        (&*r.addr, &*r.path, r.status),
        (&b"192.0.2.1"[..], &b"/a?q=1"[..], Some(200))
    );
    // Ended in second 10 after 0.7 s: most likely arrived in second 9.
    assert_eq!(r.time.unwrap().ms, 1_767_571_209_000);
    // A decimal is the W3C draft's seconds (IIS writes whole ms): 2.5 s.
    let r = parse(&mut p, "2026-01-05 00:00:10 192.0.2.1 GET /a q=1 200 2.500").unwrap();
    assert_eq!(r.time.unwrap().ms, 1_767_571_208_000);
    let r = parse(&mut p, "2026-01-05 00:00:10 192.0.2.1 GET /a - 000 0").unwrap();
    assert_eq!((&*r.path, r.status), (&b"/a"[..], None));
    assert_eq!(
        parse(
            &mut p,
            "#Fields: DATE time c-ip cs-method cs-uri-stem cs-uri-query sc-status time-taken"
        )
        .unwrap_err(),
        SkipReason::Directive
    );
    assert_eq!(
        parse(&mut p, "#Fields: date time").unwrap_err(),
        SkipReason::ColumnsChanged
    );
    assert_eq!(
        parse(&mut p, "2026-13-05 00:00:10 x GET /a - 200 1").unwrap_err(),
        SkipReason::BadTime
    );
    assert!(
        ColumnsParser::new(
            layout("w3c"),
            &names("c-ip sc-status"),
            Separator::Space,
            &[],
            TimeOf::Arrival
        )
        .is_err()
    );
    assert!(
        ColumnsParser::new(
            layout("w3c"),
            &fields,
            Separator::Space,
            &["nope".into()],
            TimeOf::Arrival
        )
        .is_err()
    );
}

#[test]
fn cloudfront_tabs() {
    let head = b"#Version: 1.0\n#Fields: date time c-ip cs-method cs-uri-stem sc-status time-taken\n2026-01-05\t00:00:01\t192.0.2.1\tGET\t/\t200\t0.001\n";
    assert_eq!(separator_of(head), Separator::Tab);
    let fields = header_fields(head).unwrap();
    let mut p = ColumnsParser::new(
        layout("cloudfront"),
        &fields,
        Separator::Tab,
        &[],
        TimeOf::Logged,
    )
    .unwrap();
    let r = parse(
        &mut p,
        "2026-01-05\t00:00:01\t2001:db8::1\tGET\t/x\t000\t0.010",
    )
    .unwrap();
    assert_eq!((&*r.addr, r.status), (&b"2001:db8::1"[..], None));
    assert_eq!(r.time.unwrap().ms, 1_767_571_201_000);
}

/// A W3C log whose columns have `time` and no `date`: three days, a
/// directive in the middle and one midnight passed without one.
const DATED_BY_DIRECTIVES: &str = "#Version: 1.0\n\
    #Fields: time c-ip cs-method cs-uri-stem sc-status\n\
    00:00:00 192.0.2.9 GET /before 200\n\
    #Date: 2026-01-05 23:59:00\n\
    23:59:58 192.0.2.1 GET /a 200\n\
    00:00:01 192.0.2.1 GET /b 200\n\
    #Date: 07-Jan-2026 10:00:00\n\
    10:00:00 192.0.2.2 GET /c 200\n";

/// The parser of [`DATED_BY_DIRECTIVES`]'s columns, times as logged.
fn dated_by_directives() -> ColumnsParser {
    let fields = names("time c-ip cs-method cs-uri-stem sc-status");
    ColumnsParser::new(
        layout("w3c"),
        &fields,
        Separator::Space,
        &[],
        TimeOf::Logged,
    )
    .unwrap()
}

#[test]
fn time_without_date_takes_the_dates_of_the_directives_before_it() {
    let mut parser = dated_by_directives();
    assert!(parser.in_order());
    let mut times = Vec::new();
    for line in DATED_BY_DIRECTIVES.lines() {
        times.push(parse(&mut parser, line).map(|r| r.time.unwrap().ms));
    }
    let jan_5 = 1_767_571_200_000;
    let skipped = |i: usize| times[i].unwrap_err();
    assert_eq!(skipped(0), SkipReason::Directive);
    assert!(matches!(skipped(2), SkipReason::Malformed(m) if m.starts_with("no #Date:")));
    assert_eq!(times[4], Ok(jan_5 + 86_399_000 - 1_000));
    assert_eq!(times[5], Ok(jan_5 + 86_400_000 + 1_000));
    assert_eq!(times[7], Ok(jan_5 + 2 * 86_400_000 + 36_000_000));
    // Its forks date from their own directives on.
    let mut fork = parser.fork();
    let mut r = Record::default();
    r.clear(0);
    assert!(
        fork.parse(b"10:00:00 192.0.2.2 GET /c 200", &mut r)
            .is_err()
    );
}

/// Every chunk size and thread count dates the lines alike: the input is
/// parsed in order, by one parser.
#[test]
fn dates_from_directives_do_not_depend_on_chunks_or_threads() {
    use crate::ingest::pipeline::chunks_on_threads;
    use crate::ingest::source::Data;

    let text = DATED_BY_DIRECTIVES.repeat(20);
    let mut seen = Vec::new();
    for chunk_bytes in [64, 200, 1 << 20] {
        for threads in [1, 2] {
            let mut times = Vec::new();
            let data = Data::Stream(Box::new(std::io::Cursor::new(text.clone().into_bytes())));
            let parser = Box::new(dated_by_directives());
            chunks_on_threads(data, chunk_bytes, threads, parser, |chunk| {
                times.extend(chunk.events.iter().map(|e| e.ts));
            });
            seen.push(times);
        }
    }
    // The first copy's line before any directive is skipped; each later
    // copy's takes the date of the last directive (07-Jan): ten hours
    // back from the line before it is no new day.
    assert_eq!(seen[0].len(), 20 * 4 - 1);
    assert!(seen.iter().all(|times| *times == seen[0]), "{seen:?}");
}

#[test]
fn iis_writes_a_space_of_x_forwarded_for_as_plus() {
    // IIS logs the header in a custom field under the name it was given;
    // other W3C writers as `cs(X-Forwarded-For)`. CloudFront encodes a
    // space otherwise, so its `+` is kept.
    for (source, name, want) in [
        ("w3c", "X-Forwarded-For", &b" 203.0.113.2, 10.0.0.1"[..]),
        ("w3c", "cs(X-Forwarded-For)", b" 203.0.113.2, 10.0.0.1"),
        ("cloudfront", "x-forwarded-for", b"+203.0.113.2,+10.0.0.1"),
    ] {
        let fields = names(&format!(
            "date time c-ip cs-method cs-uri-stem sc-status {name}"
        ));
        let mut p = ColumnsParser::new(
            layout(source),
            &fields,
            Separator::Space,
            &[],
            TimeOf::Logged,
        )
        .unwrap();
        let line = "2026-01-05 00:00:10 192.0.2.1 GET /a 200 +203.0.113.2,+10.0.0.1";
        let r = parse(&mut p, line).unwrap();
        assert_eq!(&*r.xff, want, "{source} {name}");
    }
}

#[test]
fn an_iis_forwarded_for_with_plus_for_space_keys_its_address() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("u_ex260105_x.log");
    std::fs::write(
        &log,
        "#Software: Microsoft Internet Information Services 10.0\n\
         #Fields: date time c-ip cs-method cs-uri-stem sc-status time-taken X-Forwarded-For\n\
         2026-01-05 00:00:00 10.0.0.4 GET /a 200 1 203.0.113.2\n\
         2026-01-05 00:00:01 10.0.0.4 GET /a 200 1 +203.0.113.2\n\
         2026-01-05 00:00:02 10.0.0.4 GET /a 200 1 203.0.113.2,+10.0.0.1\n",
    )
    .unwrap();
    let mut settings = crate::ingest::Settings {
        inputs: vec![log],
        ..crate::ingest::Settings::for_detection()
    };
    settings.keys = crate::ingest::key::KeySet::new(
        crate::ingest::key::KeySpec::parse("xff", None, None).unwrap(),
    );
    let done = crate::ingest::ingest(&settings).unwrap();
    let names: Vec<&str> = done.table.clients.names().collect();
    assert_eq!(names, ["203.0.113.2"]);
}

#[test]
fn a_parser_that_follows_headers_reads_new_columns_it_can_read() {
    let fields = header_fields(b"#Fields: date time c-ip cs-method cs-uri-stem sc-status").unwrap();
    let names = ["x-key".to_string()];
    let mut p = ColumnsParser::new(
        layout("w3c"),
        &fields,
        Separator::Space,
        &[],
        TimeOf::Logged,
    )
    .unwrap();
    p.follow_headers();
    let changed = "#Fields: date time cs-uri-stem c-ip sc-status cs-method";
    assert_eq!(parse(&mut p, changed).unwrap_err(), SkipReason::Directive);
    let r = parse(&mut p, "2026-01-05 00:00:10 /b 192.0.2.2 200 POST").unwrap();
    assert_eq!(
        (&*r.addr, &*r.method, &*r.path),
        (&b"192.0.2.2"[..], &b"POST"[..], &b"/b"[..])
    );
    // Columns without a time cannot be read: the change is skipped as such,
    // and lines are read on in the columns before.
    let no_time = "#Fields: c-ip cs-method cs-uri-stem sc-status";
    assert_eq!(
        parse(&mut p, no_time).unwrap_err(),
        SkipReason::ColumnsWithoutTime
    );
    let r = parse(&mut p, "2026-01-05 00:00:11 /c 192.0.2.3 200 GET").unwrap();
    assert_eq!((&*r.addr, &*r.path), (&b"192.0.2.3"[..], &b"/c"[..]));
    // A fork is the parser as it was made, in the first columns.
    let mut fork = p.fork();
    let mut r = Record::default();
    r.clear(0);
    fork.parse(b"2026-01-05 00:00:12 192.0.2.4 GET /d 200", &mut r)
        .unwrap();
    assert_eq!((&*r.addr, &*r.path), (&b"192.0.2.4"[..], &b"/d"[..]));
    // A `field:NAME` asked for must be among the new columns.
    let mut keyed = ColumnsParser::new(
        layout("w3c"),
        &[&fields[..], &names[..]].concat(),
        Separator::Space,
        &names,
        TimeOf::Logged,
    )
    .unwrap();
    keyed.follow_headers();
    assert_eq!(
        parse(&mut keyed, changed).unwrap_err(),
        SkipReason::ColumnsWithoutKeyField
    );
}
