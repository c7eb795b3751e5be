//! HAProxy's own stick tables as ground truth for `--gateway haproxy`: the
//! configuration `rlctl export --target haproxy` writes for a small policy runs
//! in a real HAProxy (wrapped in a frontend that answers 200 itself and logs
//! the date its rules ran at, the client, the request and the status), a
//! paced schedule from several loopback clients goes through it, and the
//! HAProxy model must decide every logged request as HAProxy did.
//!
//! Clock rounding: HAProxy decides on its internal millisecond tick clock; the
//! log shows the wall-clock `date(0,ms)` read by the frontend's first rule.
//! Both are updated together once per poll loop, but their millisecond parts
//! can round apart. (The accept date, `%Ts.%ms`, is no good: on a loaded
//! machine a request's rules can run several ms after its accept.) A request
//! whose modelled decision changes when it moves by up to ±2 ms is on a
//! clock-rounding boundary and is reported, not compared; the schedule's
//! spacings keep such requests rare. The log reads as nginx's
//! `$msec $remote_addr "$request" $status` (`$msec` takes epoch ms too).

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use rlctl::policy::Policy;
use rlctl::simulate::gateway::Gateway;
use rlctl::simulate::{NOT_APPLICABLE, Rule, replay};

use crate::support::haproxy::{Haproxy, send_schedule};
use crate::support::nginx::ScheduledRequest;
use crate::support::{json_of_success, rlctl, success};

/// Two rules with different windows (two stick tables, two tracked counters):
/// `/api/` 3 per second and `/slow/` 1 per 2 s, both per client address.
pub const POLICY: &str = r#"
[[rule]]
name = "api"
route = "^/api/"
limit = "3/1s"
algorithm = "sliding-log"

[[rule]]
name = "slow"
route = "^/slow/"
limit = "1/2s"
algorithm = "sliding-log"
"#;

/// The schedule, in sending order; each target ends in `?seq=N`.
///
/// - `/api/items` from 127.0.0.2–5: a burst of 9 back-to-back (HAProxy admits
///   T + 1 = 6), 16 requests spaced 170, 230, 270 or 310 ms (no multiple of the
///   1 s period, so few land near a period boundary), a 1.2 s pause, another
///   burst of 9;
/// - `/slow/items` from 127.0.0.6 at irregular gaps around the 2 s period;
/// - `/` from 127.0.0.7: no rule applies.
pub fn schedule() -> Vec<ScheduledRequest> {
    let mut plan: Vec<(u64, Ipv4Addr, &str)> = Vec::new();
    for (client, spacing_ms) in [170, 230, 270, 310].into_iter().enumerate() {
        let source = Ipv4Addr::new(127, 0, 0, 2 + client as u8);
        let start = 35 * client as u64;
        plan.extend((0..9).map(|_| (start, source, "/api/items")));
        let train: Vec<u64> = (1..=16).map(|k| start + k * spacing_ms).collect();
        let second_burst = train.last().expect("train is not empty") + 1_200;
        plan.extend(train.into_iter().map(|at| (at, source, "/api/items")));
        plan.extend((0..9).map(|_| (second_burst, source, "/api/items")));
    }
    for at in [0, 300, 1_250, 2_700, 3_100, 4_450, 6_900, 7_300, 8_650] {
        plan.push((at, Ipv4Addr::new(127, 0, 0, 6), "/slow/items"));
    }
    plan.extend((0..5).map(|_| (500, Ipv4Addr::new(127, 0, 0, 7), "/")));
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

/// The HAProxy configuration: `rlctl export --target haproxy` for [`POLICY`],
/// bound to the test's port, plus a log format and a 200 answer for requests
/// that pass every deny (HAProxy is its own backend).
fn config() -> String {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.toml");
    std::fs::write(&policy, POLICY).unwrap();
    let out = success(
        rlctl()
            .args(["export", "--target", "haproxy", "--policy"])
            .arg(&policy),
    );
    let exported = String::from_utf8(out.stdout).unwrap();
    let bind = "bind 127.0.0.1:8080  # your bind line";
    assert!(exported.contains(bind), "{exported}");
    format!(
        "{}    log-format \"%[var(txn.now)] %ci \\\"%r\\\" %ST\"\n    http-request return status 200 content-type text/plain string ok\n",
        exported.replace(bind, &format!("bind 127.0.0.1:{{{{port}}}}\n{NOW}"))
    )
}

/// The configuration issue 15 describes and many hand-written HAProxy
/// configurations use: `http_req_rate`, fed by `track-sc0` before the deny,
/// with the threshold the exporter computes for the `/api/` rule (3/1s sliding
/// log: C + L − 1 = 5), for every request.
const REQ_RATE_CONFIG: &str = "backend rl_all
    stick-table type ipv6 size 1k expire 2s store http_req_rate(1s)
frontend rlctl
    mode http
    bind 127.0.0.1:{{port}}
    http-request set-var(txn.now) date(0,ms)
    http-request track-sc0 src table rl_all
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 5 }
    log-format \"%[var(txn.now)] %ci \\\"%r\\\" %ST\"
    http-request return status 200 content-type text/plain string ok
