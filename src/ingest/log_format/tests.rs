use super::*;

fn parse<'a>(format: &str, line: &'a str) -> Result<Record<'a>, SkipReason> {
    let extra: Vec<String> = if format.contains("$request_time") {
        vec!["request_time".into()]
    } else {
        vec![]
    };
    let mut p = LogFormatParser::new(format, &extra).unwrap();
    let mut r = Record::default();
    r.clear(extra.len());
    p.parse(line.as_bytes(), &mut r).map(|()| r)
}

#[test]
fn tokenizes_variables_and_braces() {
    assert_eq!(
        tokenize("$a-${b}c $"),
        vec![
            Token::Var("a".into()),
            Token::Literal(b"-".to_vec()),
            Token::Var("b".into()),
            Token::Literal(b"c $".to_vec())
        ]
    );
}

#[test]
fn msec_format_from_the_issue() {
    let f = r#"$msec $remote_addr "$request" $status $request_time "$remote_user""#;
    let r = parse(
        f,
        r#"1767571200.123 10.0.0.1 "GET /api/x?y=1 HTTP/1.1" 200 0.004 "alice""#,
    )
    .unwrap();
    // $msec is written when the response ends: the arrival is 4 ms earlier.
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_119);
    assert!(r.time.unwrap().subsecond);
    assert_eq!(
        (&*r.addr, &*r.method, &*r.path),
        (&b"10.0.0.1"[..], &b"GET"[..], &b"/api/x?y=1"[..])
    );
    assert_eq!(
        (r.status, &*r.user, &*r.extra[0]),
        (Some(200), &b"alice"[..], &b"0.004"[..])
    );
}

#[test]
fn combined_written_as_log_format() {
    let f = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time"#;
    let r = parse(f, r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 5 "-" "Mozilla \"x\" 5.0" 0.5"#).unwrap();
    assert_eq!(r.time.unwrap().ms, 971_211_336_000);
    assert_eq!(&*r.extra[0], b"0.5");
}

#[test]
fn time_local_unbracketed_and_limit_req_status() {
    let f = "$time_local $remote_addr $request_method $uri $status $limit_req_status";
    let r = parse(f, "10/Oct/2000:13:55:36 +0000 1.2.3.4 GET /x 503 REJECTED").unwrap();
    assert_eq!(r.time.unwrap().ms, 971_186_136_000);
    assert_eq!(
        (&*r.path, &*r.limit_req_status),
        (&b"/x"[..], &b"REJECTED"[..])
    );
}

#[test]
fn adjacent_variables_use_the_regex_fallback() {
    let f = "$msec$request_method $uri $status";
    let p = LogFormatParser::new(f, &[]).unwrap();
    assert!(p.uses_regex());
    let r = parse(f, "1767571200.5GET /x 200").unwrap();
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_500);
    assert_eq!(
        (&*r.method, &*r.path, r.status),
        (&b"GET"[..], &b"/x"[..], Some(200))
    );
}

#[test]
fn errors_are_clear() {
    assert!(LogFormatParser::new("$remote_addr $status", &[]).is_err());
    assert!(LogFormatParser::new("$msec $status", &["nope".into()]).is_err());
    assert!(matches!(
        parse("$msec [$status]", "1.5 200"),
        Err(SkipReason::Malformed(_))
    ));
    assert!(matches!(
        parse("$msec $status", "abc 200"),
        Err(SkipReason::BadTime)
    ));
}

fn parse_timed<'a>(format: &str, line: &'a str, time_of: TimeOf) -> Record<'a> {
    let mut p = LogFormatParser::new(format, &[])
        .unwrap()
        .with_time_of(time_of);
    let mut r = Record::default();
    p.parse(line.as_bytes(), &mut r).unwrap();
    r
}

#[test]
fn arrival_is_the_logged_time_minus_request_time() {
    let f = r#"$msec $remote_addr "$request" $status $request_time"#;
    let line = r#"1767571200.123 10.0.0.1 "GET / HTTP/1.1" 200 1.500"#;
    assert_eq!(
        parse_timed(f, line, TimeOf::Arrival).time.unwrap().ms,
        1_767_571_198_623
    );
    assert_eq!(
        parse_timed(f, line, TimeOf::Logged).time.unwrap().ms,
        1_767_571_200_123
    );
    // No usable $request_time: the time as logged.
    let line = r#"1767571200.123 10.0.0.1 "GET / HTTP/1.1" 200 -"#;
    assert_eq!(
        parse_timed(f, line, TimeOf::Arrival).time.unwrap().ms,
        1_767_571_200_123
    );
    // $time_local has whole seconds: ended in second 10 after 0.7 s, so most
    // likely arrived in second 9 (see `arrival::arrival_from_end`).
    let f = r#"$remote_addr [$time_local] "$request" $status $request_time"#;
    let line = r#"10.0.0.1 [05/Jan/2026:00:00:10 +0000] "GET / HTTP/1.1" 200 0.700"#;
    let r = parse_timed(f, line, TimeOf::Arrival);
    assert_eq!(
        r.time.unwrap(),
        time::Stamp {
            ms: 1_767_571_209_000,
            subsecond: false
        }
    );
    let parser = LogFormatParser::new(f, &[]).unwrap();
    assert!(parser.time_used().unwrap().contains("$request_time"));
    assert_eq!(parser.with_time_of(TimeOf::Logged).time_used(), None);
}

