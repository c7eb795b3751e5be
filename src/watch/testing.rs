//! Shared by the watch tests: a generated log, a policy, and what
//! `simulate::replay` decides over the same lines.

use std::io::Write;

use crate::ingest::key::KeySet;
use crate::ingest::{FormatChoice, IngestReport, KeptPaths, Settings, ingest};
use crate::policy::CheckedRule;
use crate::scenario::kong;
use crate::scenario::names::NameFilter;
use crate::simulate::gateway::{Gateway, NameReading};
use crate::simulate::{Limiter, NOT_APPLICABLE, Rule, replay};
use crate::units::Millis;

/// 10/Oct/2025:13:00:00 +0000, where [`line_at`]'s seconds count from.
pub const LOG_START: Millis = 1_760_101_200_000;

/// A combined line of `GET path` by `ip`, `secs` after [`LOG_START`]
/// (within the hour).
pub fn line_at(ip: &str, secs: i64, path: &str) -> String {
    let (m, s) = (secs / 60, secs % 60);
    format!(
        "{ip} - - [10/Oct/2025:13:{m:02}:{s:02} +0000] \"GET {path} HTTP/1.1\" 200 1 \"-\" \"ua\"\n"
    )
}

/// The ingestion settings of a watch test: `format` and `keys`, every path
/// kept, times of arrival.
pub fn ingest_settings(format: FormatChoice, keys: KeySet) -> Settings {
    Settings {
        inputs: Vec::new(),
        format,
        json_fields: Vec::new(),
        keys,
        routes: Vec::new(),
        strict: false,
        progress: None,
        paths: KeptPaths::All,
        time_of: crate::ingest::arrival::TimeOf::Arrival,
    }
}

/// The rules of `policy` and the keys a watch of them reads, with `ip` the
/// primary key.
pub fn policy_keyed_by_ip(policy: &str) -> (Vec<CheckedRule>, KeySet) {
    let rules = crate::policy::Policy::parse(policy, "p.toml").unwrap();
    let primary = KeySet::new(crate::ingest::key::KeySpec::parse("ip", None, None).unwrap());
    let keys = crate::watch::shadow::keys_for(&rules, primary);
    (rules, keys)
}

pub const POLICY: &str = r#"
[[rule]]
name = "global"
limit = "20/1m"
burst = 6
algorithm = "token-bucket"

[[rule]]
name = "search"
method = "GET"
route = "^/api/search$"
limit = "2r/s"
burst = 1
algorithm = "leaky-bucket"

[[rule]]
name = "per-user"
key = "user"
limit = "5/10s"
algorithm = "sliding-counter"

[[rule]]
name = "posts"
method = "POST"
limit = "1/30s"
algorithm = "fixed-window"
"#;

/// A deterministic generator (64-bit LCG), enough to spread requests.
pub struct Lcg(u64);

impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A combined log with busy and quiet clients, lines up to 2 s out of order,
/// users on some lines, and some lines that are not log lines at all.
pub fn generated_log(lines: usize, seed: u64) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let mut out = Vec::new();
    let start = 1_700_000_000i64;
    let mut clock = start * 1000;
    for i in 0..lines {
        clock += rng.below(400) as i64;
        let ts = (clock - rng.below(2000) as i64).max(start * 1000) / 1000;
        let client = if rng.below(3) == 0 {
            rng.below(3)
        } else {
            rng.below(40)
        };
        let user = match rng.below(4) {
            0 => "-".to_string(),
            n => format!("u{}", (client + n) % 7),
        };
        let (method, path) = match rng.below(6) {
            0 | 1 => ("GET", "/api/search?q=x".to_string()),
            2 => ("POST", format!("/api/items/{}", rng.below(9))),
            3 => ("GET", "/static/app.js".to_string()),
            _ => ("GET", format!("/api/users/{}", rng.below(50))),
        };
        let secs = ts.rem_euclid(60);
        let mins = (ts / 60).rem_euclid(60);
        let hours = (ts / 3600).rem_euclid(24);
        if i % 97 == 13 {
            out.extend_from_slice(b"\x00\x9f\xffgarbage \x01\x02\n");
            continue;
        }
        if i % 131 == 7 {
            out.extend_from_slice(b"\n");
            continue;
        }
        // 1_700_000_000 is 2023-11-14 22:13:20 UTC; the day stays the 14th or 15th.
        let day = 14 + (ts - 1_699_920_000) / 86_400;
        writeln!(
            out,
            "10.0.0.{client} - {user} [{day:02}/Nov/2023:{hours:02}:{mins:02}:{secs:02} +0000] \"{method} {path} HTTP/1.1\" 200 12 \"-\" \"gen\""
        )
        .unwrap();
    }
    out
}

