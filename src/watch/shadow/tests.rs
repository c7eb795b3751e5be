//! The dry run decides as `simulate::replay` does on the same lines.

use std::io::Write;

use super::*;
use crate::ingest::FormatChoice;
use crate::ingest::key::KeySpec;
use crate::policy::Policy;
use crate::simulate::gateway::Gateway;
use crate::watch::parse::FileParser;
use crate::watch::reorder::Reorder;
use crate::watch::testing::{
    POLICY, generated_log, ingest_settings, policy_keyed_by_ip, simulated, simulated_as,
};

mod late;

fn watched(
    log: &[u8],
    rules: &[CheckedRule],
    keys: &KeySet,
    batch: usize,
) -> (
    Vec<(u64, u64)>,
    Vec<bool>,
    crate::watch::parse::FileCounts,
    usize,
) {
    let (counts, decisions, lines, most_states, _) = watched_as(log, rules, keys, batch, None);
    (counts, decisions, lines, most_states)
}

fn watched_as(
    log: &[u8],
    rules: &[CheckedRule],
    keys: &KeySet,
    batch: usize,
    gateway: Option<Gateway>,
) -> (
    Vec<(u64, u64)>,
    Vec<bool>,
    crate::watch::parse::FileCounts,
    usize,
    usize,
) {
    let settings = ingest_settings(FormatChoice::Auto, keys.clone());
    let mut shadow = Shadow::with_policy(rules, &[], gateway, keys).unwrap();
    let mut parser = FileParser::new("gen.log");
    let mut reorder = Reorder::new(5000);
    let mut decisions = Vec::new();
    let mut released = Vec::new();
    let mut most_states = 0;
    let mut decide = |shadow: &mut Shadow, released: &mut Vec<(Millis, Request)>| {
        for (t, request) in released.drain(..) {
            decisions.push(shadow.decide(t, &request));
        }
        if let Some(now) = shadow.now() {
            most_states = most_states.max(shadow.sweep(now));
        }
    };
    // Batches of whole lines, as the follower hands them over.
    let mut start = 0;
    while start < log.len() {
        let mut end = (start + batch).min(log.len());
        end = memchr::memchr(b'\n', &log[end - 1..]).map_or(log.len(), |i| end + i);
        if let Some(chunk) = parser.parse(1, &log[start..end], &settings).unwrap() {
            for (t, request) in shadow.requests(&chunk) {
                assert!(!reorder.push(t, 0, request), "nothing is later than 5 s");
            }
        }
        reorder.release(&mut released);
        decide(&mut shadow, &mut released);
        start = end;
    }
    reorder.flush(&mut released);
    decide(&mut shadow, &mut released);
    let counts = shadow
        .figures()
        .iter()
        .map(|f| (f.requests, f.would_reject))
        .collect();
    // Two quiet days later every state decides like a new one.
    let later = shadow.now().unwrap_or(0) + 2 * 86_400_000;
    let left = (shadow.rules.iter_mut())
        .map(|rule| rule.states.sweep(later))
        .sum();
    (
        counts,
        decisions,
        parser.counts().clone(),
        most_states,
        left,
    )
}

#[test]
fn decides_as_simulate_replay_on_a_generated_log() {
    let (rules, keys) = policy_keyed_by_ip(POLICY);
    for (seed, batch) in [(1, 300), (2, 4096), (3, 97)] {
        let log = generated_log(6000, seed);
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&log).unwrap();
        let (want_counts, want, _) = simulated(file.path(), &rules, &keys);
        let (got_counts, got, lines, most_states) = watched(&log, &rules, &keys, batch);
        assert_eq!(got_counts, want_counts, "seed {seed}");
        assert_eq!(got, want, "seed {seed}");
        // Every rule rejected something, and not everything.
        for (rule, &(requests, rejected)) in rules.iter().zip(&got_counts) {
            assert!(
                rejected > 0 && rejected < requests,
                "{}: {rejected}/{requests}",
                rule.name
            );
        }
        assert_eq!(lines.lines, lines.parsed + lines.skipped_total());
        assert_eq!(lines.lines, 6000);
        assert!(lines.skipped_total() > 60, "{lines:?}");
        // Idle states were dropped: far fewer kept than keys ever seen.
        assert!(most_states < 4 * 40 + 7, "{most_states}");
    }
}

#[test]
fn decides_as_simulate_replay_with_every_gateway_model_and_drops_idle_states() {
    let rules = Policy::parse(POLICY, "p.toml").unwrap();
    let log = generated_log(4000, 5);
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(&log).unwrap();
    for g in Gateway::ALL {
        let primary = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        let keys = keys_for_policy(&rules, &[], Some(g), primary);
        let (want_counts, want, _) = simulated_as(file.path(), &rules, &keys, Some(g));
        let (got_counts, got, _, _, left) = watched_as(&log, &rules, &keys, 512, Some(g));
        assert_eq!(got_counts, want_counts, "{g}");
        assert_eq!(got, want, "{g}");
        assert!(got_counts.iter().any(|&(_, rejected)| rejected > 0), "{g}");
        assert_eq!(left, 0, "{g}: states kept after two quiet days");
    }
}

