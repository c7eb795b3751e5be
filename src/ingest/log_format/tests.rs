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
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_123);
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
