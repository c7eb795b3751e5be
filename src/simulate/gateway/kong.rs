//! Kong's rate-limiting plugin as `rlctl export --target kong` configures it:
//! for each Kong period (second, minute, hour, day) within a factor 60 of W, a
//! limit equal to the most the rule admits in one aligned period.
//!
//! Kong (`kong/plugins/rate-limiting/handler.lua`, `policies/init.lua`,
//! `kong/tools/timestamp.lua`): the time is `ngx.time()`, whole seconds; each
//! period's counter is keyed by the start of its UTC calendar period
//! (`get_timestamps`: second, minute, hour, day, month, year; with no time zone
//! offset these are epoch-aligned for second to day); `get_usage` reads every
//! period's count and stops the request with 429 when `limit − usage ≤ 0`.
//! Then:
//! - `policy: local` (as exported) or `cluster`: only a request that passed is
//!   counted, by an `increment` after the check;
//! - `policy: redis` with `sync_rate = -1` (the default): `usage` itself runs
//!   `INCR` (the count before it is the usage), for every period, so rejected
//!   requests count too.
//!
//! Several rules merged into one plugin ([`Windows::merged`]), and which
//! plugin runs on which request, are [`crate::export::kong_plan`]'s (replayed
//! by `crate::scenario::kong`). Not reproduced: the increment of
//! `local`/`cluster` runs in a timer right after the request, so simultaneous
//! requests may all see the old count.

use super::bounds::most_in_aligned_window;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// Kong's periods used by the exporter: config field and length in seconds.
const PERIODS: [(&str, i64); 4] = [
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
];

/// How the plugin counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// `local` (and `cluster`): only requests that passed.
    Local,
    /// `redis` with `sync_rate = -1`: every request, rejected ones too.
    Redis,
}

/// One plugin: per period, its index into the periods and its limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Windows {
    limits: Vec<(usize, u64)>,
    policy: Policy,
}

/// Per period (in the order of [`Windows`], at most one per Kong period):
/// the period's start and its count. A fixed array, so that a decision
/// allocates nothing.
#[derive(Debug, Clone, Default)]
pub struct State {
    counts: [(i64, u64); PERIODS.len()],
}

impl Windows {
    /// The exporter's periods and limits for `spec`.
    pub fn of(spec: &AlgorithmSpec, policy: Policy) -> Windows {
        let w = i64::from(spec.limit.window.secs());
        let limits = PERIODS
            .iter()
            .enumerate()
            // The day also for a window beyond 60 days, as the exporter.
            .filter(|(_, (_, p))| {
                (p.saturating_mul(60) >= w || *p == 86_400) && *p <= w.saturating_mul(60)
            })
            .map(|(i, (_, p))| (i, most_in_aligned_window(spec, *p as u64)))
            .collect();
        Windows { limits, policy }
    }

    /// One plugin with the smallest limits of `all` (one policy), as the
    /// exporter merges several rules into one plugin
    /// ([`crate::export::kong::merge`]).
    pub fn merged(all: &[&Windows]) -> Windows {
        let each: Vec<crate::export::kong::Limits> = (all.iter())
            .map(|w| w.limits.iter().copied().collect())
            .collect();
        Windows {
            limits: crate::export::kong::merge(&each).into_iter().collect(),
            policy: all.first().map_or(Policy::Local, |w| w.policy),
        }
    }

    /// The configured `period: limit` pairs, shortest period first.
    pub fn limits(&self) -> Vec<(&'static str, u64)> {
        self.limits
            .iter()
            .map(|&(i, n)| (PERIODS[i].0, n))
            .collect()
    }

    /// Each period's start and usage at `t` (before this request), in the
    /// first `self.limits.len()` places.
    fn usage(&self, state: &State, t: Millis) -> [(i64, u64); PERIODS.len()] {
        let now = t.div_euclid(1000);
        let mut usage = [(0, 0); PERIODS.len()];
        for ((slot, &(i, _)), &(s, c)) in usage.iter_mut().zip(&self.limits).zip(&state.counts) {
            let p = PERIODS[i].1;
            let start = now.div_euclid(p) * p;
            *slot = (start, if s == start { c } else { 0 });
        }
        usage
    }

