//! A real Redis running the widely deployed sliding window counter script as
//! ground truth for `--gateway redis-swc`: every request of a generated log is
//! sent, in time order, as an `EVALSHA` with the request's whole-second Unix
//! time as the script's `now` (virtual time, as callers pass
//! `time.Now().Unix()`), and Redis's verdict must equal the model's, request
//! by request. The same log replayed with rlctl's exact `sliding-counter`
//! disagrees on the requests where the doubles round down.

use std::collections::BTreeMap;

use rlctl::simulate::gateway::Gateway;
use rlctl::simulate::{AlgorithmKind, AlgorithmSpec, Rule, replay};

use crate::support::redis::{Redis, Reply};
use crate::support::rlctl;

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

/// A generated log: (time in ms, client) per line, sorted by time.
fn generated_log(lines: usize) -> (String, Vec<(i64, String)>) {
    let out = rlctl()
        .args(["generate", "--seed", "15", "--lines", &lines.to_string()])
        .args(["--format", LOG_FORMAT])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut requests: Vec<(i64, String)> = text
        .lines()
        .map(|line| {
            let mut words = line.split(' ');
            let (secs, ms) = words.next().unwrap().split_once('.').unwrap();
            let t = secs.parse::<i64>().unwrap() * 1000 + ms.parse::<i64>().unwrap();
            (t, words.next().unwrap().to_string())
        })
        .collect();
    requests.sort_by_key(|r| r.0);
    (text, requests)
}

/// Decisions of `limiter` per request (one key per client).
fn modelled(
    requests: &[(i64, String)],
    spec: &AlgorithmSpec,
    gateway: Option<Gateway>,
) -> Vec<bool> {
    let mut ids = BTreeMap::new();
    let keys: Vec<u32> = requests
        .iter()
        .map(|(_, c)| {
            let next = ids.len() as u32;
            *ids.entry(c.clone()).or_insert(next)
        })
        .collect();
    let ts: Vec<i64> = requests.iter().map(|r| r.0).collect();
    let limiter = match gateway {
        Some(g) => g.limiter(spec).unwrap(),
        None => spec.limiter().unwrap(),
    };
    let rules = [Rule {
        limiter,
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
    let (_, requests) = generated_log(60_000);
    let (limit, window_s) = (20u64, 60i64);
    let sha = match &redis.pipeline(&[vec!["SCRIPT".into(), "LOAD".into(), SCRIPT.into()]])[0] {
        Reply::Text(sha) => sha.clone(),
        other => panic!("SCRIPT LOAD answered {other:?}"),
    };
    let commands: Vec<Vec<String>> = requests
        .iter()
        .map(|(t, client)| {
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
    let spec = AlgorithmSpec::new(
        AlgorithmKind::SlidingCounter,
        format!("{limit}/{window_s}s").parse().unwrap(),
    );
    let model = modelled(&requests, &spec, Some(Gateway::RedisSwc));
    let agree = model.iter().zip(&real).filter(|(m, r)| m == r).count();
    let rejected = real.iter().filter(|&&a| !a).count();
    // rlctl's exact sliding-counter differs in time resolution (ms) and in
    // arithmetic (integers); on whole-second times only the arithmetic differs.
    let differ = |decisions: Vec<bool>| decisions.iter().zip(&real).filter(|(m, r)| m != r).count();
    let exact = differ(modelled(&requests, &spec, None));
    let seconds: Vec<(i64, String)> = requests
        .iter()
        .map(|(t, c)| (t.div_euclid(1000) * 1000, c.clone()))
        .collect();
    let doubles = differ(modelled(&seconds, &spec, None));
    println!(
        "redis agreement: {agree} of {} decisions ({rejected} rejected by the script); the exact sliding-counter disagrees on {exact} (on {doubles} with whole-second times: the doubles alone)",
        real.len()
    );
    assert!(doubles > 0, "no request where the doubles round down");
    assert_eq!(agree, real.len(), "the redis-swc model and Redis disagree");
    assert!(rejected > 1000, "only {rejected} rejections");
}
