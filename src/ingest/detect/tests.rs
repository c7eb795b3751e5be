use super::*;

fn named(name: &str) -> Option<FormatChoice> {
    Some(FormatChoice::Source(formats::named(name).unwrap()))
}

#[test]
fn detects_each_family() {
    let combined =
        br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326 "-" "curl/8""#;
    assert_eq!(detect(combined), Some(FormatChoice::Combined));
    let common = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326"#;
    assert_eq!(detect(common), Some(FormatChoice::Common));
    let json = b"{\"ts\":1,\"path\":\"/\"}\n\n{\"ts\":2}\n";
    assert_eq!(detect(json), Some(FormatChoice::Json));
    let caddy = b"caddy  | {\"level\":\"info\",\"ts\":1.5}\n";
    assert_eq!(detect(caddy), Some(FormatChoice::Json));
}

#[test]
fn nothing_fits() {
    assert_eq!(detect(b"hello world\nfoo\n"), None);
    assert_eq!(detect(b"\n\n"), None);
}

#[test]
fn json_wrapped_in_one_document_says_how_to_unwrap_it() {
    // `gcloud logging read --format=json`, pretty-printed or not.
    for head in [&b"[\n  {\n    \"httpRequest\": {}\n"[..], b"[{\"a\":1},\n"] {
        assert_eq!(detect(head), None);
        assert!(wrapped_hint(head).contains("jq -c '.[]'"));
    }
    assert!(wrapped_hint(b"{\n  \"records\": [\n    {").contains("jq -c '.records[]'"));
    assert_eq!(wrapped_hint(b"hello world\n"), "");
    assert_eq!(wrapped_hint(b"[05/Jan/2026:00:00:00 +0000] x\n"), "");
}

#[test]
fn a_minority_of_bad_lines_does_not_spoil_detection() {
    let text = b"garbage\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n";
    assert_eq!(detect(text), Some(FormatChoice::Combined));
}

#[test]
fn a_first_line_longer_than_the_head_is_skipped_not_cut() {
    // Found by review: a 70 KB first line left detection a cut line only.
    let line = |path: &str| {
        format!(
            "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /{path} HTTP/1.0\" 200 1 \"-\" \"a\"\n"
        )
    };
    let long = line(&"a".repeat(70_000));
    let (first, second) = (long.repeat(2), line("b"));
    let data = format!("{first}{second}{second}");
    assert_eq!(
        head(data.as_bytes()),
        format!("{second}{second}").as_bytes()
    );
    assert_eq!(detect(head(data.as_bytes())), Some(FormatChoice::Combined));
    // A head with a line end in it starts at the input's start, as before.
    let short = format!("{second}{long}");
    assert_eq!(head(short.as_bytes()), &short.as_bytes()[..HEAD_BYTES]);
    // One line longer than the head and nothing else: its first bytes.
    let alone = "x".repeat(HEAD_BYTES * 2);
    assert_eq!(head(alone.as_bytes()).len(), HEAD_BYTES);
    assert_eq!(head(b"short\n"), b"short\n");
    // Every line longer than the head: nothing to read, unless the first
    // holds JSON entries glued onto one line, which are detected by their
    // first.
    assert_eq!(head(first.as_bytes()), b"");
    let entry = r#"{"time":"2026-01-05T00:00:00Z","remote_addr":"10.0.0.1","request":"GET /a HTTP/1.1","status":200}"#;
    let glued = format!("{}\n", entry.repeat(1000)).repeat(2);
    assert_eq!(head(glued.as_bytes()), &glued.as_bytes()[..HEAD_BYTES]);
    assert_eq!(detect(head(glued.as_bytes())), Some(FormatChoice::Json));
    let one_object = format!("{{\"a\":\"{}\"}}\n", "x".repeat(HEAD_BYTES));
    assert_eq!(head(one_object.as_bytes()), b"");
}

#[test]
fn vhost_combined_is_told_from_address_lists() {
    let vhost = b"www.example.com:443 192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\"\r\n";
    assert_eq!(detect(vhost), named("vhost_combined"));
    let list = b"10.0.0.2, 10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1 \"-\" \"a\"\n";
    assert_eq!(detect(list), Some(FormatChoice::Combined));
    let quoted_list = b"\"10.5.102.222, 199.96.1.1\" 10.2.1.185 - - [22/Jan/2016:13:18:29 +0000] \"GET / HTTP/1.1\" 200 2 \"-\" \"a\"\n";
    assert_eq!(detect(quoted_list), Some(FormatChoice::Combined));
}

#[test]
fn json_sources_by_their_fields_even_among_other_messages() {
    let caddy = b"caddy  | {\"level\":\"info\",\"ts\":1.5,\"msg\":\"serving\"}\n\
caddy  | {\"level\":\"info\",\"ts\":1.6,\"msg\":\"autosaved config\"}\n\
caddy  | {\"level\":\"info\",\"ts\":1767571200.5,\"request\":{\"remote_ip\":\"::1\",\"uri\":\"/\"},\"status\":0}\n";
    assert_eq!(detect(caddy), named("caddy"));
    let traefik =
        b"{\"StartUTC\":\"2026-01-05T00:00:00Z\",\"RequestPath\":\"/\",\"DownstreamStatus\":0}\n";
    assert_eq!(detect(traefik), named("traefik-json"));
    let nginx = b"{\"time_iso8601\":\"2026-01-05T00:00:00Z\",\"remote_addr\":\"::1\",\"request\":\"GET / HTTP/1.1\",\"status\":200}\n";
    assert_eq!(detect(nginx), Some(FormatChoice::Json));
}

