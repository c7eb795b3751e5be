//! Property tests for the invariants the algorithms promise, on random limits and
//! random time-sorted traffic: GCRA equals the token bucket, the sliding log never
//! exceeds L in a window, the token bucket never exceeds B + r·t, the fixed window
//! never exceeds 2L in a window, and both replay paths agree.

use proptest::prelude::*;

use super::gcra::Gcra;
use super::replay::replay_in_time_order;
use super::test_util::decisions;
use super::token_bucket::TokenBucket;
use super::{AlgorithmKind, AlgorithmSpec, Limiter, NOT_APPLICABLE, Rule, replay};
use crate::units::{Limit, Millis, Window};

fn limit(requests: u64, secs: u32) -> Limit {
    Limit {
        requests,
        window: Window::from_secs(secs).unwrap(),
    }
}

/// Sorted times from a start and gaps: mostly short gaps, some long ones.
fn times(start: Millis, gaps: &[u32]) -> Vec<Millis> {
    let mut t = start;
    gaps.iter()
        .map(|&g| {
            t += i64::from(if g % 17 == 0 { g * 40 } else { g % 400 });
            t
        })
        .collect()
}

fn admitted(alg_decisions: &[bool], ts: &[Millis]) -> Vec<Millis> {
    ts.iter()
        .zip(alg_decisions)
        .filter(|&(_, &ok)| ok)
        .map(|(&t, _)| t)
        .collect()
}

/// The most admitted times in any half-open span (t − w, t].
fn most_in_window(admitted: &[Millis], w: i64) -> usize {
    let mut first = 0;
    let mut most = 0;
    for (last, &t) in admitted.iter().enumerate() {
        while admitted[first] <= t - w {
            first += 1;
        }
        most = most.max(last - first + 1);
    }
    most
}

fn start_time() -> impl Strategy<Value = Millis> {
    prop_oneof![Just(0), Just(1_700_000_000_123), -5_000_000i64..5_000_000]
}