    fn increment(&self, state: &mut State, t: Millis) {
        state.counts = self.usage(state, t);
        for (_, c) in &mut state.counts[..self.limits.len()] {
            *c = c.saturating_add(1);
        }
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let limits: Vec<String> = self
            .limits()
            .iter()
            .map(|(p, n)| format!("{p}: {n}"))
            .collect();
        let policy = match self.policy {
            Policy::Local => "policy local, rejected requests not counted",
            Policy::Redis => "policy redis, rejected requests counted",
        };
        format!(
            "rate-limiting {} (UTC-aligned; {policy})",
            limits.join(", ")
        )
    }
}

impl Algorithm for Windows {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        self.usage(state, t)
            .iter()
            .zip(&self.limits)
            .all(|(&(_, usage), &(_, limit))| usage < limit)
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        self.increment(state, t);
        0
    }

    fn rejected(&self, state: &mut State, t: Millis) {
        if self.policy == Policy::Redis {
            self.increment(state, t);
        }
    }

    /// Once every period's stored start is past (usage 0 everywhere), later
    /// periods only start later: the counters read as a new client's.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        self.usage(state, t).iter().all(|&(_, usage)| usage == 0)
    }

    fn instant_capacity(&self) -> u64 {
        self.limits.iter().map(|&(_, n)| n).min().unwrap_or(0)
    }

    fn burst_convention(&self) -> String {
        format!(
            "Kong fixed windows aligned to the UTC calendar, whole seconds: {}",
            self.describe()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, kong::Kong};
    use crate::policy::Policy as PolicyFile;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{decisions, expect};

    fn windows(limit: &str, policy: Policy) -> Windows {
        Windows::of(
            &AlgorithmSpec::new(AlgorithmKind::FixedWindow, limit.parse().unwrap()),
            policy,
        )
    }

    #[test]
    fn limits_match_the_exported_text() {
        let rules = PolicyFile::parse("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7", "p").unwrap();
        let out = Kong.render(&rules, &ExportOptions::default()).unwrap();
        let w = Windows::of(&rules[0].spec, Policy::Local);
        let block: String = w
            .limits()
            .iter()
            .map(|(p, n)| format!("    {p}: {n}\n"))
            .collect();
        assert!(out.contains(&block), "{block}\n{out}");
        assert!(out.contains("policy: local"));
        assert_eq!(w.limits().len(), 3); // second, minute, hour
    }

    #[test]
    fn windows_are_aligned_to_the_calendar_in_whole_seconds() {
        // 2/1m fixed window: minute limit 2, second limit 2 (L per aligned second
        // is at most L), hour limit 120. t = 59.999 s and 60.000 s are two minutes.
        let w = windows("2/1m", Policy::Local);
        assert_eq!(
            w.limits(),
            vec![("second", 2), ("minute", 2), ("hour", 120)]
        );
        let times = [58_000, 59_999, 59_999, 60_000, 60_999, 61_000];
        assert_eq!(decisions(&w, &times), expect("yy n yy n"));
    }

    #[test]
    fn redis_counts_rejections_local_does_not() {
        // second: 2, minute: 5. Second 0 sends 4 (2 rejected by the second limit).
        // local: minute count 2, so second 1 admits 2 more (minute 4), then the
        //        second limit rejects;
        // redis: the rejected ones were counted too (minute 4), so second 1 admits
        //        one (minute 5) and the minute limit rejects the rest.
        let times = [0, 1, 2, 3, 1000, 1001, 1002];
        let local = Windows {
            limits: vec![(0, 2), (1, 5)],
            policy: Policy::Local,
        };
        let redis = Windows {
            policy: Policy::Redis,
            ..local.clone()
        };
        assert_eq!(decisions(&local, &times), expect("yynn yyn"));
        assert_eq!(decisions(&redis, &times), expect("yynn ynn"));
    }
}