/// The one fixed-window rule `r` of `limit`, keyed by address.
fn fixed_window(limit: &str) -> Shadow {
    let policy = format!("[[rule]]\nname='r'\nlimit='{limit}'\nalgorithm='fixed-window'\n");
    let (rules, keys) = policy_keyed_by_ip(&policy);
    Shadow::new(&rules, &keys).unwrap()
}

/// [`fixed_window`], sweeping states at the newest time decided (as when
/// one request is enough to reach a time), for short hand-worked sequences.
fn fixed_window_swept_at_newest(limit: &str) -> Shadow {
    let mut shadow = fixed_window(limit);
    shadow.reached = Reached::by(1);
    shadow
}

/// A request of `GET /` by the client `k` (of a one-rule policy).
fn request(k: &str) -> Request {
    Request {
        keys: vec![Some(k.into())],
        exempt: false,
        endpoint: "GET /".into(),
        status: 200,
    }
}

#[test]
fn figures_count_requests_rejections_and_clients() {
    let mut shadow = fixed_window_swept_at_newest("2/1m");
    // a: 3 requests in minute 0 (the third rejected); b: 1.
    for (t, k) in [(0, "a"), (1, "a"), (2, "b"), (3, "a")] {
        shadow.decide(t, &request(k));
    }
    assert_eq!(shadow.sweep(3), 2);
    let f = &shadow.figures()[0];
    assert_eq!((f.requests, f.would_reject), (4, 1));
    assert_eq!((f.hour.clients_seen, f.hour.clients_hit), (2, 1));
    // At 60 s both windows have passed: the states are dropped.
    shadow.decide(60_000, &request("c"));
    assert_eq!(shadow.sweep(60_000), 1);
    assert_eq!(shadow.figures()[0].hour.windows, 2);
}

#[test]
fn exempt_requests_are_admitted_and_counted_by_no_rule() {
    let policy = Policy::parse_policy(
        "[[rule]]\nname='r'\nlimit='1/1m'\nalgorithm='fixed-window'\n\n\
         [[rule]]\nname='health'\nroute='^/healthz$'\nexempt=true\n\n\
         [[rule]]\nname='office'\nclient='10.0.0.2'\nexempt=true\n",
        "p.toml",
    )
    .unwrap();
    let keys = keys_for_policy(
        &policy.rules,
        &policy.exemptions,
        None,
        KeySet::new(KeySpec::parse("ip", None, None).unwrap()),
    );
    let settings = ingest_settings(FormatChoice::Auto, keys.clone());
    let mut log = Vec::new();
    // In one minute: 10.0.0.1 asks /healthz twice (exempt) then /a twice
    // (admitted, rejected); 10.0.0.2 asks /a three times (exempt client).
    for (ip, path) in [
        (1, "/healthz"),
        (1, "/healthz?full=1"),
        (1, "/a"),
        (2, "/a"),
        (1, "/a"),
        (2, "/a"),
        (2, "/a"),
    ] {
        writeln!(
            log,
            "10.0.0.{ip} - - [10/Oct/2025:13:55:36 +0000] \"GET {path} HTTP/1.1\" 200 1 \"-\" \"ua\""
        )
        .unwrap();
    }
    let mut parser = FileParser::new("a.log");
    let chunk = parser.parse(1, &log, &settings).unwrap().unwrap();
    let mut shadow = Shadow::with_policy(&policy.rules, &policy.exemptions, None, &keys).unwrap();
    let requests = shadow.requests(&chunk);
    let exempt: Vec<bool> = requests.iter().map(|(_, r)| r.exempt).collect();
    assert_eq!(exempt, [true, true, false, true, false, true, true]);
    let decisions: Vec<bool> = requests.iter().map(|(t, r)| shadow.decide(*t, r)).collect();
    assert_eq!(decisions, [true, true, true, true, false, true, true]);
    let f = &shadow.figures()[0];
    assert_eq!((f.requests, f.would_reject, shadow.exempt()), (2, 1, 5));
    assert_eq!(f.hour.clients_seen, 1);
}