/// Per rule (requests, would-reject) and the decision per request, in time
/// order, as `simulate::replay` gives them over the ingested table.
pub fn simulated(
    path: &std::path::Path,
    rules: &[CheckedRule],
    keys: &KeySet,
) -> (Vec<(u64, u64)>, Vec<bool>, IngestReport) {
    simulated_as(path, rules, keys, None)
}

/// [`simulated`] with each rule replayed as `gateway`'s model when given,
/// its key, method and path read as the gateway reads them (`keys` from
/// [`crate::watch::shadow::keys_for_policy`] with that gateway).
pub fn simulated_as(
    path: &std::path::Path,
    rules: &[CheckedRule],
    keys: &KeySet,
    gateway: Option<Gateway>,
) -> (Vec<(u64, u64)>, Vec<bool>, IngestReport) {
    let settings = Settings {
        inputs: vec![path.to_path_buf()],
        ..ingest_settings(FormatChoice::Auto, keys.clone())
    };
    let ingested = ingest(&settings).unwrap();
    let table = ingested.table;
    // Kong runs one plugin per request: its plugins stand for the rules.
    let runs = kong::policy_runs(rules, gateway);
    let names = gateway.map_or_else(NameReading::default, |g| g.name_reading());
    let filter = |(method, route): (Option<&str>, Option<&regex::Regex>)| {
        NameFilter::new(&table.methods, &table.paths, (method, route), names)
    };
    let columns: Vec<(Vec<u32>, usize)> = runs
        .iter()
        .map(|run| {
            let rule = &rules[run.merged[0]];
            let read = gateway.and_then(|g| {
                let ingested = keys.by_text(&rule.key.text).unwrap_or(&rule.key);
                ingested.read_as(g.key_reading())
            });
            let text = read.map_or(rule.key.text.clone(), |k| k.text);
            let (ids, count) = if text == keys.primary.text {
                (&table.client, table.clients.len())
            } else {
                let i = keys.extra.iter().position(|k| k.text == text).unwrap();
                (&table.extra_keys[i].ids, table.extra_keys[i].names.len())
            };
            let picked = &rules[run.picked_by()];
            let own = filter((picked.method.as_deref(), picked.route.as_ref()));
            let unless: Vec<NameFilter> = (run.unless.iter())
                .map(|(m, r)| filter((m.as_deref(), r.as_ref())))
                .collect();
            let column = (0..table.len())
                .map(|row| {
                    let (method, path) = (table.method[row], table.path_at(row));
                    let taken = unless.iter().any(|f| f.picks_names(method, path));
                    match own.picks(method, path, table.protocol[row]) && !taken {
                        true => ids[row],
                        false => NOT_APPLICABLE,
                    }
                })
                .collect();
            (column, count)
        })
        .collect();
    let replay_rules: Vec<Rule> = runs
        .iter()
        .zip(&columns)
        .map(|(run, (keys, key_count))| {
            let limiters: Vec<Limiter> = (run.merged.iter())
                .map(|&j| match gateway {
                    Some(g) => g.limiter(&rules[j].spec).unwrap(),
                    None => rules[j].spec.limiter().unwrap(),
                })
                .collect();
            Rule {
                limiter: match &limiters[..] {
                    [one] => one.clone(),
                    several => kong::merged_limiter(&several.iter().collect::<Vec<_>>()).unwrap(),
                },
                keys,
                key_count: *key_count,
            }
        })
        .collect();
    let replayed = replay(&table.ts, &replay_rules).unwrap();
    let counts = columns
        .iter()
        .zip(&replayed.rule_allowed)
        .map(|((keys, _), verdicts)| {
            let applies = || {
                keys.iter()
                    .zip(verdicts)
                    .filter(|(k, _)| **k != NOT_APPLICABLE)
            };
            (
                applies().count() as u64,
                applies().filter(|(_, v)| !**v).count() as u64,
            )
        })
        .collect();
    (counts, replayed.allowed, ingested.report)
}