";

/// The policy [`REQ_RATE_CONFIG`] enforces for `haproxy-req-rate`.
const REQ_RATE_POLICY: &str = r#"
[[rule]]
name = "all"
limit = "3/1s"
algorithm = "sliding-log"
"#;

/// The first rule of the frontend: the wall-clock date HAProxy's rules run at,
/// in ms (`date` and HAProxy's tick clock are updated together, once per poll
/// loop), for the log. The accept date (`%Ts.%ms`) can be several ms earlier
/// on a loaded machine.
const NOW: &str = "    http-request set-var(txn.now) date(0,ms)";

/// One log line: time (ms), client, method, path, status.
struct Line {
    t: i64,
    client: String,
    method: String,
    path: String,
    status: u16,
}

fn parse_line(line: &str) -> Line {
    fn bad<T>(line: &str) -> T {
        panic!("unexpected HAProxy log line: {line:?}")
    }
    let (time, rest) = line.split_once(' ').unwrap_or_else(|| bad(line));
    let (client, rest) = rest.split_once(" \"").unwrap_or_else(|| bad(line));
    let (request, status) = rest.rsplit_once("\" ").unwrap_or_else(|| bad(line));
    let mut words = request.split(' ');
    Line {
        t: time.parse().unwrap_or_else(|_| bad(line)),
        client: client.to_string(),
        method: words.next().unwrap_or_default().to_string(),
        path: words.next().unwrap_or_default().to_string(),
        status: status.trim().parse().unwrap_or_else(|_| bad(line)),
    }
}

/// The HAProxy model's decision per line (the lines sorted by time), with
/// line `i` moved by `shift(i)` ms but never before the client's previous
/// request (a client's requests keep their order).
fn modelled(run: &Run, lines: &[Line], shift: impl Fn(usize) -> i64) -> Vec<bool> {
    let rules = Policy::parse(run.policy, "policy").unwrap();
    let mut last: BTreeMap<&str, i64> = BTreeMap::new();
    let moved: Vec<i64> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let previous = last.get(l.client.as_str()).copied().unwrap_or(i64::MIN);
            let t = (l.t + shift(i)).max(previous);
            last.insert(&l.client, t);
            t
        })
        .collect();
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| moved[i]);
    let ts: Vec<i64> = order.iter().map(|&i| moved[i]).collect();
    let mut ids = BTreeMap::new();
    let clients: Vec<u32> = order
        .iter()
        .map(|&i| {
            let next = ids.len() as u32;
            *ids.entry(lines[i].client.clone()).or_insert(next)
        })
        .collect();
    let columns: Vec<Vec<u32>> = rules
        .iter()
        .map(|rule| {
            order
                .iter()
                .zip(&clients)
                .map(|(&i, &c)| {
                    if rule.matches(&lines[i].method, &lines[i].path) {
                        c
                    } else {
                        NOT_APPLICABLE
                    }
                })
                .collect()
        })
        .collect();
    let replay_rules: Vec<Rule> = rules
        .iter()
        .zip(&columns)
        .map(|(rule, keys)| Rule {
            limiter: run.gateway.limiter(&rule.spec).unwrap(),
            keys,
            key_count: ids.len(),
        })
        .collect();
    let result = replay(&ts, &replay_rules).unwrap();
    let mut decisions = vec![false; lines.len()];
    for (position, &i) in order.iter().enumerate() {
        decisions[i] = result.allowed[position];
    }
    decisions
}