proptest! {
    #[test]
    fn gcra_decides_exactly_like_the_token_bucket(
        requests in 1u64..40,
        secs in prop_oneof![Just(1u32), Just(60), 1u32..120],
        burst in 1u64..50,
        start in start_time(),
        gaps in prop::collection::vec(0u32..5000, 1..300),
    ) {
        let lim = limit(requests, secs);
        let ts = times(start, &gaps);
        let tb = decisions(&TokenBucket::new(lim, burst).unwrap(), &ts);
        let gcra = decisions(&Gcra::new(lim, burst).unwrap(), &ts);
        prop_assert_eq!(tb, gcra);
    }

    #[test]
    fn sliding_log_never_admits_more_than_l_in_a_window(
        requests in 1u64..20,
        secs in 1u32..10,
        start in start_time(),
        gaps in prop::collection::vec(0u32..3000, 1..300),
    ) {
        let lim = limit(requests, secs);
        let ts = times(start, &gaps);
        let alg = super::sliding_log::SlidingLog::new(lim);
        let ok = admitted(&decisions(&alg, &ts), &ts);
        prop_assert!(most_in_window(&ok, lim.window.millis()) as u64 <= requests);
    }

    #[test]
    fn fixed_window_admits_at_most_2l_in_a_window(
        requests in 1u64..20,
        secs in 1u32..10,
        start in start_time(),
        gaps in prop::collection::vec(0u32..3000, 1..300),
    ) {
        let lim = limit(requests, secs);
        let ts = times(start, &gaps);
        let alg = super::fixed_window::FixedWindow::new(lim);
        let ok = admitted(&decisions(&alg, &ts), &ts);
        prop_assert!(most_in_window(&ok, lim.window.millis()) as u64 <= 2 * requests);
    }

    #[test]
    fn token_bucket_admits_at_most_b_plus_rate_times_span(
        requests in 1u64..30,
        secs in 1u32..100,
        burst in 1u64..30,
        start in start_time(),
        gaps in prop::collection::vec(0u32..3000, 1..200),
    ) {
        let lim = limit(requests, secs);
        let ts = times(start, &gaps);
        let ok = admitted(&decisions(&TokenBucket::new(lim, burst).unwrap(), &ts), &ts);
        let w = i128::from(lim.window.millis());
        // In any closed span [ok[i], ok[j]] of length d: count ≤ B + L·d/W, i.e.
        // count·W ≤ B·W + L·d, exactly in integers.
        for i in 0..ok.len() {
            for j in i..ok.len() {
                let count = (j - i + 1) as i128;
                let span = i128::from(ok[j] - ok[i]);
                prop_assert!(
                    count * w <= i128::from(burst) * w + i128::from(requests) * span,
                    "{} admitted in {} ms", count, span
                );
            }
        }
    }

    #[test]
    fn grouped_and_time_ordered_replays_agree(
        kinds in prop::collection::vec(0usize..6, 1..4),
        requests in 1u64..8,
        secs in 1u32..5,
        events in prop::collection::vec((0u32..600, 0u32..5, 0u32..4), 1..400),
    ) {
        let ts = times(1_000_000, &events.iter().map(|e| e.0).collect::<Vec<_>>());
        // Every rule keys by client; rule r skips clients whose id is below r, so
        // rules overlap without always applying together.
        let clients: Vec<u32> = events.iter().map(|e| e.1).collect();
        let columns: Vec<Vec<u32>> = (0..kinds.len())
            .map(|r| clients.iter().map(|&c| if (c as usize) < r { NOT_APPLICABLE } else { c }).collect())
            .collect();
        let rules: Vec<Rule> = kinds.iter().zip(&columns).map(|(&k, keys)| Rule {
            limiter: any_limiter(AlgorithmKind::ALL[k], limit(requests, secs)),
            keys,
            key_count: 5,
        }).collect();
        let fast = replay(&ts, &rules).unwrap();
        let slow = replay_in_time_order(&ts, &rules).unwrap();
        prop_assert_eq!(&fast, &slow);
        prop_assert_eq!(fast.rule_allowed.len(), rules.len());
        // Overall admitted only where every rule admitted.
        for (i, &ok) in fast.allowed.iter().enumerate() {
            prop_assert_eq!(ok, fast.rule_allowed.iter().all(|col| col[i]));
        }
    }
}

proptest! {
    /// Rules of one algorithm (with their own limits) take the grouped path's
    /// loop for one algorithm; it decides as the time-ordered replay does.
    #[test]
    fn rules_of_one_algorithm_replay_as_in_time_order(
        kind in 0usize..6,
        limits in prop::collection::vec((1u64..8, 1u32..5), 2..6),
        events in prop::collection::vec((0u32..600, 0u32..5, 0u32..64), 1..400),
    ) {
        let ts = times(1_000_000, &events.iter().map(|e| e.0).collect::<Vec<_>>());
        // Every rule keys by client; rule r applies where bit r of the event's
        // draw is set, so any set of rules may apply together.
        let columns: Vec<Vec<u32>> = (0..limits.len())
            .map(|r| events.iter().map(|e| if e.2 >> r & 1 == 1 { e.1 } else { NOT_APPLICABLE }).collect())
            .collect();
        let rules: Vec<Rule> = limits.iter().zip(&columns).map(|(&(requests, secs), keys)| Rule {
            limiter: any_limiter(AlgorithmKind::ALL[kind], limit(requests, secs)),
            keys,
            key_count: 5,
        }).collect();
        prop_assert_eq!(replay(&ts, &rules).unwrap(), replay_in_time_order(&ts, &rules).unwrap());
    }
}

fn any_limiter(kind: AlgorithmKind, limit: Limit) -> Limiter {
    let mut spec = AlgorithmSpec::new(kind, limit);
    if kind.has_burst() {
        spec.burst = Some(limit.requests);
    }
    spec.limiter().unwrap()
}