#[test]
fn named_text_sources_are_told_apart() {
    let envoy = b"[2026-01-05T00:00:00.310Z] \"POST /api HTTP/2\" 204 - 154 0 226 100 \"203.0.113.9\" \"ua\" \"id\" \"auth\" \"10.0.2.1:80\"\n";
    assert_eq!(detect(envoy), named("envoy"));
    let ingress = b"192.0.2.10 - - [05/Jan/2026:00:00:00 +0000] \"GET / HTTP/1.1\" 200 512 \"-\" \"ua\" 431 0.004 [ns-svc-80] [] 10.244.1.17:8080 512 0.004 200 4b6a\n";
    assert_eq!(detect(ingress), named("ingress-nginx"));
    let traefik = b"192.0.2.20 - - [05/Jan/2026:00:00:00 +0000] \"GET / HTTP/2.0\" 200 3120 \"-\" \"ua\" 101 \"web@docker\" \"-\" 3ms\n";
    assert_eq!(detect(traefik), named("traefik"));
    let nginx_main = b"192.0.2.20 - - [05/Jan/2026:00:00:00 +0000] \"GET / HTTP/2.0\" 200 3120 \"-\" \"ua\" \"203.0.113.1\"\n";
    assert_eq!(detect(nginx_main), Some(FormatChoice::Combined));
    let w3c = b"#Version: 1.0\n#Fields: date time c-ip cs-method cs-uri-stem sc-status\n2026-01-05 00:00:00 192.0.2.1 GET / 200\n";
    assert_eq!(detect(w3c), named("w3c"));
}

#[test]
fn a_sample_full_of_the_servers_own_messages_reads_on_for_the_source() {
    // Found by review: 50 of Caddy's own lines first made the log generic
    // JSON (its `ts` read as the arrival, not ts minus duration).
    let own =
        "{\"level\":\"info\",\"ts\":1767571190,\"logger\":\"tls\",\"msg\":\"x\"}\n".repeat(60);
    let access = "{\"level\":\"info\",\"ts\":1767571201.25,\"logger\":\"http.log.access\",\"msg\":\"handled request\",\"request\":{\"remote_ip\":\"203.0.113.7\",\"method\":\"GET\",\"uri\":\"/ws\"},\"duration\":2.5,\"status\":200}\n";
    assert_eq!(detect(format!("{own}{access}").as_bytes()), named("caddy"));
    // With no access line in the head at all, it stays generic JSON.
    assert_eq!(detect(own.as_bytes()), Some(FormatChoice::Json));
}

#[test]
fn json_lines_with_bytes_that_are_not_utf8_are_json() {
    // nginx's escape=json writes bytes from 0x80 up as they came.
    let line = b"{\"time\":\"2026-01-05T10:00:01Z\",\"remote_addr\":\"1.1.1.2\",\"request\":\"GET /caf\xe9 HTTP/1.1\",\"status\":404}\n";
    assert_eq!(detect(&line.repeat(3)), Some(FormatChoice::Json));
}

#[test]
fn lines_holding_glued_entries_are_detected_by_their_first() {
    let combined =
        r#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326 "-" "curl/8""#;
    let glued = format!("{combined}{combined}\n{combined}{combined}\n{combined}\n");
    assert_eq!(detect(glued.as_bytes()), Some(FormatChoice::Combined));
    let traefik = r#"{"ClientHost":"203.0.113.5","DownstreamStatus":200,"RequestMethod":"GET","RequestPath":"/x","StartUTC":"2026-01-05T00:00:00.250Z"}"#;
    let glued = format!("{traefik}{traefik}{traefik}\n{traefik}{traefik}\n{traefik}\n");
    assert_eq!(detect(glued.as_bytes()), named("traefik-json"));
}

#[test]
fn braces_in_text_lines_do_not_make_them_json() {
    let haproxy = r#"Feb  6 12:14:14 localhost haproxy[14389]: 10.0.1.2:33317 [06/Feb/2009:12:14:14.655] http-in static/srv1 10/0/30/69/109 200 2750 - - ---- 1/1/1/1/0 0/0 {} {} "GET /index.html HTTP/1.1""#;
    assert_eq!(
        detect(format!("{haproxy}\n").repeat(3).as_bytes()),
        named("haproxy")
    );
    let combined = r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /q?variables={}&v={"a":1} HTTP/1.1" 200 5 "-" "curl/8""#;
    assert_eq!(
        detect(format!("{combined}\n").repeat(3).as_bytes()),
        Some(FormatChoice::Combined)
    );
}
