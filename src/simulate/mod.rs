//! Replaying traffic through rate-limiting algorithms, deciding exactly as real
//! limiters do.
//!
//! Six algorithms, one small state machine each, behind the [`Algorithm`] trait:
//! [`fixed_window`], [`sliding_log`], [`sliding_counter`], [`token_bucket`],
//! [`gcra`] and [`leaky_bucket`] (nginx `limit_req`, bit for bit). An
//! [`AlgorithmSpec`] (kind, limit L per window W, burst B, nginx delay) is validated
//! into a [`Limiter`]; [`replay`](replay::replay) feeds time-sorted events through
//! one or several rules so every algorithm sees the same clock and the same events;
//! [`deploy`] spreads traffic over several limiter instances or compresses time;
//! [`summary`] turns decisions into the figures `rlctl simulate` prints.
//!
//! Shared semantics:
//! - every client key has its own state, which starts empty at its first request;
//! - time is integer milliseconds since the epoch ([`Millis`]);
//! - only admitted requests change state; with several rules a request is admitted
//!   only when every rule that applies admits it (nginx with several `limit_req`),
//!   so a request one rule rejects leaves every other rule's state untouched;
//! - arithmetic is exact (integers, or rationals scaled to integers): no floating
//!   point ever takes part in a decision.
//!
//! The [`gateway`] models are the one exception to the last two points: they
//! replay a gateway product as it is built, so a model whose gateway counts
//! rejected requests changes state through [`Algorithm::rejected`], and a model
//! whose gateway computes in doubles does so too (bit for bit where stated).
//!
//! This module knows nothing about log formats, terminals or files.

mod bank;
pub mod deploy;
pub mod fixed_window;
pub mod gateway;
pub mod gcra;
pub mod leaky_bucket;
pub mod replay;
pub mod sliding_counter;
pub mod sliding_log;
pub mod spec;
pub mod summary;
pub mod token_bucket;

#[cfg(test)]
mod properties;
#[cfg(test)]
mod reconcile_properties;

use crate::units::Millis;

pub use deploy::{Balance, Deployment};
pub use replay::{
    Decisions, NOT_APPLICABLE, PreparedKeys, Replay, ReplayError, Replayer, Rule, RuleVerdicts,
    replay, rules_in,
};
pub use spec::{AlgorithmKind, AlgorithmSpec, Delay, Limiter, SpecError};
pub use summary::{
    ByClient, Census, Summary, Totals, Traffic, summarize, summarize_admitted, totals,
};

/// One rate-limiting algorithm: an immutable configuration whose per-key state
/// lives in [`Algorithm::State`].
///
/// Deciding is two-phase so several rules can be combined: [`Algorithm::allows`]
/// asks every rule, and only when all of them allow the request does
/// [`Algorithm::record`] admit it into each rule's state.
pub trait Algorithm: Send + Sync {
    /// The state of one key; `Default` is the empty state a key starts with.
    type State: Default + Clone + Send;

    /// Whether a request at `t` would be admitted. It may tidy the state (drop
    /// expired entries, roll windows, refill) but never changes what any later
    /// call decides. Times for one state must not decrease.
    fn allows(&self, state: &mut Self::State, t: Millis) -> bool;

    /// Admits the request at `t`. Called only right after [`Algorithm::allows`]
    /// returned true for the same state and `t`. Returns how many milliseconds the
    /// limiter would hold the request before serving it (0 for algorithms that
    /// never delay).
    fn record(&self, state: &mut Self::State, t: Millis) -> u64;

    /// Called instead of [`Algorithm::record`] when the request at `t` is
    /// rejected (by this rule or by another rule that applies to it), right after
    /// [`Algorithm::allows`] for the same state and `t`. The six algorithms leave
    /// the state alone (the default); gateway models whose product counts
    /// rejected requests, or touches the state of a rejected request, do so here.
    fn rejected(&self, _state: &mut Self::State, _t: Millis) {}

