//! The HTTP version of each request as the products read it: the versions
//! each one answers itself before any limit (Envoy all but 1.1, HAProxy and
//! Go a line without one or a malformed one, nginx a line without one but a
//! `GET`, a major version other than 1 and a malformed one), checked against
//! the real nginx and HAProxy where they run, and where the version is read
//! from.

use super::*;

#[test]
fn envoy_gateway_counts_no_request_of_a_version_but_http_11() {
    // One request a second on /api/search. Envoy answers an HTTP/1 request
    // of any version but 1.1 with 426 itself (`accept_http_10` off), before
    // any filter: HTTP/1.0, a request line without a version (HTTP/0.9) and
    // `HTTP/1.2`; HTTP/2 goes through its own codec. A version that was
    // not logged (`$request_uri` and no `$request`) is counted. The policy
    // counts all of them.
    let requests = [
        "GET /api/search HTTP/1.1",
        "GET /api/search HTTP/1.0",
        "GET /api/search",
        "GET /api/search HTTP/2.0",
        "GET /api/search HTTP/1.2",
        "GET /api/search HTTP/1.1",
    ];
    let log_text: String = (requests.iter().enumerate())
        .map(|(i, r)| format!("{}.000 10.0.0.1 \"{r}\" 200\n", 1_767_571_200 + i))
        .collect();
    let (dir, _, policy) = one_a_second_on_search(&[]);
    let log = dir.path().join("versions.log");
    std::fs::write(&log, log_text).unwrap();
    for envoy in ["envoy", "envoy-timer", "envoy-ratelimit"] {
        let counts = rule_counts(&policy, &log, &["--gateway", envoy]);
        assert_eq!(counts, (Some(3), Some(2)), "{envoy}");
    }
    assert_eq!(rule_counts(&policy, &log, &[]), (Some(6), Some(5)));
    // Nginx, which takes every one of them, counts them all too.
    let nginx = rule_counts(&policy, &log, &["--gateway", "nginx"]);
    assert_eq!(nginx, (Some(6), Some(5)));
}

