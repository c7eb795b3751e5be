//! nginx's own `limit_req` as ground truth: a paced request schedule from
//! several loopback clients is sent to a real nginx, and its access log (with
//! `$limit_req_status`) records which requests the leaky bucket passed or
//! rejected. [`run_limit_req_scenario`] returns that log for the simulator
//! tests to replay; the tests here check the log itself is complete and sane.

use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

use crate::support::json_of_success;
use crate::support::nginx::{
    Nginx, ScheduledRequest, SentRequest, http_get, send_schedule, status_of_request_line,
};

/// The `http {}` body of the scenario: `/api/` allows 5 r/s with a burst of 3,
/// `/slow/` 30 r/m with no burst, `/` is unlimited. Decisions are immediate
/// (`nodelay`), so every request is either passed or rejected with 429.
///
/// Limited locations answer with `empty_gif` (content phase), not `return`:
/// `return` runs in the rewrite phase, before `limit_req` (preaccess phase)
/// ever sees the request, so nothing would be limited.
pub const LIMIT_REQ_CONFIG: &str = r#"
    limit_req_zone $binary_remote_addr zone=perip:1m rate=5r/s;
    limit_req_zone $binary_remote_addr zone=slow:1m rate=30r/m;
    log_format rl '$msec $remote_addr "$request" $status $limit_req_status';
    server {
        listen 127.0.0.1:{{port}};
        access_log {{access_log}} rl;
        location /api/ {
            limit_req zone=perip burst=3 nodelay;
            limit_req_status 429;
            empty_gif;
        }
        location /slow/ {
            limit_req zone=slow nodelay;
            limit_req_status 429;
            empty_gif;
        }
        location / {
            return 200 "ok\n";
        }
    }
"#;

/// The request schedule of the scenario, in sending order. Each request's
/// target ends in `?seq=N`, N being its index here, so log lines map back to
/// requests.
///
/// - `/api/items` from 127.0.0.2–5: a burst of 10 back-to-back requests, then
///   16 requests spaced 153, 190, 210 or 250 ms (one spacing per client,
///   around the 200 ms drain interval of 5 r/s), a 1 s pause, another burst.
///   153 rather than 150 ms: at 150 ms every fourth request would fill the
///   bucket exactly to the burst limit, where the log's `$msec` (wall clock)
///   and nginx's own clock (monotonic) can round one millisecond apart, and a
///   replay of the log could then decide differently from nginx. With these
///   spacings every paced request is nominally at least 10 ms from the limit.
///   (The fourth request of a burst reaches the limit exactly, but a rounding
///   difference can only leave the bucket emptier, so it passes either way.)
/// - `/slow/items` from 127.0.0.6: gaps alternating 1.5 s and 2.5 s around
///   the 2 s interval of 30 r/m.
/// - `/` from 127.0.0.7: an unlimited burst of 5 (`$limit_req_status` is `-`).
pub fn limit_req_schedule() -> Vec<ScheduledRequest> {
    let mut plan: Vec<(u64, Ipv4Addr, &str)> = Vec::new();
    for (client, spacing_ms) in [153, 190, 210, 250].into_iter().enumerate() {
        let source = Ipv4Addr::new(127, 0, 0, 2 + client as u8);
        let start = 40 * client as u64;
        plan.extend((0..10).map(|_| (start, source, "/api/items")));
        let train: Vec<u64> = (1..=16).map(|k| start + k * spacing_ms).collect();
        let second_burst = train.last().expect("train is not empty") + 1_000;
        plan.extend(train.into_iter().map(|at| (at, source, "/api/items")));
        plan.extend((0..10).map(|_| (second_burst, source, "/api/items")));
    }
    // Gaps of 1.5 s, 2.5 s, 1.5 s, 2.5 s, 1.5 s.
    for at in [0, 1_500, 4_000, 5_500, 8_000, 9_500] {
        plan.push((at, Ipv4Addr::new(127, 0, 0, 6), "/slow/items"));
    }
    plan.extend((0..5).map(|_| (500, Ipv4Addr::new(127, 0, 0, 7), "/")));
    // Stable: requests due at the same moment keep their burst order.
    plan.sort_by_key(|&(offset_ms, _, _)| offset_ms);
    plan.into_iter()
        .enumerate()
        .map(|(seq, (offset_ms, source, path))| ScheduledRequest {
            offset_ms,
            source,
            path: format!("{path}?seq={seq}"),
        })
        .collect()
}

