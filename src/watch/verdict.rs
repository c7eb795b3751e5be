//! The verdict of `--until-clients-hit SHARE --for DURATION`: the share of
//! clients hit (clients with a would-reject over clients seen, last hour, per
//! rule) is judged every minute of log time and when DURATION has passed;
//! passed once every judgement over DURATION found it at or below SHARE,
//! failed at the first that finds one rule's share above it.

use super::shadow::RuleFigures;
use crate::units::Millis;

/// The verdict is judged at the first request of each minute of log time.
const MINUTE_MS: Millis = 60_000;

/// Where the verdict stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Below the threshold, not yet for long enough.
    Waiting,
    /// Below the threshold for the whole duration: exit 0.
    Passed,
    /// A rule's share of clients hit (`hit` of `seen` in the last hour) is
    /// above the threshold: exit 1.
    Failed {
        rule: String,
        share: f64,
        hit: u64,
        seen: u64,
    },
}

/// The threshold and how long it must hold.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The largest share of clients hit allowed (0.01 for 1%).
    pub threshold: f64,
    /// How long, in log time, the share must stay at or below it.
    pub hold_ms: Millis,
    since: Option<Millis>,
}

impl Verdict {
    /// A verdict for `threshold` held for `hold_ms`.
    pub fn new(threshold: f64, hold_ms: Millis) -> Self {
        Verdict {
            threshold,
            hold_ms,
            since: None,
        }
    }

    /// Whether the figures are judged at log time `t`, last judged at
    /// `judged_at`: at the first request of each minute of log time (by the
    /// clock: 00:01:00, 00:02:00, ...), and as soon as `--for` has
    /// passed since the share was first at or below the threshold (a
    /// verdict held for 20 s, or for 61 s, passes then, not at the next
    /// minute).
    pub fn due(&self, t: Millis, judged_at: Option<Millis>) -> bool {
        let Some(at) = judged_at else { return true };
        let held_until = self.since.map(|s| s.saturating_add(self.hold_ms));
        let minute = |ms: Millis| ms.div_euclid(MINUTE_MS);
        minute(t) != minute(at) || held_until.is_some_and(|end| at < end && t >= end)
    }

    /// Judges the figures of the hour ending at log time `now`.
    pub fn judge(&mut self, now: Millis, rules: &[RuleFigures]) -> Judgement {
        for r in rules {
            let share = if r.hour.clients_seen == 0 {
                0.0
            } else {
                r.hour.clients_hit as f64 / r.hour.clients_seen as f64
            };
            if share > self.threshold {
                return Judgement::Failed {
                    rule: r.rule.clone(),
                    share,
                    hit: r.hour.clients_hit,
                    seen: r.hour.clients_seen,
                };
            }
        }
        let since = *self.since.get_or_insert(now);
        if now.saturating_sub(since) >= self.hold_ms {
            Judgement::Passed
        } else {
            Judgement::Waiting
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::rolling::HourFigures;

    fn figures(seen: u64, hit: u64) -> Vec<RuleFigures> {
        vec![RuleFigures {
            rule: "global".into(),
            key: "ip".into(),
            limit: "1/1s".into(),
            algorithm: "gcra".into(),
            requests: 0,
            would_reject: 0,
            unplaced: 0,
            states: 0,
            top: Vec::new(),
            hour: HourFigures {
                clients_seen: seen,
                clients_hit: hit,
                ..HourFigures::default()
            },
        }]
    }

    #[test]
    fn judged_every_minute_and_when_the_duration_has_held() {
        let mut v = Verdict::new(0.01, 61_000);
        assert!(v.due(5_000, None));
        assert_eq!(v.judge(5_000, &figures(10, 0)), Judgement::Waiting);
        // The first request of the next minute by the clock.
        assert!(!v.due(59_999, Some(5_000)));
        assert!(v.due(60_000, Some(5_000)));
        assert_eq!(v.judge(60_000, &figures(10, 0)), Judgement::Waiting);
        // 61 s after the first judgement, not at the next minute (120 s).
        assert!(!v.due(65_999, Some(60_000)));
        assert!(v.due(66_000, Some(60_000)));
        assert_eq!(v.judge(66_000, &figures(10, 0)), Judgement::Passed);
        // Held for 20 s: judged at 20 s, not only at the minute.
        let mut v = Verdict::new(0.01, 20_000);
        v.judge(0, &figures(0, 0));
        assert!(!v.due(19_999, Some(0)));
        assert!(v.due(20_000, Some(0)));
    }

    #[test]
    fn passes_after_holding_and_fails_above_the_threshold() {
        let mut v = Verdict::new(0.01, 10_000);
        assert_eq!(v.judge(1000, &figures(0, 0)), Judgement::Waiting);
        assert_eq!(v.judge(5000, &figures(200, 2)), Judgement::Waiting); // exactly 1%
        assert_eq!(v.judge(11_000, &figures(200, 2)), Judgement::Passed);
        let mut v = Verdict::new(0.01, 10_000);
        assert_eq!(
            v.judge(1000, &figures(100, 2)),
            Judgement::Failed {
                rule: "global".into(),
                share: 0.02,
                hit: 2,
                seen: 100,
            }
        );
    }
}
