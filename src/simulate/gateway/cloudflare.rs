//! Cloudflare rate limiting rules. A MODEL, not exact: Cloudflare documents
//! the behaviour only approximately, and `rlctl export` writes no Cloudflare
//! configuration; the conversion follows the other targets' safe one.
//!
//! Cloudflare developer docs, "Rate limiting rules" (parameters: characteristics,
//! period, requests per period, duration or mitigation timeout) and the learning
//! path "Rate limiting" (request rates are calculated locally for each Cloudflare
//! data centre): once the rate reaches the limit, the rule applies its action for
//! the duration, whatever the rate meanwhile (the default action behaviour).
//! The model, for one data centre: period P = W, requests per period N = the
//! most the rule admits in any span of W, duration D = P; every matching request
//! is counted (blocked ones too); a request is blocked when a block is running,
//! or when it makes the count in the last P exceed N (which starts a block of D).

use std::collections::VecDeque;

use super::bounds::most_in_span;
use crate::simulate::Algorithm;
use crate::simulate::spec::AlgorithmSpec;
use crate::units::Millis;

/// One rate limiting rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimit {
    period_ms: i64,
    requests: u64,
    duration_ms: i64,
}

/// The key's requests in the last period and the end of a running block.
#[derive(Debug, Clone, Default)]
pub struct State {
    times: VecDeque<Millis>,
    blocked_until: Option<Millis>,
}

impl RateLimit {
    /// The model's rule for `spec`.
    pub fn of(spec: &AlgorithmSpec) -> RateLimit {
        let w = spec.limit.window;
        RateLimit {
            period_ms: w.millis(),
            requests: most_in_span(spec, u64::from(w.secs())),
            duration_ms: w.millis(),
        }
    }

    /// Requests counted in (t − P, t), before this one.
    fn in_period(&self, state: &State, t: Millis) -> u64 {
        let from = state.times.partition_point(|&x| x <= t - self.period_ms);
        (state.times.len() - from) as u64
    }

    /// Whether a block runs at `t`, and whether this request starts one.
    fn verdict(&self, state: &State, t: Millis) -> (bool, bool) {
        let blocked = state.blocked_until.is_some_and(|end| t < end);
        let starts = !blocked && self.in_period(state, t) + 1 > self.requests;
        (blocked, starts)
    }

    fn count(&self, state: &mut State, t: Millis) {
        let (_, starts) = self.verdict(state, t);
        if starts {
            state.blocked_until = Some(t + self.duration_ms);
        }
        while state
            .times
            .front()
            .is_some_and(|&x| x <= t - self.period_ms)
        {
            state.times.pop_front();
        }
        state.times.push_back(t);
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        format!(
            "{} requests per {} s period, mitigation timeout {} s (model: per data centre, blocked requests counted)",
            self.requests,
            self.period_ms / 1000,
            self.duration_ms / 1000
        )
    }
}

impl Algorithm for RateLimit {
    type State = State;

    fn allows(&self, state: &mut State, t: Millis) -> bool {
        let (blocked, starts) = self.verdict(state, t);
        !blocked && !starts
    }

    fn record(&self, state: &mut State, t: Millis) -> u64 {
        self.count(state, t);
        0
    }

    fn rejected(&self, state: &mut State, t: Millis) {
        self.count(state, t);
    }

    /// Once the block (if any) has ended and every stored request is out of
    /// the period, later requests see no block and an empty period.
    fn is_idle(&self, state: &State, t: Millis) -> bool {
        state.blocked_until.is_none_or(|end| end <= t)
            && state
                .times
                .back()
                .is_none_or(|&last| last <= t - self.period_ms)
    }

    fn instant_capacity(&self) -> u64 {
        self.requests
    }

    fn burst_convention(&self) -> String {
        format!(
            "Cloudflare model: {} per {} s, then blocked for {} s",
            self.requests,
            self.period_ms / 1000,
            self.duration_ms / 1000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::AlgorithmKind;
    use crate::simulate::test_util::{decisions, expect};

    #[test]
    fn exceeding_starts_a_mitigation_timeout() {
        // 3 per 10 s (sliding log: N = 3), timeout 10 s.
        //   0, 1000, 2000  admitted
        //   3000           4 in the period > 3: blocked until 13 000
        //   12 000         block running: blocked (counted)
        //   13 000         block over; (3000, 13000) holds 12 000: 1 + 1 = 2: admitted
        //   13 500         (3500, 13500) holds 12 000, 13 000: 3: admitted
        //   13 600         4 > 3: blocked until 23 600
        let alg = RateLimit::of(&AlgorithmSpec::new(
            AlgorithmKind::SlidingLog,
            "3/10s".parse().unwrap(),
        ));
        assert_eq!(alg.requests, 3);
        let times = [0, 1000, 2000, 3000, 12_000, 13_000, 13_500, 13_600];
        assert_eq!(decisions(&alg, &times), expect("yyy n n yy n"));
    }

    #[test]
    fn blocked_requests_are_counted() {
        // A client retrying every second while blocked: each retry is counted,
        // so when the block ends its period is still full and a new block starts.
        let alg = RateLimit {
            period_ms: 10_000,
            requests: 3,
            duration_ms: 5_000,
        };
        let times: Vec<Millis> = (0..30).map(|s| s * 1000).collect();
        let got = decisions(&alg, &times);
        assert_eq!(got.iter().filter(|&&a| a).count(), 3);
    }
}