/// One run of the scenario against a real nginx.
pub struct LimitReqRun {
    /// The schedule that was sent ([`limit_req_schedule`]).
    pub schedule: Vec<ScheduledRequest>,
    /// What the client saw, one entry per scheduled request.
    pub sent: Vec<SentRequest>,
    /// nginx's access log, format `rl` of [`LIMIT_REQ_CONFIG`].
    pub log_text: String,
}

/// Starts nginx with [`LIMIT_REQ_CONFIG`], sends [`limit_req_schedule`] and
/// returns the access log it wrote; `None` when nginx is not installed.
/// Takes about 10 s (the schedule spans 9.5 s).
pub fn run_limit_req_scenario() -> Option<LimitReqRun> {
    let nginx = Nginx::start(LIMIT_REQ_CONFIG)?;
    let schedule = limit_req_schedule();
    let sent = send_schedule(nginx.addr(), &schedule)
        .unwrap_or_else(|err| panic!("request failed: {err}\n{}", nginx.error_log()));
    let log_text = nginx.read_access_log(schedule.len());
    let worst_lateness = schedule
        .iter()
        .zip(&sent)
        .map(|(request, sent)| sent.sent_at.as_millis() as i64 - request.offset_ms as i64)
        .max()
        .unwrap_or(0);
    println!(
        "limit_req scenario: {} requests, worst lateness {worst_lateness} ms",
        sent.len()
    );
    Some(LimitReqRun {
        schedule,
        sent,
        log_text,
    })
}

/// One line of the `rl` log format.
#[derive(Debug)]
struct RlLine {
    remote_addr: Ipv4Addr,
    target: String,
    status: u16,
    limit_req_status: String,
}

fn parse_rl_line(line: &str) -> RlLine {
    let mut quoted = line.split('"');
    let (head, request, tail) = match (quoted.next(), quoted.next(), quoted.next()) {
        (Some(head), Some(request), Some(tail)) => (head, request, tail),
        _ => panic!("not an rl line: {line}"),
    };
    let mut head = head.split_whitespace();
    let msec: f64 = head.next().and_then(|t| t.parse().ok()).expect(line);
    assert!(msec > 1e9, "odd $msec in {line}");
    let remote_addr = head.next().and_then(|a| a.parse().ok()).expect(line);
    let target = request.split(' ').nth(1).expect(line).to_owned();
    let mut tail = tail.split_whitespace();
    let status = tail.next().and_then(|s| s.parse().ok()).expect(line);
    let limit_req_status = tail.next().expect(line).to_owned();
    RlLine {
        remote_addr,
        target,
        status,
        limit_req_status,
    }
}

#[test]
fn nginx_limit_req_log_has_decisions() {
    let Some(run) = run_limit_req_scenario() else {
        return;
    };
    let lines: Vec<RlLine> = run.log_text.lines().map(parse_rl_line).collect();
    assert_eq!(lines.len(), run.schedule.len(), "log:\n{}", run.log_text);

    let by_target: BTreeMap<&str, &RlLine> = lines.iter().map(|l| (l.target.as_str(), l)).collect();
    assert_eq!(by_target.len(), lines.len(), "a request was logged twice");
    for (request, sent) in run.schedule.iter().zip(&run.sent) {
        let line = by_target
            .get(request.path.as_str())
            .unwrap_or_else(|| panic!("{} is not in the log", request.path));
        assert_eq!(line.remote_addr, request.source, "{line:?}");
        assert_eq!(
            line.status, sent.status,
            "client and log disagree: {line:?}"
        );
    }

    let mut decisions: BTreeMap<Ipv4Addr, BTreeSet<&str>> = BTreeMap::new();
    for line in &lines {
        let limited = !line.target.starts_with("/?");
        let expected = match (limited, line.status) {
            (true, 200) => "PASSED",
            (true, 429) => "REJECTED",
            (false, 200) => "-",
            _ => panic!("unexpected status: {line:?}"),
        };
        assert_eq!(line.limit_req_status, expected, "{line:?}");
        decisions
            .entry(line.remote_addr)
            .or_default()
            .insert(expected);
    }
    let both = decisions
        .values()
        .filter(|seen| seen.contains("PASSED") && seen.contains("REJECTED"))
        .count();
    assert!(
        both >= 3,
        "passed and rejected for only {both} clients: {decisions:?}"
    );
    simulate_reproduces_nginx(&run.log_text);
}

