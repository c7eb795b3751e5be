use super::*;
use serde_json::Value;

fn parse_with<'a>(mapping: &[(&str, &str)], line: &'a str) -> Result<Record<'a>, SkipReason> {
    let mapping: Vec<(String, String)> = mapping
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    let mut p = JsonParser::new(&mapping, &["request.headers.User-Agent".into()]).unwrap();
    let mut r = Record::default();
    r.clear(1);
    p.parse(line.as_bytes(), &mut r).map(|()| r)
}

#[test]
fn nginx_escape_json_names() {
    let r = parse_with(&[], r#"{"time_iso8601":"2026-01-05T00:00:00+00:00","remote_addr":"1.2.3.4","request":"GET /a?b=1 HTTP/1.1","status":"200","remote_user":"-"}"#).unwrap();
    assert_eq!(r.time.unwrap().ms, 1_767_571_200_000);
    assert_eq!(
        (&*r.addr, &*r.method, &*r.path, r.status),
        (&b"1.2.3.4"[..], &b"GET"[..], &b"/a?b=1"[..], Some(200))
    );
}

#[test]
fn caddy_with_docker_prefix() {
    let line = r#"caddy  | {"level":"info","ts":1716723772.6014807,"request":{"remote_ip":"10.5.1.1","client_ip":"10.10.10.117","method":"GET","uri":"/x","headers":{"User-Agent":["curl/8"]}},"status":200}"#;
    let r = parse_with(&[], line).unwrap();
    assert_eq!(r.time.unwrap().ms, 1_716_723_772_601);
    assert_eq!((&*r.addr, &*r.path), (&b"10.10.10.117"[..], &b"/x"[..]));
    assert_eq!(&*r.extra[0], b"curl/8");
    let startup = r#"caddy  | {"level":"info","ts":1761019822.3152757,"msg":"maxprocs: Leaving GOMAXPROCS=12"}"#;
    assert_eq!(
        parse_with(&[], startup).unwrap_err(),
        SkipReason::NotAccessEntry
    );
}

#[test]
fn traefik_names() {
    let r = parse_with(&[], r#"{"StartUTC":"2026-01-05T00:00:01.5Z","ClientHost":"9.9.9.9","RequestMethod":"POST","RequestPath":"/login","DownstreamStatus":401}"#).unwrap();
    assert_eq!(
        (r.time.unwrap().ms, r.status),
        (1_767_571_201_500, Some(401))
    );
}

#[test]
fn explicit_mapping_and_epoch_millis() {
    let r = parse_with(
        &[("time", "t.when"), ("client", "who")],
        r#"{"t":{"when":1767571200123},"who":"k1","path":"/p"}"#,
    )
    .unwrap();
    assert_eq!(
        (r.time.unwrap().ms, &*r.addr),
        (1_767_571_200_123, &b"k1"[..])
    );
    assert!(JsonParser::new(&[("nope".into(), "x".into())], &[]).is_err());
}

#[test]
fn bad_lines() {
    assert_eq!(
        parse_with(&[], "not json").unwrap_err(),
        SkipReason::BadJson
    );
    assert_eq!(parse_with(&[], "{broken").unwrap_err(), SkipReason::BadJson);
    assert_eq!(
        parse_with(&[], r#"{"path":"/x"}"#).unwrap_err(),
        SkipReason::BadTime
    );
    assert_eq!(
        parse_with(&[], r#"{"ts":1,"path":"/x","status":"abc"}"#).unwrap_err(),
        SkipReason::BadStatus
    );
}

/// The same line parsed only through `serde_json`.
fn parse_by_value<'a>(p: &JsonParser, line: &'a [u8]) -> Result<Record<'a>, SkipReason> {
    let mut r = Record::default();
    r.clear(p.extra.len());
    let start = memchr::memchr(b'{', line).ok_or(SkipReason::BadJson)?;
    let object: Value = serde_json::from_slice(&line[start..]).map_err(|_| SkipReason::BadJson)?;
    if !object.is_object() {
        return Err(SkipReason::BadJson);
    }
    p.fill(&ValueDoc(&object), &mut r).map(|()| r)
}

/// One JSON member as text: keys access logs use, values of every kind.
fn member() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let key = proptest::sample::select(vec![
        "time",
        "ts",
        "msec",
        "remote_addr",
        "request",
        "status",
        "method",
        "uri",
        "remote_user",
        "limit_req_status",
        "http_x_forwarded_for",
        "headers",
        "other",
    ]);
    let scalar = proptest::sample::select(vec![
        r#""2026-01-05T00:00:01.5Z""#,
        r#""10/Oct/2000:13:55:36 +0000""#,
        "1767571200",
        "1767571200123",
        "1716723772.6014807",
        "1.7e9",
        "-3",
        "200",
        "404.0",
        r#""503""#,
        r#""GET /a/1?x=2 HTTP/1.1""#,
        r#""GET""#,
        r#""/a\"b""#,
        r#""1.2.3.4""#,
        r#""-""#,
        r#""PASSED""#,
        "true",
        "null",
        "[]",
        r#"["curl/8", 2]"#,
        r#""caf\u00e9""#,
        r#""\u00ff\u00fe""#,
        "12345678901234567890",
    ]);
    let nested = (key.clone(), scalar.clone())
        .prop_map(|(k, v)| format!(r#"{{"client_ip":"9.9.9.9","{k}":{v},"uri":"/n/7"}}"#));
    let value = prop_oneof![4 => scalar.prop_map(str::to_string), 1 => nested];
    (key, value).prop_map(|(k, v)| format!(r#""{k}":{v}"#))
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]

    #[test]
    fn the_tape_and_serde_json_read_lines_alike(
        members in proptest::collection::vec(member(), 0..8),
        damage in proptest::option::of((0usize..200, 0usize..3)),
    ) {
        // A timestamp and a request first, so that most lines are events;
        // later members may repeat their keys (the last one counts).
        let mut line = format!(
            r#"prefix {{"time":"2026-01-05T00:00:00Z","request":"GET /r HTTP/1.1","status":201{}{}}}"#,
            if members.is_empty() { "" } else { "," },
            members.join(",")
        );
        if let Some((at, what)) = damage {
            let at = (0..=at.min(line.len())).rev().find(|&i| line.is_char_boundary(i)).unwrap_or(0);
            line.insert_str(at, ["}", ",", "\""][what]);
        }
        let extra = ["request.headers".to_string(), "other".to_string()];
        let mut fast = JsonParser::new(&[], &extra).unwrap();
        let slow = JsonParser::new(&[], &extra).unwrap();
        let mut r = Record::default();
        r.clear(2);
        let got = fast.parse(line.as_bytes(), &mut r).map(|()| r);
        let want = parse_by_value(&slow, line.as_bytes());
        match (got, want) {
            (Ok(a), Ok(b)) => {
                proptest::prop_assert_eq!(
                    (a.time, &a.addr, &a.user, &a.xff, &a.method, &a.path, a.status),
                    (b.time, &b.addr, &b.user, &b.xff, &b.method, &b.path, b.status),
                    "{}", line
                );
                proptest::prop_assert_eq!(&a.limit_req_status, &b.limit_req_status);
                proptest::prop_assert_eq!(&a.extra, &b.extra);
            }
            (a, b) => proptest::prop_assert_eq!(a.err(), b.err(), "{}", line),
        }
    }
}

#[test]
fn bytes_that_are_not_utf8_are_read_as_replacement_characters() {
    // Found by review: such a line was skipped as "not a JSON object".
    let line = b"{\"time\":\"2026-01-05T10:00:01Z\",\"remote_addr\":\"1.1.1.2\",\"request\":\"GET /caf\xe9 HTTP/1.1\",\"status\":404}";
    let mut p = JsonParser::new(&[], &[]).unwrap();
    let mut r = Record::default();
    r.clear(0);
    p.parse(line, &mut r).unwrap();
    assert_eq!(
        (&*r.addr, &*r.path, r.status),
        (&b"1.1.1.2"[..], "/caf\u{fffd}".as_bytes(), Some(404))
    );
}

/// Where `line` holds entries: the start of each, as the chunk reads them.
fn entry_starts(line: &str) -> Vec<usize> {
    let mut p = JsonParser::new(&[], &[]).unwrap();
    let (mut starts, mut at) = (vec![0], 0);
    loop {
        let mut r = Record::default();
        r.clear(0);
        let rest = &line.as_bytes()[at..];
        let _ = match at {
            0 => p.parse(rest, &mut r),
            _ => p.parse_glued(rest, &mut r),
        };
        match p.glued() {
            Some(next) => at += next,
            None => return starts,
        }
        starts.push(at);
    }
}

#[test]
fn glued_entries_are_found_one_after_another() {
    let entry = |s| {
        format!(
            r#"{{"time":"2026-01-05T00:00:0{s}Z","remote_addr":"1.0.0.1","request":"GET / HTTP/1.1","status":200}}"#
        )
    };
    let (a, b, c) = (entry(1), entry(2), entry(3));
    assert_eq!(
        entry_starts(&format!("{a}{b}{c}")),
        [0, a.len(), a.len() + b.len()]
    );
    let caddy = r#"{"level":"info","ts":1716723772.5,"request":{"remote_ip":"10.5.1.1","method":"GET","uri":"/x","headers":{"User-Agent":["x{y"]}},"status":200}"#;
    let message = r#"{"level":"info","msg":"started"}"#;
    assert_eq!(
        entry_starts(&format!("{caddy}{message}{caddy}")),
        [0, caddy.len(), caddy.len() + message.len()]
    );
    // An entry nested in an object is no entry glued on.
    let envelope = format!(r#"{{"log":{a},"host":"x"}}"#);
    assert_eq!(entry_starts(&format!("{envelope}{b}")), [0, envelope.len()]);
    let cut_envelope = &envelope[..envelope.len() - 1];
    assert_eq!(
        entry_starts(&format!("{cut_envelope}{b}")),
        [0, cut_envelope.len()]
    );
    // An entry cut short between two whole ones is read on its own (and
    // skipped as cut short), not taken into the one before.
    let cut_between = &b[..b.find(r#""request""#).unwrap()];
    assert_eq!(
        entry_starts(&format!("{a}{cut_between}{c}")),
        [0, a.len(), a.len() + cut_between.len()]
    );
    // Cut after its nested request object closed: that object, more text
    // after it and no time of its own, is no entry.
    let cut = &caddy[..caddy.find(r#","status""#).unwrap()];
    assert_eq!(
        entry_starts(&format!("{cut}{a}{b}")),
        [0, cut.len(), cut.len() + a.len()]
    );
}

#[test]
fn a_line_looks_past_at_most_sixteen_entries_cut_short() {
    let entry = r#"{"time":"2026-01-05T00:00:01Z","remote_addr":"1.0.0.1","request":"GET / HTTP/1.1","status":200}"#;
    let cut = r#"{"a":{"#;
    let pair = format!("{cut}{entry}");
    let starts = entry_starts(&pair.repeat(20));
    // Each of the first 16 pairs: the entry cut short, then the whole one;
    // then the rest of the line is one entry.
    let expected: Vec<usize> = (0..16)
        .flat_map(|i| [i * pair.len(), i * pair.len() + cut.len()])
        .chain([16 * pair.len()])
        .collect();
    assert_eq!(starts, expected);
}

/// The arrival of each line of `lines`, read by the `json` format with `time_of`.
fn arrivals(time_of: TimeOf, lines: &[&str]) -> Vec<i64> {
    let mut p = JsonParser::new(&[], &[])
        .unwrap()
        .with_nginx_times(time_of, b"");
    lines
        .iter()
        .map(|line| {
            let mut r = Record::default();
            r.clear(0);
            p.parse(line.as_bytes(), &mut r).unwrap();
            r.time.unwrap().ms
        })
        .collect()
}

#[test]
fn nginx_logged_times_become_arrivals_by_request_time() {
    let lines = [
        // $msec, at the end of the request: 1.25 s earlier.
        r#"{"msec":"1767571210.500","remote_addr":"1.2.3.4","request":"GET /a HTTP/1.1","status":200,"request_time":"1.250"}"#,
        // A whole second: the middle of the possible arrivals, end + 0.5 s - 2.5 s.
        r#"{"time_iso8601":"2026-01-05T00:00:10+00:00","remote_addr":"1.2.3.4","request":"GET /a HTTP/1.1","status":200,"request_time":2.5}"#,
        r#"{"time_local":"05/Jan/2026:00:00:10 +0000","remote_addr":"1.2.3.4","request":"GET /a HTTP/1.1","status":200,"request_time":"2.500"}"#,
        // Another name for the time says nothing of when it was taken: as logged.
        r#"{"time":"2026-01-05T00:00:10.500Z","remote_addr":"1.2.3.4","request":"GET /a HTTP/1.1","status":200,"request_time":"1.250"}"#,
        // No duration: as logged.
        r#"{"msec":"1767571210.500","remote_addr":"1.2.3.4","request":"GET /a HTTP/1.1","status":200}"#,
    ];
    let second = 1_767_571_210_000;
    assert_eq!(
        arrivals(TimeOf::Arrival, &lines),
        [
            second - 750,
            second - 2000,
            second - 2000,
            second + 500,
            second + 500
        ]
    );
    assert_eq!(
        arrivals(TimeOf::Logged, &lines),
        [second + 500, second, second, second + 500, second + 500]
    );
}

#[test]
fn the_description_names_the_arrival_only_when_the_lines_have_it() {
    let parser = |head: &[u8]| {
        JsonParser::new(&[], &[])
            .unwrap()
            .with_nginx_times(TimeOf::Arrival, head)
    };
    let nginx = br#"{"time_local":"05/Jan/2026:00:00:10 +0000","request_time":"0.1"}"#;
    assert!(parser(nginx).time_used().unwrap().contains("request_time"));
    assert_eq!(
        parser(br#"{"time":"x","request_time":"0.1"}"#).time_used(),
        None
    );
    let logged = JsonParser::new(&[], &[])
        .unwrap()
        .with_nginx_times(TimeOf::Logged, nginx);
    assert_eq!(logged.time_used(), None);
}

#[test]
fn a_dotted_path_reads_nesting_first_then_a_key_with_dots() {
    let mapping = [("client", "client.ip"), ("path", "req.path")];
    let flat = r#"{"time":1767571200,"client.ip":"9.9.9.9","req.path":"/flat"}"#;
    let nested = r#"{"time":1767571200,"client":{"ip":"8.8.8.8"},"client.ip":"9.9.9.9","req":{"path":"/nested"}}"#;
    let r = parse_with(&mapping, flat).unwrap();
    assert_eq!((&*r.addr, &*r.path), (&b"9.9.9.9"[..], &b"/flat"[..]));
    let r = parse_with(&mapping, nested).unwrap();
    assert_eq!((&*r.addr, &*r.path), (&b"8.8.8.8"[..], &b"/nested"[..]));
    // The same through serde's reader (a line outside the tape's subset: an exponent).
    let odd = r#"{"time":1.7675712e9,"client.ip":"9.9.9.9","req.path":"/flat"}"#;
    let r = parse_with(&mapping, odd).unwrap();
    assert_eq!((&*r.addr, &*r.path), (&b"9.9.9.9"[..], &b"/flat"[..]));
}

#[test]
fn an_envelope_of_records_on_one_line_says_how_to_unwrap_it() {
    let envelope =
        r#"{"records": [{"time":"2026-01-05T00:00:00Z","properties":{"clientIp":"1.2.3.4"}}]}"#;
    assert_eq!(parse_with(&[], envelope).unwrap_err(), SkipReason::Envelope);
    assert!(
        SkipReason::Envelope
            .to_string()
            .contains("jq -c '.records[]'")
    );
    // Another object without request fields is no envelope.
    let other = r#"{"records":3,"level":"info"}"#;
    assert_eq!(
        parse_with(&[], other).unwrap_err(),
        SkipReason::NotAccessEntry
    );
}
