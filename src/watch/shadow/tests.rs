//! The dry run decides as `simulate::replay` does on the same lines.

use std::io::Write;

use super::*;
use crate::ingest::key::KeySpec;
use crate::ingest::{FormatChoice, Settings};
use crate::policy::Policy;
use crate::watch::parse::FileParser;
use crate::watch::reorder::Reorder;
use crate::watch::testing::{POLICY, generated_log, simulated};

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
    let settings = Settings {
        inputs: Vec::new(),
        format: FormatChoice::Auto,
        json_fields: Vec::new(),
        keys: keys.clone(),
        routes: Vec::new(),
        strict: false,
        progress: None,
        paths: true,
        time_of: crate::ingest::arrival::TimeOf::Arrival,
    };
    let mut shadow = Shadow::new(rules, keys).unwrap();
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
        if let Some(chunk) = parser.parse(&log[start..end], &settings).unwrap() {
            for (t, request) in shadow.requests(&chunk) {
                assert!(!reorder.push(t, request), "nothing is later than 5 s");
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
    (counts, decisions, parser.counts().clone(), most_states)
}

#[test]
fn decides_as_simulate_replay_on_a_generated_log() {
    let rules = Policy::parse(POLICY, "p.toml").unwrap();
    let keys = keys_for(
        &rules,
        KeySet::new(KeySpec::parse("ip", None, None).unwrap()),
    );
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
fn figures_count_requests_rejections_and_clients() {
    let rules = Policy::parse(
        "[[rule]]\nname='r'\nlimit='2/1m'\nalgorithm='fixed-window'\n",
        "p.toml",
    )
    .unwrap();
    let keys = keys_for(
        &rules,
        KeySet::new(KeySpec::parse("ip", None, None).unwrap()),
    );
    let mut shadow = Shadow::new(&rules, &keys).unwrap();
    let request = |k: &str| Request {
        keys: vec![Some(k.into())],
        exempt: false,
    };
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