/// The policy equivalent of [`LIMIT_REQ_CONFIG`].
const LIMIT_REQ_POLICY: &str = r#"
[[rule]]
name = "api"
route = "^/api/"
limit = "5r/s"
burst = 3
algorithm = "leaky-bucket"

[[rule]]
name = "slow"
route = "^/slow/"
limit = "30r/m"
algorithm = "leaky-bucket"
"#;

/// `rlctl simulate` on the log nginx wrote decides every request as nginx did.
fn simulate_reproduces_nginx(log_text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&log, log_text).unwrap();
    std::fs::write(&policy, LIMIT_REQ_POLICY).unwrap();
    let json = json_of_success(
        crate::support::rlctl()
            .args([
                "simulate",
                "-q",
                "--format",
                "json",
                "--compare-logged",
                "--nodelay",
            ])
            .args([
                "--log-format",
                r#"$msec $remote_addr "$request" $status $limit_req_status"#,
            ])
            .arg("--policy")
            .arg(&policy)
            .arg(&log),
    );
    let c = &json["comparison"][0];
    println!(
        "nginx agreement: {} of {} decisions ({} passed by both, {} rejected by both)",
        c["agree"],
        c["compared"],
        c["simulated_allowed_logged_allowed"],
        c["simulated_rejected_logged_rejected"]
    );
    assert_eq!(
        c["compared"].as_u64(),
        Some(log_text.lines().count() as u64),
        "{c}"
    );
    assert_eq!(
        c["agree"], c["compared"],
        "simulation and nginx disagree: {c:#}"
    );
    assert!(
        c["simulated_rejected_logged_rejected"].as_u64() > Some(20),
        "{c}"
    );
}

#[test]
fn nginx_check_config_accepts_valid_and_rejects_invalid() {
    let valid = "limit_req_zone $binary_remote_addr zone=z:1m rate=10r/s;
        server { listen 127.0.0.1:{{port}}; location / { limit_req zone=z burst=5; } }";
    let Some(verdict) = Nginx::check_config(valid) else {
        return;
    };
    assert_eq!(verdict, Ok(()));

    let unknown_zone = "server { listen 127.0.0.1:{{port}}; location / { limit_req zone=nope; } }";
    let message = Nginx::check_config(unknown_zone)
        .expect("nginx was found a moment ago")
        .expect_err("a limit_req without its zone must be rejected");
    assert!(message.contains("nope"), "{message}");
}