#[test]
fn envoy_gateway_reads_the_version_from_every_source() {
    // Each log has one request of each version named, for a rule over
    // everything: Envoy counts the HTTP/1.1, 2 and 3 ones and those whose
    // version is not logged, the policy all of them.
    let line = |t: u32, request: &str| {
        format!("1.2.3.4 - - [05/Jan/2026:00:00:{t:02} +0000] \"{request}\" 200 5 \"-\" \"ua\"")
    };
    let caddy = |t: u32, proto: &str| {
        format!(
            r#"{{"ts":17675712{t:02}.5,"request":{{"remote_ip":"1.2.3.4","proto":"{proto}","method":"GET","uri":"/a"}},"status":200}}"#
        )
    };
    let envoy = |t: u32, request: &str| {
        format!(
            "[2026-01-05T00:00:{t:02}.000Z] \"{request}\" 200 - 0 5 1 - \"1.2.3.4\" \"ua\" \"id{t}\" \"h\" \"u\""
        )
    };
    let json = |t: u32, fields: &str| {
        format!(
            r#"{{"time":"2026-01-05T00:00:{t:02}Z","remote_addr":"1.2.3.4",{fields},"status":200}}"#
        )
    };
    let w3c =
        |t: u32, version: &str| format!("2026-01-05 00:00:{t:02} 1.2.3.4 GET /a - 200 {version}");
    // A log's name, lines, format flags, and the requests (Envoy, policy).
    type Case = (
        &'static str,
        Vec<String>,
        &'static [&'static str],
        (u64, u64),
    );
    let logs: [Case; 7] = [
        (
            // The shortcut reads the first three, the general reader the
            // fourth (an escaped quote).
            "combined",
            vec![
                line(1, "GET /a HTTP/1.1"),
                line(2, "GET /a HTTP/1.0"),
                line(3, "GET /a"),
                line(4, "GET /a\\\"b HTTP/1.0"),
                line(5, "GET /a HTTP/2.0"),
                line(6, "GET /a HTTP/1.2"),
            ],
            &[],
            (2, 6),
        ),
        (
            "log_format",
            vec![
                "1767571201.000 1.2.3.4 \"GET /a\" HTTP/1.0 200".into(),
                "1767571202.000 1.2.3.4 \"GET /a\" HTTP/1.1 200".into(),
                "1767571203.000 1.2.3.4 \"GET /a\" - 200".into(),
            ],
            &[
                "--log-format",
                r#"$msec $remote_addr "$request_method $request_uri" $server_protocol $status"#,
            ],
            (2, 3),
        ),
        (
            "envoy",
            vec![
                envoy(1, "GET /a HTTP/1.1"),
                envoy(2, "GET /a HTTP/1.0"),
                envoy(3, "GET /a HTTP/2"),
            ],
            &[],
            (2, 3),
        ),
        (
            "json",
            vec![
                json(1, r#""request":"GET /a HTTP/1.0""#),
                json(2, r#""request":"GET /a HTTP/1.1""#),
                // Maybe an application's own field: no version, no HTTP/0.9.
                json(3, r#""request":"GET /a""#),
            ],
            &[],
            (2, 3),
        ),
        (
            "json-protocol",
            vec![
                json(1, r#""method":"GET","path":"/a","protocol":"HTTP/1.0""#),
                json(2, r#""method":"GET","path":"/a","protocol":"HTTP/1.1""#),
                json(3, r#""method":"GET","path":"/a""#),
            ],
            &[],
            (2, 3),
        ),
        (
            "caddy",
            vec![
                caddy(1, "HTTP/1.0"),
                caddy(2, "HTTP/2.0"),
                caddy(3, "h3"),
                caddy(4, "HTTP/1.1"),
            ],
            &[],
            (3, 4),
        ),
        (
            "w3c",
            vec![
                "#Fields: date time c-ip cs-method cs-uri-stem cs-uri-query sc-status cs-version"
                    .into(),
                w3c(1, "HTTP/1.0"),
                w3c(2, "HTTP/1.1"),
            ],
            &[],
            (1, 2),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let rule = "[[rule]]\nname='all'\nlimit='100/1m'\n";
    for (name, lines, args, want) in logs {
        let log = dir.path().join(format!("{name}.log"));
        std::fs::write(&log, lines.join("\n") + "\n").unwrap();
        let counted = |gateway: &[&str]| requests_counted(rule, &log, &[args, gateway].concat());
        assert_eq!(
            (counted(&["--gateway", "envoy"]), counted(&[])),
            want,
            "{name}"
        );
    }
}

#[test]
fn envoy_gateway_on_a_real_log_counts_no_http_10_request() {
    // A third-party Apache log whose clients send HTTP/1.0 and HTTP/1.1.
    let Some(log) = crate::support::realdata("elastic_examples_apache_logs") else {
        return;
    };
    let text = std::fs::read_to_string(&log).unwrap();
    let (mut routed, mut as_http_11) = (0, 0);
    for line in text.lines() {
        let Some(request) = line.split('"').nth(1) else {
            continue;
        };
        let words: Vec<&str> = request.split(' ').collect();
        let [method, target, version] = words[..] else {
            continue;
        };
        if !target.starts_with("/presentations/") {
            continue;
        }
        routed += 1;
        let envoy_takes_target = target
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'#');
        as_http_11 += u64::from(method == "GET" && version == "HTTP/1.1" && envoy_takes_target);
    }
    assert!(
        as_http_11 > 0 && as_http_11 + 50 < routed,
        "the log changed: {routed} requests, {as_http_11} of HTTP/1.1"
    );
    let rule = "[[rule]]\nname='slides'\nroute='^/presentations/'\nlimit='100000/1m'\n";
    let counted = |args: &[&str]| requests_counted(rule, &log, args);
    assert_eq!(counted(&[]), routed);
    assert_eq!(counted(&["--gateway", "envoy"]), as_http_11);
}

#[test]
fn haproxy_gateway_counts_no_request_line_without_a_version() {
    // One request a minute (HAProxy admits two): HAProxy answers a request
    // line with no version (an HTTP/0.9 request) 400 itself, and one whose
    // version is not `HTTP/` and one digit either side of a dot; it takes any
    // `HTTP/x.y`, `HTTP/0.9` written out among them. The policy counts every
    // one.
    let policy = "[[rule]]\nname='all'\nlimit='1/1m'\nburst=1\n";
    let Some((_running, addr, _dir)) = crate::export::start_haproxy(policy) else {
        return;
    };
    let lines = [
        "GET /a HTTP/1.1",
        "GET /a",
        "GET /a HTTP/1.0",
        "GET /b",
        "GET /a HTTP/0.9",
        "GET /a HTTP/1.2",
        "GET /a HTTP/1.10",
        "GET /a HTTP/1",
        "GET /a HTTP/4.0",
        "GET /a HTTP/2",
    ];
    let statuses: Vec<u16> = lines.iter().map(|l| status_of_line(addr, l, "")).collect();
    assert_eq!(statuses, [200, 400, 200, 400, 429, 429, 400, 400, 429, 400]);
    let log: String = (lines.iter().zip(&statuses).enumerate())
        .map(|(i, (l, s))| format!("1767571200.{i:03} 127.0.0.1 \"{l}\" {s}\n"))
        .collect();
    let compared = |extra: &[&str]| compared_logged(policy, &log, LOG_FORMAT, extra);
    assert_eq!(compared(&["--gateway", "haproxy"]), (10, 10));
    assert_eq!(compared(&[]), (4, 10), "the policy counts every request");
}

#[test]
fn nginx_gateway_counts_no_request_line_nginx_refuses_by_its_version() {
    // One request a minute (nginx admits one). nginx answers itself, before
    // limit_req: a request line with no version unless its method is GET
    // (400), `HTTP/0.9` written out and `HTTP/1` (400), a major version past
    // 1 (505, `HTTP/2` with no minor version too); it takes `HTTP/1.10`,
    // `HTTP/1.001` and `HTTP/1.2`, and serves a GET with no
    // version as HTTP/0.9 (a 429 here, with no status line: the statuses are
    // read from nginx's log). The policy counts every one.
    let policy = "[[rule]]\nname='all'\nlimit='1/1m'\nburst=1\n";
    let Some(nginx) = nginx_with(policy) else {
        return;
    };
    let lines = [
        "GET /a HTTP/1.1",
        "POST /a",
        "GET /a HTTP/0.9",
        "GET /a HTTP/4.0",
        "GET /a HTTP/1",
        "GET /a HTTP/1.10",
        "GET /a",
        "HEAD /a",
        "GET /a HTTP/1.2",
        "GET /a HTTP/12.0",
        "GET /a HTTP/1.001",
        "GET /a HTTP/2",
    ];
    for line in lines {
        response_to_line(nginx.addr(), line, "");
    }
    let log_text = nginx.read_access_log(lines.len());
    let statuses: Vec<&str> = (log_text.lines())
        .filter_map(|l| l.split('"').nth(2)?.split_whitespace().next())
        .collect();
    assert_eq!(
        statuses,
        [
            "200", "400", "400", "505", "400", "429", "429", "400", "429", "505", "429", "505"
        ],
        "{log_text}"
    );
    let (gateway, check) = replayed_nginx_log(policy, &log_text, &["--gateway", "nginx"]);
    assert_eq!(gateway, (12, 12), "{log_text}");
    assert!(check.contains("method, path or version"), "{check}");
    let (policy_reading, _) = replayed_nginx_log(policy, &log_text, &[]);
    assert_eq!(policy_reading, (5, 12), "the policy counts every request");
}