/// `rlctl simulate --gateway G --compare-logged` on HAProxy's log agrees on
/// every request but those on a clock-rounding boundary.
fn cli_agrees(run: &Run, log_text: &str, requests: usize, boundaries: usize) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("haproxy.log");
    let policy = dir.path().join("policy.toml");
    std::fs::write(&log, log_text).unwrap();
    std::fs::write(&policy, run.policy).unwrap();
    let json = json_of_success(
        rlctl()
            .args(["simulate", "-q", "--format", "json", "--compare-logged"])
            .args(["--gateway", run.gateway.name()])
            .args(["--log-format", r#"$msec $remote_addr "$request" $status"#])
            .arg("--policy")
            .arg(&policy)
            .arg(&log),
    );
    let c = &json["comparison"][0];
    println!(
        "rlctl simulate --gateway {} --compare-logged: {} of {} agree",
        run.gateway, c["agree"], c["compared"]
    );
    assert_eq!(c["scenario"], run.gateway.name(), "{c}");
    assert_eq!(c["compared"].as_u64(), Some(requests as u64), "{c}");
    let agree = c["agree"].as_u64().unwrap() as usize;
    assert!(agree + boundaries >= requests, "{c:#}");
}

/// One comparison: a configuration, the policy it enforces and the model.
struct Run {
    config: String,
    policy: &'static str,
    gateway: Gateway,
}

#[test]
fn haproxy_model_reproduces_a_real_haproxy() {
    compare(&Run {
        config: config(),
        policy: POLICY,
        gateway: Gateway::Haproxy,
    });
}

#[test]
fn haproxy_req_rate_model_reproduces_a_real_haproxy() {
    compare(&Run {
        config: REQ_RATE_CONFIG.to_string(),
        policy: REQ_RATE_POLICY,
        gateway: Gateway::HaproxyReqRate,
    });
}

/// Runs the schedule through a real HAProxy with `run.config` and compares
/// every logged decision with `run.gateway`'s.
fn compare(run: &Run) {
    let Some(haproxy) = Haproxy::start(&run.config) else {
        return;
    };
    let plan = schedule();
    let sent = send_schedule(haproxy.addr(), &plan).expect("send the schedule");
    let text = haproxy.read_log(plan.len());
    drop(haproxy);
    let mut lines: Vec<Line> = text.lines().map(parse_line).collect();
    assert_eq!(lines.len(), plan.len(), "one log line per request:\n{text}");
    lines.sort_by_key(|l| l.t);
    for (request, result) in plan.iter().zip(&sent) {
        let line = lines
            .iter()
            .find(|l| l.path == request.path)
            .unwrap_or_else(|| panic!("{} is not in the log", request.path));
        assert_eq!(line.status, result.status, "{}", request.path);
        assert!(matches!(line.status, 200 | 429), "{}", line.status);
    }
    let logged: Vec<bool> = lines.iter().map(|l| l.status == 200).collect();
    let exact = modelled(run, &lines, |_| 0);
    // A request is on a boundary when moving it and the client's later
    // requests by up to ±2 ms (so relative to its period start) changes its
    // modelled decision.
    let boundary: Vec<bool> = (0..lines.len())
        .map(|i| {
            let client = &lines[i].client;
            [-2, -1, 1, 2].into_iter().any(|delta| {
                let moved = modelled(run, &lines, |j| {
                    if j >= i && &lines[j].client == client {
                        delta
                    } else {
                        0
                    }
                });
                moved[i] != exact[i]
            })
        })
        .collect();
    let compared: Vec<usize> = (0..lines.len()).filter(|&i| !boundary[i]).collect();
    let agree = compared.iter().filter(|&&i| exact[i] == logged[i]).count();
    let rejected = compared.iter().filter(|&&i| !logged[i]).count();
    println!(
        "{} agreement: {agree} of {} decisions ({} on a clock-rounding boundary, {rejected} rejected by HAProxy)",
        run.gateway,
        compared.len(),
        lines.len() - compared.len()
    );
    let disagreements: Vec<String> = compared
        .iter()
        .filter(|&&i| exact[i] != logged[i])
        .map(|&i| {
            let l = &lines[i];
            format!(
                "{} {} {} {} (model: {})",
                l.t, l.client, l.path, l.status, exact[i]
            )
        })
        .collect();
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    let boundaries = lines.len() - compared.len();
    cli_agrees(run, &text, lines.len(), boundaries);
    assert!(
        compared.len() * 10 >= lines.len() * 9,
        "too many boundaries"
    );
    assert!(rejected >= 20, "only {rejected} rejections");
    if run.gateway.counts_rejected() {
        // Not counting the denied requests gets this log wrong.
        let uncounted = Run {
            gateway: Gateway::Haproxy,
            config: String::new(),
            policy: run.policy,
        };
        let wrong = modelled(&uncounted, &lines, |_| 0)
            .iter()
            .zip(&logged)
            .filter(|(m, l)| m != l)
            .count();
        println!("  the model without counted rejections gets {wrong} of them wrong");
        assert!(wrong > 0);
    }
}

#[test]
fn haproxy_takes_each_target_and_method_as_rlctl_reads_it() {
    // Targets and methods of bytes HAProxy's parser treats apart (DEL, a
    // control byte, non-ASCII, `#`), drawn from a fixed seed, sent to a real
    // HAProxy under a limit no request meets: it answers 400 exactly where
    // rlctl's reading says no rule sees the request.
    let policy = "[[rule]]\nname='all'\nlimit='100000/1s'\n";
    let Some((_running, addr, _dir)) = crate::export::start_haproxy(policy) else {
        return;
    };
    const PIECES: [&str; 14] = [
        "/", "a", "bc", "x.y", "%2f", "~", "!", "*", "d/e", "\u{7f}", "\u{7f}", "#", "\u{1}",
        "\u{e9}",
    ];
    const METHODS: [&str; 8] = ["GET", "GET", "GET", "get", "M-SEARCH", "A_B", "G@T", "G(T"];
    let mut draw = crate::support::draws(0x9e37_79b9_7f4a_7c15u64);
    let requests: Vec<(&str, String)> = (0..400)
        .map(|_| {
            let method = METHODS[draw(METHODS.len())];
            // Origin and asterisk forms: HAProxy takes any other form only
            // when its authority is the Host header's (`Host: x` here).
            let mut target = ["/", "/", "/", "*"][draw(4)].to_string();
            for _ in 0..draw(7) {
                target.push_str(PIECES[draw(PIECES.len())]);
            }
            (method, target)
        })
        .collect();
    let mut wrong = Vec::new();
    let mut refused = 0;
    for (method, target) in &requests {
        let status = crate::gateway::status_with(addr, (method, target), "");
        let read = rlctl::simulate::gateway::haproxy_target::takes_method(method)
            && rlctl::simulate::gateway::haproxy_target::takes_target(target);
        refused += usize::from(status == 400);
        if (status == 200) != read {
            wrong.push(format!(
                "{method} {target:?}: HAProxy {status}, rlctl takes it: {read}"
            ));
        }
    }
    crate::support::assert_same_readings("HAProxy", requests.len(), refused, 30, &wrong);
}
