//! A real Redis running the widely deployed sliding window counter script as
//! ground truth for `--gateway redis-swc`: every request of a generated log is
//! sent, in time order, as an `EVALSHA` with the request's whole-second Unix
//! time as the script's `now` (virtual time, as callers pass
//! `time.Now().Unix()`), and Redis's verdict must equal the one
//! `rlctl simulate --gateway redis-swc --decisions` writes, request by request. The same log replayed with rlctl's exact `sliding-counter`
//! disagrees on the requests where the doubles round down.

use std::collections::BTreeMap;

use rlctl::simulate::{AlgorithmKind, AlgorithmSpec, Rule, replay};

use crate::support::redis::{Redis, Reply};
use crate::support::{rlctl, success};

/// The script, written to the formula: keys per epoch-aligned window
/// `now // W`, `estimate = math.floor(prev * weight) + cur` in Lua numbers
/// (IEEE doubles), admit when `estimate < L`, then `INCR`.
pub const SCRIPT: &str = r#"
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local current = math.floor(now / window)
local cur_key = KEYS[1] .. ':' .. current
local prev_key = KEYS[1] .. ':' .. (current - 1)
local cur = tonumber(redis.call('GET', cur_key) or '0')
local prev = tonumber(redis.call('GET', prev_key) or '0')
local elapsed = now % window
local weight = 1 - (elapsed / window)
local estimate = math.floor(prev * weight) + cur
if estimate < limit then
  redis.call('INCR', cur_key)
  redis.call('EXPIRE', cur_key, window * 2)
  return 1
end
return 0
"#;

/// The log format of the generated log.
pub const LOG_FORMAT: &str = r#"$msec $remote_addr "$request" $status"#;

/// A generated log of `lines` lines, written to `path`.
fn generate_log(path: &std::path::Path, lines: usize) {
    success(
        rlctl()
            .args(["generate", "--seed", "15", "--lines", &lines.to_string()])
            .args(["--format", LOG_FORMAT])
            .arg("--output")
            .arg(path),
    );
}

/// `rlctl simulate --gateway redis-swc --decisions`: (time in ms, client,
/// allowed) per request, in replay (time) order.
fn cli_decisions(log: &std::path::Path, limit: &str) -> Vec<(i64, String, bool)> {
    let csv_path = log.with_extension("csv");
    success(
        rlctl()
            .args([
                "simulate",
                "-q",
                "--format",
                "json",
                "--gateway",
                "redis-swc",
            ])
            .args(["--algo", "sliding-counter", "--limit", limit])
            .args(["--log-format", LOG_FORMAT])
            .arg("--decisions")
            .arg(&csv_path)
            .arg(log),
    );
    let text = std::fs::read_to_string(&csv_path).unwrap();
    let mut rows = text.lines();
    assert_eq!(
        rows.next(),
        Some("timestamp_ms,time,client,endpoint,algorithm,allowed")
    );
    rows.map(|row| {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells[4], "redis-swc", "{row}");
        (
            cells[0].parse().unwrap(),
            cells[2].to_string(),
            cells[5] == "true",
        )
    })
    .collect()
}

/// Decisions of rlctl's exact `sliding-counter` per request (one key per client).
fn exact(requests: &[(i64, String, bool)], spec: &AlgorithmSpec) -> Vec<bool> {
    let mut ids = BTreeMap::new();
    let keys: Vec<u32> = requests
        .iter()
        .map(|(_, c, _)| {
            let next = ids.len() as u32;
            *ids.entry(c.clone()).or_insert(next)
        })
        .collect();
    let ts: Vec<i64> = requests.iter().map(|r| r.0).collect();
    let rules = [Rule {
        limiter: spec.limiter().unwrap(),
        keys: &keys,
        key_count: ids.len(),
    }];
    replay(&ts, &rules).unwrap().allowed
}

#[test]
fn redis_swc_model_reproduces_a_real_redis_script() {
    let Some(redis) = Redis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("generated.log");
    generate_log(&log, 60_000);
    let (limit, window_s) = (20u64, 60i64);
    let requests = cli_decisions(&log, &format!("{limit}/{window_s}s"));
    assert_eq!(requests.len(), 60_000);
    let sha = match &redis.pipeline(&[vec!["SCRIPT".into(), "LOAD".into(), SCRIPT.into()]])[0] {
        Reply::Text(sha) => sha.clone(),
        other => panic!("SCRIPT LOAD answered {other:?}"),
    };
    let commands: Vec<Vec<String>> = requests
        .iter()
        .map(|(t, client, _)| {
            vec![
                "EVALSHA".into(),
                sha.clone(),
                "1".into(),
                format!("swc:{client}"),
                t.div_euclid(1000).to_string(),
                window_s.to_string(),
                limit.to_string(),
            ]
        })
        .collect();
    let real: Vec<bool> = redis
        .pipeline(&commands)
        .into_iter()
        .map(|r| match r {
            Reply::Integer(1) => true,
            Reply::Integer(0) => false,
            other => panic!("the script answered {other:?}"),
        })
        .collect();
    let model: Vec<bool> = requests.iter().map(|r| r.2).collect();
    let agree = model.iter().zip(&real).filter(|(m, r)| m == r).count();
    let rejected = real.iter().filter(|&&a| !a).count();
    // rlctl's exact sliding-counter differs in time resolution (ms) and in
    // arithmetic (integers); on whole-second times only the arithmetic differs.
    let spec = AlgorithmSpec::new(
        AlgorithmKind::SlidingCounter,
        format!("{limit}/{window_s}s").parse().unwrap(),
    );
    let differ = |decisions: Vec<bool>| decisions.iter().zip(&real).filter(|(m, r)| m != r).count();
    let in_ms = differ(exact(&requests, &spec));
    let seconds: Vec<(i64, String, bool)> = requests
        .iter()
        .map(|(t, c, a)| (t.div_euclid(1000) * 1000, c.clone(), *a))
        .collect();
    let doubles = differ(exact(&seconds, &spec));
    println!(
        "redis agreement: {agree} of {} decisions ({rejected} rejected by the script); the exact sliding-counter disagrees on {in_ms} (on {doubles} with whole-second times: the doubles alone)",
        real.len()
    );
    assert_eq!(
        agree,
        real.len(),
        "rlctl simulate --gateway redis-swc and Redis disagree"
    );
    assert!(rejected > 1000, "only {rejected} rejections");
    assert!(doubles > 0, "no request where the doubles round down");
}