    /// How many requests it admits at once from the empty state.
    fn instant_capacity(&self) -> u64;

    /// One line stating which burst convention this limiter follows.
    fn burst_convention(&self) -> String;

    /// Whether `state` would decide every request at `t` or later (and report
    /// every delay) exactly as the empty state would, so that a long-running
    /// replay may drop it. `false`, the default, always keeps the state.
    fn is_idle(&self, _state: &Self::State, _t: Millis) -> bool {
        false
    }

    /// Decides one request on its own: `allows`, then `record` when allowed.
    fn decide(&self, state: &mut Self::State, t: Millis) -> bool {
        let allowed = self.allows(state, t);
        if allowed {
            self.record(state, t);
        } else {
            self.rejected(state, t);
        }
        allowed
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers for the hand-worked tests beside each algorithm.

    use super::Algorithm;
    use crate::units::Millis;

    /// The decision for each request of one key, from the empty state.
    pub fn decisions<A: Algorithm>(alg: &A, times: &[Millis]) -> Vec<bool> {
        let mut state = A::State::default();
        times.iter().map(|&t| alg.decide(&mut state, t)).collect()
    }

    /// Replays one key's `times` twice, once keeping its state and once
    /// dropping it before each request whenever [`Algorithm::is_idle`] says
    /// so, and asserts that decisions and delays are the same. Returns how
    /// many times the state was dropped.
    pub fn check_idle_drops<A: Algorithm>(alg: &A, times: &[Millis]) -> usize {
        check_idle_drops_vetoed(alg, times, &[])
    }

    /// [`check_idle_drops`] where request `i` is also rejected by another rule
    /// when `vetoed[i]` (missing entries: not vetoed), so that it goes through
    /// [`Algorithm::rejected`] even when this one admits it.
    pub fn check_idle_drops_vetoed<A: Algorithm>(
        alg: &A,
        times: &[Millis],
        vetoed: &[bool],
    ) -> usize {
        let (mut kept, mut dropped) = (A::State::default(), A::State::default());
        let mut drops = 0;
        for (i, &t) in times.iter().enumerate() {
            if alg.is_idle(&dropped, t) {
                dropped = A::State::default();
                drops += 1;
            }
            let veto = vetoed.get(i).copied().unwrap_or(false);
            let run = |state: &mut A::State| {
                let allowed = alg.allows(state, t);
                if allowed && !veto {
                    (allowed, alg.record(state, t))
                } else {
                    alg.rejected(state, t);
                    (allowed, 0)
                }
            };
            assert_eq!(run(&mut kept), run(&mut dropped), "at t={t} in {times:?}");
        }
        drops
    }

    /// Increasing times from gaps (several requests may share a time).
    pub fn times_from_gaps(start: Millis, gaps: &[Millis]) -> Vec<Millis> {
        gaps.iter()
            .scan(start, |t, &gap| {
                *t += gap;
                Some(*t)
            })
            .collect()
    }

    /// One key's request times for the idle-state property tests: up to 150
    /// requests whose gaps sit on and around the 1 s window edges, with long
    /// quiet spells, from a start on either side of the epoch.
    pub fn idle_test_times() -> impl proptest::strategy::Strategy<Value = Vec<Millis>> {
        use proptest::strategy::Strategy;
        (
            -5000i64..5000,
            proptest::collection::vec(
                proptest::sample::select(vec![0i64, 1, 7, 250, 499, 999, 1000, 1001, 2500, 60_000]),
                1..150,
            ),
        )
            .prop_map(|(start, gaps)| times_from_gaps(start, &gaps))
    }

    /// Parses a compact expectation such as `"yyn"` (y = admitted, n = rejected).
    pub fn expect(pattern: &str) -> Vec<bool> {
        pattern
            .chars()
            .filter(|c| !c.is_whitespace())
            .map(|c| match c {
                'y' => true,
                'n' => false,
                other => panic!("unexpected {other:?} in expectation"),
            })
            .collect()
    }
}