#[test]
fn top_clients_carry_their_profile_and_only_tracked_ones_are_kept() {
    const MIN: i64 = 60_000;
    let (rules, keys) =
        policy_keyed_by_ip("[[rule]]\nname='r'\nlimit='2/1m'\nalgorithm='fixed-window'\n");
    let mut shadow = Shadow::new(&rules, &keys).unwrap();
    // 70 quiet clients send 3 requests a minute for 20 minutes (the third is
    // rejected: 70 clients cycle through the 64 counters); x sends 30 a
    // minute in minutes 1, 2 and 3, all on GET /api.
    let mut requests: Vec<(i64, String, &str)> = Vec::new();
    for m in 0..20 {
        for c in 0..70 {
            for k in 0..3 {
                requests.push((m * MIN + c * 100 + k, format!("c{c}"), "GET /"));
            }
        }
    }
    for m in 1..=3 {
        for i in 0..30 {
            requests.push((m * MIN + 10_000 + i * 10, "x".into(), "GET /api"));
        }
    }
    requests.sort();
    for (t, key, endpoint) in &requests {
        let request = Request {
            keys: vec![Some(key.as_str().into())],
            exempt: false,
            endpoint: (*endpoint).into(),
            status: 200,
        };
        shadow.decide(*t, &request);
        let rule = &shadow.rules[0];
        assert_eq!(rule.tracked.len(), rule.top.len());
    }
    let now = 19 * MIN + 59_000;
    shadow.sweep(now);
    // Every client in the table has a profile; those pushed out have none.
    let rule = &shadow.rules[0];
    assert_eq!(rule.top.len(), 64);
    let held: Vec<String> = (0..70)
        .map(|c| format!("c{c}"))
        .filter(|c| rule.top.contains(c))
        .collect();
    assert_eq!(held.len(), 63);
    for c in 0..70 {
        let key = format!("c{c}");
        let profile = rule.tracked.profile(&key, now, 3);
        assert_eq!(profile.is_some(), rule.top.contains(&key), "{key}");
    }
    // The closed windows: 70 x 19 of 3 requests (minute 19 is still open
    // for the quiet clients) and x's 3 windows of 30: p99 3; without the
    // windows of clients in the table, 3 too: T = 15. x's windows 1, 2, 3
    // are above it, in a row, 3 of 20 spanned.
    let f = &shadow.figures_at(now)[0];
    assert_eq!(f.hour.quantiles[2], ("0.99".into(), 3));
    assert_eq!(f.hour.baseline_p99, 3);
    let x = &f.top[0];
    // 28 rejected a minute; the count is an upper bound (the table was full
    // when x entered), exact once its error is taken off.
    assert_eq!((x.client.as_str(), x.peak_window), ("x", 30));
    assert_eq!(x.would_reject - x.error, 84);
    assert_eq!(x.profile.len(), 1);
    assert_eq!(
        x.profile[0].evidence,
        "peak 30/1m; 3 windows in a row above 5 x p99 3 = 15/1m; 100% of its requests on GET /api"
    );
    let json = serde_json::to_value(x).unwrap();
    assert_eq!(json["profile"][0]["kind"], "runaway_loop");
    assert_eq!(json["peak_window"], 30);
    // The quiet clients listed match nothing.
    assert!(f.top[1..].iter().all(|c| c.profile.is_empty()));
}

#[test]
fn gateways_key_on_each_address_where_the_command_keys_on_prefixes() {
    let rules = Policy::parse(POLICY, "p.toml").unwrap();
    let log = generated_log(4000, 7);
    let keys_as = |cidr4, gateway| {
        let primary = KeySet::new(KeySpec::parse("ip", cidr4, None).unwrap());
        keys_for_policy(&rules, &[], gateway, primary)
    };
    let decided = |cidr4, gateway| {
        let (counts, decisions, _, _, _) =
            watched_as(&log, &rules, &keys_as(cidr4, gateway), 512, gateway);
        (counts, decisions)
    };
    // nginx's configuration keys on `$binary_remote_addr` whatever the
    // prefixes: the same decisions as without them.
    let nginx = Some(Gateway::Nginx);
    let (prefixed, whole) = (decided(Some(8), nginx), decided(None, nginx));
    assert_eq!(prefixed.0, whole.0);
    assert!(
        prefixed.1 == whole.1,
        "nginx decided otherwise with prefixes"
    );
    // A Redis script is keyed as the application keys it: by the prefixes.
    let redis = Some(Gateway::RedisSwc);
    assert_ne!(decided(Some(8), redis).0, decided(None, redis).0);
}

#[test]
fn kong_exempts_a_client_ignoring_case_as_its_route_does() {
    let policy = Policy::parse_policy(
        "[[rule]]\nname='r'\nkey='user'\nlimit='1/1m'\nalgorithm='fixed-window'\n\n\
         [[rule]]\nname='svc'\nkey='user'\nclient='Svc'\nexempt=true\n",
        "p.toml",
    )
    .unwrap();
    let mut log = Vec::new();
    for user in ["svc", "Svc", "SVC", "other"] {
        writeln!(
            log,
            "10.0.0.1 - {user} [10/Oct/2025:13:55:36 +0000] \"GET /a HTTP/1.1\" 200 1 \"-\" \"ua\""
        )
        .unwrap();
    }
    let exempt = |gateway: Option<Gateway>| -> Vec<bool> {
        let primary = KeySet::new(KeySpec::parse("user", None, None).unwrap());
        let keys = keys_for_policy(&policy.rules, &policy.exemptions, gateway, primary);
        let settings = ingest_settings(FormatChoice::Auto, keys.clone());
        let chunk = (FileParser::new("a.log").parse(1, &log, &settings).unwrap()).unwrap();
        let shadow =
            Shadow::with_policy(&policy.rules, &policy.exemptions, gateway, &keys).unwrap();
        shadow
            .requests(&chunk)
            .iter()
            .map(|(_, r)| r.exempt)
            .collect()
    };
    assert_eq!(exempt(None), [false, true, false, false]);
    assert_eq!(exempt(Some(Gateway::Kong)), [true, true, true, false]);
    assert_eq!(exempt(Some(Gateway::Nginx)), [false, true, false, false]);
}