#[test]
fn envoy_start_time_and_duration() {
    let f = r#"[$start_time] "$request_method $request_uri $protocol" $status $duration "$http_x_forwarded_for""#;
    let line = r#"[2026-01-05T00:00:00.310Z] "POST /api HTTP/2" 204 226 "203.0.113.9, 10.0.0.1""#;
    assert_eq!(
        parse_timed(f, line, TimeOf::Arrival).time.unwrap().ms,
        1_767_571_200_310
    );
    assert_eq!(
        parse_timed(f, line, TimeOf::Logged).time.unwrap().ms,
        1_767_571_200_536
    );
    let mut p = LogFormatParser::new(f, &[]).unwrap().with_addr_from_xff();
    let mut r = Record::default();
    p.parse(line.as_bytes(), &mut r).unwrap();
    assert_eq!(&*r.addr, b"203.0.113.9");
    let line = r#"[2026-01-05T00:00:00.310Z] "POST /api HTTP/2" 204 226 "-""#;
    r.clear(0);
    p.parse(line.as_bytes(), &mut r).unwrap();
    assert_eq!(&*r.addr, b"");
}

#[test]
fn a_target_is_read_back_from_each_escaping_envoys_as_written() {
    let f = r#"$msec $remote_addr "$request" $status"#;
    let line = r#"1767571200.000 10.0.0.1 "GET /caf\xC3\xA9?q=\x01 HTTP/1.1" 400"#;
    assert_eq!(&*parse(f, line).unwrap().path, b"/caf\xc3\xa9?q=\x01");
    let f = r#"$msec $remote_addr "$request_method $request_uri" $status"#;
    let line = r#"1767571200.000 10.0.0.1 "GET /a\x7F" 400"#;
    assert_eq!(&*parse(f, line).unwrap().path, b"/a\x7f");
    let read = |escape, line: &str| {
        let mut parser = LogFormatParser::new(f, &[]).unwrap().with_escape(escape);
        let mut r = Record::default();
        r.clear(0);
        parser.parse(line.as_bytes(), &mut r).unwrap();
        r.path.into_owned()
    };
    assert_eq!(read(LogEscape::None, line), br"/a\x7F");
    // escape=json: a control byte as `\u00XX` or `\t`, `"` and `\` escaped,
    // DEL and bytes from 0x80 up as they came.
    let line = "1767571200.000 10.0.0.1 \"GET /a\\\\x41?q=\\u0001\\t\\\"\x7f\u{e9}\" 400";
    assert_eq!(
        read(LogEscape::Json, line),
        "/a\\x41?q=\u{1}\t\"\x7f\u{e9}".as_bytes()
    );
    assert_eq!(
        read(LogEscape::Default, line),
        "/a\\x41?q=\\u0001\\t\"\x7f\u{e9}".as_bytes()
    );
}

#[test]
fn the_version_comes_from_the_request_line_or_its_own_field_whichever_says_one() {
    use crate::events::Protocol;
    // nginx logs `$server_protocol` as `-` for an HTTP/0.9 request; the
    // request line still says it, in either order of the two fields.
    for (format, line, read) in [
        (
            r#"$msec $remote_addr "$request" $server_protocol $status"#,
            r#"1767571200.000 10.0.0.1 "GET /a" - 200"#,
            Protocol::Http09,
        ),
        (
            r#"$msec $remote_addr $server_protocol "$request" $status"#,
            r#"1767571200.000 10.0.0.1 - "GET /a" 200"#,
            Protocol::Http09,
        ),
        (
            r#"$msec $remote_addr "$request" $server_protocol $status"#,
            r#"1767571200.000 10.0.0.1 "GET /a HTTP/1.0" HTTP/1.0 200"#,
            Protocol::Http10,
        ),
        (
            r#"$msec $remote_addr "$request_method $request_uri" $server_protocol $status"#,
            r#"1767571200.000 10.0.0.1 "GET /a" HTTP/2.0 200"#,
            Protocol::Http2,
        ),
        (
            r#"$msec $remote_addr "$request_method $request_uri" $server_protocol $status"#,
            r#"1767571200.000 10.0.0.1 "GET /a" - 200"#,
            Protocol::Unknown,
        ),
        // Envoy's %PROTOCOL%, as the named format writes it.
        (
            r#"$msec $remote_addr "$request_method $request_uri $protocol" $status"#,
            r#"1767571200.000 10.0.0.1 "GET /a HTTP/2" 200"#,
            Protocol::Http2,
        ),
    ] {
        assert_eq!(parse(format, line).unwrap().protocol, read, "{line}");
    }
}

#[test]
fn a_user_holding_a_date_ends_where_the_logged_date_begins() {
    // nginx writes $remote_user as the client sent it, brackets and spaces
    // included: the user runs to the ` [` a date and `] "` follow.
    let f = r#"$remote_addr - $remote_user [$time_local] "$request" $status"#;
    for user in ["a [01/Jan/2020:00:00:00 +0000]", "x] [y", "-"] {
        let line =
            format!(r#"1.2.3.4 - {user} [05/Jan/2026:00:00:02 +0000] "GET /a HTTP/1.1" 200"#);
        let r = parse(f, &line).unwrap();
        assert_eq!((&*r.addr, &*r.user), (&b"1.2.3.4"[..], user.as_bytes()));
        assert_eq!(r.time.unwrap().ms, 1_767_571_202_000);
    }
    // Without such a date, the first ` [` still ends it.
    let r = parse(f, r#"1.2.3.4 - a [b] "GET /a HTTP/1.1" 200"#);
    assert!(r.is_err());
}