/// `\xHH` escapes of nginx's access log (`escape=default`) as the bytes.
fn unescape_nginx_log(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 2..i + 4)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (
            bytes[i],
            bytes.get(i + 1),
            hex.and_then(|h| u8::from_str_radix(h, 16).ok()),
        ) {
            (b'\\', Some(b'x'), Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    out
}

#[test]
fn nginx_uri_is_what_a_real_nginx_makes_of_each_path() {
    // Paths of escapes, slashes and dot segments, drawn from a fixed seed,
    // and paths with a space or control byte;
    // nginx logs the `$uri` it matches locations and maps against, or
    // answers 400 where rlctl's port says no rule sees the request.
    let config = "log_format u '$status $uri';\n\
                  server {\n    listen 127.0.0.1:{{port}};\n    access_log {{access_log}} u;\n    \
                  location / { return 200 \"ok\\n\"; }\n}\n";
    let Some(nginx) = Nginx::start(config) else {
        return;
    };
    const PIECES: [&str; 24] = [
        "/", "//", ".", "..", "/.", "/..", "%2e", "%2E", "%2f", "%2F", "%25", "%3f", "%3F", "%23",
        "%00", "%zz", "%4", "a", "b", "%61", "%ff", "%c3%a9", "+", "x.y",
    ];
    let mut draw = crate::support::draws(0x2545_f491_4f6c_dd1du64);
    let paths: Vec<String> = (0..400)
        .map(|_| {
            let len = 1 + draw(6);
            let mut path = "/".to_string();
            for _ in 0..len {
                path.push_str(PIECES[draw(PIECES.len())]);
            }
            path
        })
        // A space or control byte in the target, sent as it is.
        .chain(["/a b", "/a  b", "/a\tb", "/a\u{1}b", "/a\u{7f}b", "/a%20b"].map(String::from))
        .collect();
    let statuses: Vec<u16> = (paths.iter())
        .map(|p| http_get(nginx.addr(), Ipv4Addr::new(127, 0, 0, 2), p).unwrap())
        .collect();
    let log = nginx.read_access_log(paths.len());
    let logged: Vec<&str> = log.lines().collect();
    assert_eq!(logged.len(), paths.len(), "{log}");
    let mut wrong = Vec::new();
    for ((path, status), line) in paths.iter().zip(&statuses).zip(&logged) {
        let real = match status {
            200 => {
                let uri = line.strip_prefix("200 ").expect("a 200 line");
                Some(String::from_utf8_lossy(&unescape_nginx_log(uri)).into_owned())
            }
            400 => None,
            other => panic!("{path}: status {other}"),
        };
        let ported =
            rlctl::simulate::gateway::request_names::nginx_uri(path).map(|u| u.into_owned());
        if ported != real {
            wrong.push(format!("{path}: nginx {real:?}, rlctl {ported:?}"));
        }
    }
    let nginx_400 = statuses.iter().filter(|&&s| s == 400).count();
    crate::support::assert_same_readings("nginx", paths.len(), nginx_400, 10, &wrong);
}

#[test]
fn a_method_with_no_path_is_answered_400_before_any_limit_and_is_no_endpoint() {
    // One request a minute per address: the second `GET /` passes only if
    // the lines with no path before it were not counted.
    let config = "limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;\n\
                  server {\n    listen 127.0.0.1:{{port}};\n    access_log {{access_log}} combined;\n    \
                  location / { limit_req zone=one nodelay; limit_req_status 429; empty_gif; }\n}\n";
    let Some(nginx) = Nginx::start(config) else {
        return;
    };
    let lines = [
        "GET",
        "GET ?q=1 HTTP/1.1",
        "GET / HTTP/1.1",
        "GET / HTTP/1.1",
    ];
    let statuses: Vec<u16> = (lines.iter())
        .map(|line| status_of_request_line(nginx.addr(), Ipv4Addr::new(127, 0, 0, 2), line))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|err| panic!("request failed: {err}\n{}", nginx.error_log()));
    assert_eq!(statuses, [400, 400, 200, 429]);
    let log = nginx.read_access_log(lines.len());
    assert!(log.contains("\"GET\" 400 "), "{log}");
    let report = json_of_success(crate::support::rlctl().args([
        "analyze",
        "-q",
        "--format",
        "json",
        "--discover",
        "off",
        nginx.access_log_path().to_str().unwrap(),
    ]));
    let endpoints: Vec<(&str, u64)> = (report["endpoints"].as_array().unwrap().iter())
        .map(|e| {
            (
                e["endpoint"].as_str().unwrap(),
                e["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(endpoints, [("(invalid request)", 2), ("GET /", 2)]);
}
