use super::*;

fn parse(line: &str, time_of: TimeOf) -> Result<Record<'_>, SkipReason> {
    let mut parser = HaproxyParser::new(
        &[
            "backend_name".into(),
            "termination_state".into(),
            "captured_request_headers".into(),
        ],
        time_of,
    )
    .unwrap();
    let mut r = Record::default();
    r.clear(3);
    parser.parse(line.as_bytes(), &mut r).map(|()| r)
}

/// The example of the "HTTP log format" section of haproxy's configuration.txt.
const DOC_EXAMPLE: &str = r#"Feb  6 12:14:14 localhost haproxy[14389]: 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {1wt.eu} {} "GET /index.html HTTP/1.1""#;

#[test]
fn the_documented_example() {
    let r = parse(DOC_EXAMPLE, TimeOf::Arrival).unwrap();
    assert_eq!(&*r.addr, b"10.0.1.2");
    assert_eq!(
        (&*r.method, &*r.path, r.status),
        (&b"GET"[..], &b"/index.html"[..], Some(200))
    );
    // 2009-02-06T12:14:14.655Z.
    assert_eq!(r.time.unwrap().ms, 1_233_922_454_655);
    assert!(r.time.unwrap().subsecond);
    assert_eq!(
        (&*r.extra[0], &*r.extra[1], &*r.extra[2]),
        (&b"static"[..], &b"----"[..], &b"1wt.eu"[..])
    );
    // Logged: + Ta (109 ms).
    assert_eq!(
        parse(DOC_EXAMPLE, TimeOf::Logged).unwrap().time.unwrap().ms,
        1_233_922_454_764
    );
}

#[test]
fn an_ipv6_client_loses_its_port_though_haproxy_does_not_bracket_it() {
    // Found by review; the line is what HAProxy 2.6 (`option httplog`,
    // `log stdout format raw`) wrote for a request from ::1.
    let r = parse(r#"::1:54118 [01/Dec/2026:15:33:54.504] fe fe/<NOSRV> 0/-1/-1/-1/0 200 73 - - LR-- 1/1/0/0/0 0/0 "GET /a?x=1 HTTP/1.1""#, TimeOf::Arrival).unwrap();
    assert_eq!(&*r.addr, b"::1");
    for (client, address) in [
        ("2001:db8::7:51000", "2001:db8::7"),
        ("::ffff:192.0.2.9:51001", "::ffff:192.0.2.9"),
        ("unix:1", "unix"),
        ("192.0.2.1", "192.0.2.1"),
        ("host:", "host:"),
        // No port (not HAProxy's httplog, but never cut into): as it is.
        ("::1", "::1"),
        ("2001:db8::7", "2001:db8::7"),
    ] {
        assert_eq!(without_client_port(client.as_bytes()), address.as_bytes());
    }
}

#[test]
fn odd_lines() {
    // No captured headers, a -1 timer, an aborted request (status -1 is unknown).
    let r = parse(r#"<134>2026-01-05T00:00:00+00:00 lb1 haproxy[7]: [2001:db8::1]:443 [05/Jan/2026:00:00:00.001] fe~ be/<NOSRV> -1/-1/-1/-1/0 -1 0 - - CR-- 1/1/0/0/0 0/0 "<BADREQ>""#, TimeOf::Logged).unwrap();
    assert_eq!(
        (&*r.addr, r.status, &*r.method),
        (&b"[2001:db8::1]"[..], None, &b"<BADREQ>"[..])
    );
    // A request line cut by the syslog length limit has no closing quote.
    // It says nothing of the version (no HTTP/0.9 request, no `HTTP/1.`).
    let r = parse(r#"haproxy[7]: 192.0.2.1:1 [05/Jan/2026:00:00:00.001] fe be/s1 0/0/0/1/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET /very/long"#, TimeOf::Arrival).unwrap();
    assert_eq!(
        (&*r.path, r.protocol),
        (&b"/very/long"[..], Protocol::Unknown)
    );
    let r = parse(r#"haproxy[7]: 192.0.2.1:1 [05/Jan/2026:00:00:00.001] fe be/s1 0/0/0/1/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET /a HTTP/1."#, TimeOf::Arrival).unwrap();
    assert_eq!((&*r.path, r.protocol), (&b"/a"[..], Protocol::Unknown));
    let whole = parse(DOC_EXAMPLE, TimeOf::Arrival).unwrap();
    assert_eq!(whole.protocol, Protocol::Http11);
    for bad in [
        "hello",
        r#"haproxy[7]: 192.0.2.1:1 [05/Jan/2026:00:00:00.001] fe be/s1 0/0/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET / HTTP/1.1""#,
        r#"haproxy[7]: 192.0.2.1:1 [05/Jan/2026:00:00:00.001] fe be/s1 0/0/0/1/1 200"#,
        r#"192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl""#,
    ] {
        assert!(
            matches!(parse(bad, TimeOf::Arrival), Err(SkipReason::Malformed(_))),
            "{bad}"
        );
    }
    assert_eq!(
        parse(r#"haproxy[7]: 192.0.2.1:1 [05/Jan/2026:99:00:00.001] fe be/s1 0/0/0/1/1 200 5 - - ---- 1/1/0/0/0 0/0 "GET /""#, TimeOf::Arrival).unwrap_err(),
        SkipReason::BadTime
    );
    assert!(HaproxyParser::new(&["nope".into()], TimeOf::Arrival).is_err());
}

#[test]
fn a_syslog_priority_before_the_client_is_no_part_of_it() {
    // `log … format short` and `priority` write "a level between angle
    // brackets" right before the client (found by review: `<134>192.0.2.7`).
    let line = r#"<134>192.0.2.7:33318 [05/Jan/2026:00:00:00.480] fe be/s1 0/0/1/12/13 200 512 - - ---- 2/2/1/1/0 0/0 "GET /a HTTP/1.1""#;
    assert_eq!(&*parse(line, TimeOf::Arrival).unwrap().addr, b"192.0.2.7");
    let v6 = line.replace("<134>192.0.2.7:33318", "<3>2001:db8::7:51000");
    assert_eq!(&*parse(&v6, TimeOf::Arrival).unwrap().addr, b"2001:db8::7");
    for (client, kept) in [
        ("<1234>x", "<1234>x"),
        ("<>x", "<>x"),
        ("<a>x", "<a>x"),
        ("<1", "<1"),
    ] {
        assert_eq!(without_priority(client.as_bytes()), kept.as_bytes());
    }
}
