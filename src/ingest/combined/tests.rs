use super::*;

fn parse(line: &str) -> Result<Record<'_>, SkipReason> {
    let mut parser =
        CombinedParser::new(&["http_user_agent".into(), "request_uri".into()]).unwrap();
    let mut r = Record::default();
    r.clear(2);
    parser.parse(line.as_bytes(), &mut r).map(|()| r)
}

#[test]
fn combined_line() {
    let r = parse(r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif?x=1 HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)""#).unwrap();
    assert_eq!(&*r.addr, b"127.0.0.1");
    assert_eq!(&*r.user, b"frank");
    assert_eq!(&*r.method, b"GET");
    assert_eq!(&*r.path, b"/apache_pb.gif?x=1");
    assert_eq!(r.status, Some(200));
    assert_eq!(r.time.unwrap().ms, 971_211_336_000);
    assert_eq!(&*r.extra[0], b"Mozilla/4.08 [en] (Win98; I ;Nav)");
    assert_eq!(&*r.extra[1], b"/apache_pb.gif?x=1");
    assert_eq!(&*r.xff, b"");
}

#[test]
fn common_line_and_nginx_main_xff() {
    let r =
        parse(r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "POST /login HTTP/1.1" 401 -"#).unwrap();
    assert_eq!(r.status, Some(401));
    let r = parse(r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "curl" "203.0.113.9, 10.0.0.1" 0.003"#).unwrap();
    assert_eq!(&*r.xff, b"203.0.113.9, 10.0.0.1");
}

#[test]
fn a_line_ending_at_the_status_parses() {
    // Found by fuzzing: a line with no BYTES made the offset of the missing
    // field underflow (a panic in debug builds).
    let r = parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200"#).unwrap();
    assert_eq!(
        (r.status, &*r.path, &*r.xff),
        (Some(200), &b"/x"[..], &b""[..])
    );
    let r = parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200   "#).unwrap();
    assert_eq!(r.status, Some(200));
}

#[test]
fn address_lists_and_quoted_lists() {
    let r = parse(r#"10.0.0.2, 10.0.0.1, 127.0.0.1 - - [07/Dec/2016:11:05:07 +0100] "GET /ocelot HTTP/1.1" 200 571 "-" "UA""#).unwrap();
    assert_eq!(&*r.addr, b"10.0.0.2, 10.0.0.1, 127.0.0.1");
    let r = parse(r#""10.5.102.222, 199.96.1.1, 204.246.1.1" 10.2.1.185 - - [22/Jan/2016:13:18:29 +0000] "GET /assets/xxxx?q=100 HTTP/1.1" 200 25507 "-" "Amazon CloudFront""#).unwrap();
    assert_eq!(
        &*r.addr,
        br#""10.5.102.222, 199.96.1.1, 204.246.1.1" 10.2.1.185"#
    );
}

#[test]
fn a_user_with_spaces_or_a_date_keeps_the_address() {
    // nginx and Apache log the Basic-auth user unvalidated, spaces and
    // brackets included (nginx writes these lines even without auth_basic),
    // so a client must not be able to choose its address, or hide its line,
    // by the user it sends.
    for (head, addr, user) in [
        ("127.0.0.1 - 6.6.6.6 - x", "127.0.0.1", "6.6.6.6 - x"),
        ("127.0.0.1 - john smith", "127.0.0.1", "john smith"),
        ("1.2.3.4 - a b c", "1.2.3.4", "a b c"),
        (
            "1.2.3.4 - a [01/Jan/2020:00:00:00 +0000]",
            "1.2.3.4",
            "a [01/Jan/2020:00:00:00 +0000]",
        ),
        // A user whose date bracket never closes does not hide the line.
        (
            "1.2.3.4 - a [01/Jan/2020:00:00:00 +0000",
            "1.2.3.4",
            "a [01/Jan/2020:00:00:00 +0000",
        ),
        ("10.0.0.2, 10.0.0.1 - x - y", "10.0.0.2, 10.0.0.1", "x - y"),
        // Byte for byte the same as a client 127.0.0.1 sending the user
        // `6.6.6.6, 7.7.7.7 - -` in the default format, where the address
        // is always one token: the first ` - ` ends the address, so a proxy
        // list whose forwarded part holds ` - ` ends there too.
        ("6.6.6.6 - x, 1.2.3.4 - -", "6.6.6.6", "x, 1.2.3.4 - -"),
        // Likewise an entry cut short in or right after its date with the
        // next glued on reads as one entry whose user holds the next's head
        // (glued entries are looked for after the line's date only).
        (
            "1.2.3.4 - - [05/Jan/2026:00:00:05 +0000]5.6.7.8 - -",
            "1.2.3.4",
            "- [05/Jan/2026:00:00:05 +0000]5.6.7.8 - -",
        ),
        (
            "1.2.3.4 - - [05/Jan/20265.6.7.8 - -",
            "1.2.3.4",
            "- [05/Jan/20265.6.7.8 - -",
        ),
        (
            r#""1.1.1.1 - x" 2.2.2.2 - -"#,
            r#""1.1.1.1 - x" 2.2.2.2"#,
            "-",
        ),
        // An ident other than `-`: the last two tokens, as before.
        ("9.9.9.9 ident bob", "9.9.9.9", "bob"),
        ("10.0.0.2, 10.0.0.1 ident bob", "10.0.0.2, 10.0.0.1", "bob"),
    ] {
        let line =
            format!(r#"{head} [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua""#);
        let r = parse(&line).unwrap();
        assert_eq!(
            (&*r.addr, &*r.user),
            (addr.as_bytes(), user.as_bytes()),
            "{head}"
        );
        assert_eq!(r.time.map(|t| t.ms), Some(971186136000), "{head}");
    }
}

#[test]
fn empty_and_dash_requests_are_events() {
    let r = parse(r#"127.0.0.1 - - [12/Apr/2018:09:48:40 +0200] "" 400 0 "-" "-""#).unwrap();
    assert_eq!((&*r.method, r.status), (&b""[..], Some(400)));
    let r = parse(r#"10.112.81.15 - - [15/Feb/2013:06:00:31 +0000] "-" 400 0 "-" "-""#).unwrap();
    assert_eq!(&*r.path, b"");
}

#[test]
fn escaped_quotes_inside_fields() {
    let r =
        parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\"b HTTP/1.1" 200 1 "-" "x\"y""#)
            .unwrap();
    // The target is read back as sent (Apache's `\"`); other fields stay as logged.
    assert_eq!(&*r.path, br#"/a"b"#);
    assert_eq!(&*r.extra[0], br#"x\"y"#);
}

#[test]
fn malformed_lines_say_why() {
    let missing_ident = r#"192.168.202.254 [20/Jul/2009:22:59:29 +0000] "GET / HTTP/1.0" 404 46210 "-" "gPXE/0.9.7""#;
    assert!(matches!(
        parse(missing_ident),
        Err(SkipReason::Malformed(_))
    ));
    assert!(matches!(parse("garbage"), Err(SkipReason::Malformed(_))));
    assert!(matches!(
        parse(r#"1.2.3.4 - - [bad] "GET / HTTP/1.1" 200 1"#),
        Err(SkipReason::BadTime)
    ));
    assert!(matches!(
        parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" abc 1"#),
        Err(SkipReason::BadStatus)
    ));
    assert!(matches!(
        parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1"#),
        Err(SkipReason::Malformed(_))
    ));
}

#[test]
fn skipping_the_tail_changes_nothing_else() {
    let lines = [
        r#"1.2.3.4 - bob [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl" "9.9.9.9""#,
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1"   404"#,
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200  7  "r""#,
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" "#,
    ];
    for line in lines {
        let mut full = CombinedParser::new(&[]).unwrap();
        let mut lean = CombinedParser::new(&[]).unwrap().with_xff(false);
        let (mut a, mut b) = (Record::default(), Record::default());
        let (ra, rb) = (
            full.parse(line.as_bytes(), &mut a),
            lean.parse(line.as_bytes(), &mut b),
        );
        assert_eq!(ra, rb, "{line}");
        assert_eq!(
            (a.time, &a.addr, &a.user, &a.method, &a.path, a.status),
            (b.time, &b.addr, &b.user, &b.method, &b.path, b.status)
        );
        assert!(b.xff.is_empty());
    }
    let lean = CombinedParser::new(&["http_user_agent".into()])
        .unwrap()
        .with_xff(false);
    assert!(lean.tail);
}

#[test]
fn a_missing_bytes_field_ends_the_line() {
    let r = parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200"#).unwrap();
    assert_eq!((r.status, &*r.extra[0]), (Some(200), &b""[..]));
}

#[test]
fn unknown_field_names_are_refused() {
    assert!(CombinedParser::new(&["nope".into()]).is_err());
}

#[test]
fn unescaped_quotes_in_the_request_are_found_from_the_other_side() {
    // Traefik writes the request line as received, quotes included.
    let r = parse(r#"198.51.100.4 - - [10/Oct/2000:13:55:36 +0000] "GET /?q="><script>alert(1)</script> HTTP/1.1" 404 19 "-" "-" 7 "web@docker" "http://10.0.0.5:80" 2ms"#).unwrap();
    assert_eq!(&*r.path, br#"/?q="><script>alert(1)</script>"#);
    assert_eq!((r.status, &*r.extra[0]), (Some(404), &b"-"[..]));
    let r =
        parse(r#"198.51.100.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a"b" HTTP/1.1" 0 0 "-" "-""#)
            .unwrap();
    assert_eq!((&*r.path, r.status), (&br#"/a"b""#[..], None));
    // Common format (the line ends at BYTES) with a quote in the target.
    let r =
        parse(r#"198.51.100.4 - - [10/Oct/2000:13:55:36 +0000] "GET /x" HTTP/1.0" 400 -"#).unwrap();
    assert_eq!((&*r.path, r.status), (&br#"/x""#[..], Some(400)));
}

#[test]
fn a_request_that_could_end_at_two_quotes_is_skipped_as_ambiguous() {
    let line = r#"198.51.100.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a"b" 200 5 "c" 404 7"#;
    assert!(matches!(
        parse(line),
        Err(SkipReason::Malformed(why)) if why.starts_with("ambiguous")
    ));
}

#[test]
fn any_status_is_a_request() {
    for (status, kept) in [
        ("0", None),
        ("000", None),
        ("-", None),
        ("444", Some(444)),
        ("499", Some(499)),
        ("999", Some(999)),
        ("600", Some(600)),
    ] {
        let line = format!(
            r#"192.0.2.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" {status} 0 "-" "ua""#
        );
        assert_eq!(parse(&line).unwrap().status, kept, "{status}");
    }
}

#[test]
fn ports_hostnames_and_ipv6_stay_in_the_address() {
    for addr in [
        "192.0.2.1:40112",
        "crawl-66-249-66-1.googlebot.com",
        "2001:db8::1",
        "[2001:db8::1]:443",
    ] {
        let line =
            format!(r#"{addr} - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 1 "-" "ua""#);
        assert_eq!(&*parse(&line).unwrap().addr, addr.as_bytes());
    }
}

#[test]
fn vhost_combined_splits_off_the_virtual_host() {
    let mut parser = CombinedParser::new(&["vhost".into()]).unwrap().with_vhost();
    let mut r = Record::default();
    r.clear(1);
    let line = br#"www.example.com:443 192.0.2.1 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 1 "-" "ua""#;
    parser.parse(line, &mut r).unwrap();
    assert_eq!(
        (&*r.addr, &*r.extra[0]),
        (&b"192.0.2.1"[..], &b"www.example.com"[..])
    );
    let line = br#"192.0.2.1 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 1"#;
    assert!(matches!(
        parser.parse(line, &mut r),
        Err(SkipReason::Malformed(_))
    ));
    // Plain combined knows the field and leaves it empty.
    let r = {
        let mut plain = CombinedParser::new(&["vhost".into()]).unwrap();
        let mut r = Record::default();
        r.clear(1);
        plain.parse(line, &mut r).unwrap();
        r
    };
    assert_eq!(&*r.extra[0], b"");
}

#[test]
fn escaped_bytes_of_the_target_are_read_back() {
    // nginx writes a control byte, DEL and bytes from 0x80 up as `\xHH`,
    // Apache `\"` and `\\` too; the target is read as it was sent.
    let line = |target: &str| {
        format!(r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET {target} HTTP/1.1" 200 5"#)
    };
    for (logged, sent) in [
        (r"/caf\xC3\xA9?q=\x01", &b"/caf\xc3\xa9?q=\x01"[..]),
        (r"/a\x5Cx41", b"/a\\x41"),
        (r#"/q=\"x\""#, b"/q=\"x\""),
        (r"/plain", b"/plain"),
    ] {
        let text = line(logged);
        let r = parse(&text).unwrap();
        assert_eq!(&*r.path, sent, "{logged}");
        // The raw field read for a `field:` key stays as logged.
        assert_eq!(&*r.extra[1], logged.as_bytes());
    }
    // Traefik writes Go's escaped request URI: read as it is.
    let traefik = r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET /a\x01 HTTP/1.1" 200 5 "-" "curl" 1 "r@file" "http://b" 3ms"#;
    let mut parser = CombinedParser::new(&[]).unwrap().with_traefik(false);
    let mut r = Record::default();
    r.clear(0);
    parser.parse(traefik.as_bytes(), &mut r).unwrap();
    assert_eq!(&*r.path, br"/a\x01");
}
