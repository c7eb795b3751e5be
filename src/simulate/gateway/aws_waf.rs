//! AWS WAF rate-based rules as `rlctl export --target aws-waf` configures them
//! (evaluation window: the one of 60, 120, 300, 600 s closest to W; limit: the
//! most the rule admits in that span, at least 10). A MODEL, not exact: AWS
//! documents the behaviour only approximately.
//!
//! AWS WAF developer guide, "Rate-based rule high-level settings" and
//! "Rate-based rule caveats": when AWS WAF checks the rate it counts the
//! requests of the evaluation window immediately preceding the current time;
//! it checks frequently, independently of the window, and detecting a rise or a
//! fall of the rate usually takes under 30 seconds; limiting is "near the
//! limit", not exact. The model: a check every 10 s (at epoch-aligned 10 s
//! ticks), counting every request of the key in the window ending at the check,
//! blocked ones included; a request is blocked when the last check counted more
//! than the limit. So a burst passes until the next check (detection lag), and
//! a client stays blocked until a check sees its count fall back.

use std::collections::VecDeque;

use super::bounds::most_in_span;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// The evaluation windows AWS WAF accepts, in seconds.
const WINDOWS: [u64; 4] = [60, 120, 300, 600];
/// AWS WAF's smallest limit.
const MIN_LIMIT: u64 = 10;
/// The model's interval between two rate checks, in ms.
pub const CHECK_MS: i64 = 10_000;

/// One rate-based rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateBased {
    window_ms: i64,
    limit: u64,
}

/// The key's requests still inside some future check's window.
#[derive(Debug, Clone, Default)]
pub struct State {
    times: VecDeque<Millis>,
}

impl RateBased {
    /// The exported rule for `spec`.
    pub fn of(spec: &AlgorithmSpec) -> RateBased {
        let w = u64::from(spec.limit.window.secs());
        let window = WINDOWS
            .into_iter()
            .min_by_key(|&x| x.abs_diff(w))
            .unwrap_or(WINDOWS[2]);
        RateBased {
            window_ms: window as i64 * 1000,
            limit: most_in_span(spec, window).max(MIN_LIMIT),
        }
    }

    /// The `(EvaluationWindowSec, Limit)` pair.
    pub fn settings(&self) -> (i64, u64) {
        (self.window_ms / 1000, self.limit)
    }

    /// The last check at or before `t`, and the requests it counted.
    fn counted(&self, state: &State, t: Millis) -> u64 {
        let check = t.div_euclid(CHECK_MS) * CHECK_MS;
        let from = state
            .times
            .partition_point(|&x| x <= check - self.window_ms);
        let to = state.times.partition_point(|&x| x <= check);
        (to - from) as u64
    }

    fn count(&self, state: &mut State, t: Millis) {
        let check = t.div_euclid(CHECK_MS) * CHECK_MS;
        while state
            .times
            .front()
            .is_some_and(|&x| x <= check - self.window_ms)
        {
            state.times.pop_front();
        }
        state.times.push_back(t);
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "rate-based rule Limit {} per EvaluationWindowSec {} (model: checked every {} s, blocked requests counted)",
            self.limit,
            self.window_ms / 1000,
            CHECK_MS / 1000
        )
    }
}

impl Algorithm for RateBased {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        self.counted(state, t) <= self.limit
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        self.count(state, t);
        0
    }

    fn rejected(&self, state: &mut State, t: Millis) {
        self.count(state, t);
    }

    /// Once every stored request is outside the window of the last check at
    /// `t`, no later check counts it and the next count drops it.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        let check = t.div_euclid(CHECK_MS) * CHECK_MS;
        state
            .times
            .back()
            .is_none_or(|&last| last <= check - self.window_ms)
    }

    /// The limit: what the rule means to admit at once. Until its next check
    /// the model admits any number (the detection lag), which the burst
    /// convention states.
    fn instant_capacity(&self) -> u64 {
        self.limit
    }

    fn burst_convention(&self) -> String {
        format!(
            "AWS WAF model: blocks once a check (every {} s) counts more than {} in the last {} s; until then any number passes",
            CHECK_MS / 1000,
            self.limit,
            self.window_ms / 1000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::{ExportOptions, Exporter, aws_waf::AwsWaf};
    use crate::policy::Policy;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{decisions, expect};

    #[test]
    fn settings_match_the_exported_json() {
        let rules = Policy::parse("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7", "p").unwrap();
        let out = AwsWaf.render(&rules, &ExportOptions::default()).unwrap();
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let statement = &json["Rules"][0]["Statement"]["RateBasedStatement"];
        let (window, limit) = RateBased::of(&rules[0].spec).settings();
        assert_eq!(statement["EvaluationWindowSec"], window, "{out}");
        assert_eq!(statement["Limit"], limit);
        assert_eq!((window, limit), (60, 46));
    }

    #[test]
    fn detection_lags_until_the_next_check() {
        // Window 60 s, limit 10. Fifteen requests at 1..15 s all pass (the check
        // at 10 s counts 10 ≤ 10); the check at 20 s counts 15: blocked from then
        // until a check counts 10 or fewer in its last 60 s.
        let alg = RateBased {
            window_ms: 60_000,
            limit: 10,
        };
        let mut times: Vec<Millis> = (1..=15).map(|s| s * 1000).collect();
        times.extend([20_000, 65_000, 70_000, 80_000]);
        // t=20 000: 15 counted > 10 (+ this one counted for later): blocked.
        // t=65 000: check at 60 000 counts (0, 60 000]: 16 > 10: blocked.
        // t=70 000: check at 70 000 counts (10 000, 70 000]: 11..15 s, 20 s, 65 s
        //           = 7 ≤ 10: passes.
        // t=80 000: passes.
        assert_eq!(decisions(&alg, &times), expect("yyyyyyyyyyyyyyy n n y y"));
    }

    #[test]
    fn blocked_requests_keep_counting() {
        // Limit 10 in 60 s: a client retrying every second while blocked keeps
        // its count above the limit, so it stays blocked.
        let alg = RateBased::of(&AlgorithmSpec::new(
            AlgorithmKind::SlidingLog,
            "10/1m".parse().unwrap(),
        ));
        assert_eq!(alg.settings(), (60, 10));
        let times: Vec<Millis> = (0..200).map(|s| s * 1000).collect();
        let got = decisions(&alg, &times);
        // Seconds 0..9 pass on the check at 0 s (nothing counted); second 10
        // passes too (the check at 10 s counts 0..9 = 10, not above 10); from 11 s
        // the check at 10 s counts 11, and every later check 60 or so: 11 in all.
        assert_eq!(got.iter().filter(|&&a| a).count(), 11);
        assert!(got[11..].iter().all(|&a| !a));
    }
}
