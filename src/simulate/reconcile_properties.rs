//! Property tests across all six algorithms on random multi-client traffic:
//! every request is either allowed or rejected and the totals reconcile per
//! client, per endpoint and per minute; a client's decisions do not depend on
//! other clients; the reported boundary effect respects each algorithm's bound;
//! and the leaky bucket (nginx `limit_req`) admits at most B + 1 + rate·t in any
//! span t.

use proptest::prelude::*;

use super::leaky_bucket::LeakyBucket;
use super::test_util::decisions;
use super::{AlgorithmKind, AlgorithmSpec, Delay, Replayer, Rule, Traffic, replay, summarize};
use crate::events::Interner;
use crate::units::{Limit, Millis, Window};

fn limit(requests: u64, secs: u32) -> Limit {
    Limit {
        requests,
        window: Window::from_secs(secs).unwrap(),
    }
}

/// Time-sorted events (time, client, endpoint) from gaps: bursts and pauses.
fn traffic() -> impl Strategy<Value = Vec<(Millis, u32, u32)>> {
    prop::collection::vec((0u32..3000, 0u32..6, 0u32..3), 1..400).prop_map(|raw| {
        let mut t = 1_767_571_200_000;
        raw.into_iter()
            .map(|(gap, client, endpoint)| {
                t += i64::from(if gap % 13 == 0 { gap * 30 } else { gap % 300 });
                (t, client, endpoint)
            })
            .collect()
    })
}

fn names(prefix: &str, n: u32) -> Interner {
    let mut names = Interner::default();
    for i in 0..n {
        names.intern(&format!("{prefix}{i}"));
    }
    names
}

proptest! {
    #[test]
    fn every_algorithm_reconciles_and_keeps_clients_apart(
        kind in 0usize..6,
        requests in 1u64..12,
        secs in prop_oneof![Just(1u32), Just(60), 1u32..30],
        burst in 1u64..15,
        events in traffic(),
    ) {
        let kind = AlgorithmKind::ALL[kind];
        let mut spec = AlgorithmSpec::new(kind, limit(requests, secs));
        if kind.has_burst() {
            spec.burst = Some(burst);
        }
        let Ok(limiter) = spec.limiter() else {
            // Only a leaky-bucket rate below nginx's resolution is refused.
            prop_assert_eq!(kind, AlgorithmKind::LeakyBucket);
            return Ok(());
        };
        let ts: Vec<Millis> = events.iter().map(|e| e.0).collect();
        let client: Vec<u32> = events.iter().map(|e| e.1).collect();
        let endpoint: Vec<u32> = events.iter().map(|e| e.2).collect();
        let (client_names, endpoint_names) = (names("c", 6), names("/e", 3));
        let rules = [Rule { limiter: limiter.clone(), keys: &client, key_count: 6 }];
        let mut replayer = Replayer::new(&ts);
        let out = replayer.replay(&rules).unwrap();
        prop_assert_eq!(out.allowed.len(), ts.len());
        let traffic = Traffic { ts: &ts, client: &client, endpoint: &endpoint, client_names: &client_names, endpoint_names: &endpoint_names, by_client: None, census: None };
        let s = summarize(&spec, &limiter, &traffic, &out.allowed, out.delay_ms.as_deref(), usize::MAX);
        // Client by client (the replay's grouping), the summary is the same.
        let grouped = Traffic { by_client: replayer.grouped_by(&client), ..traffic };
        prop_assert!(grouped.by_client.is_some());
        let s2 = summarize(&spec, &limiter, &grouped, &out.allowed, out.delay_ms.as_deref(), usize::MAX);
        prop_assert_eq!(&s, &s2);
        // And with the decisions in that order, as the replay kept them.
        let by_client = grouped.by_client.map(|b| super::ByClient { allowed: out.grouped_allowed.as_deref(), ..b });
        prop_assert!(out.grouped_allowed.is_some());
        let decided = Traffic { by_client, ..traffic };
        let s3 = summarize(&spec, &limiter, &decided, &out.allowed, out.delay_ms.as_deref(), usize::MAX);
        prop_assert_eq!(&s, &s3);
        let t = &s.totals;
        prop_assert_eq!(t.requests, ts.len() as u64);
        prop_assert_eq!(t.allowed + t.rejected, t.requests);
        prop_assert_eq!(t.allowed, out.allowed_count());
        let sum = |rows: &[super::summary::Rejects]| rows.iter().map(|r| r.rejected).sum::<u64>();
        prop_assert_eq!(sum(&t.top_rejected_clients), t.rejected);
        prop_assert_eq!(sum(&t.rejected_by_endpoint), t.rejected);
        prop_assert_eq!(t.rejects_per_minute.iter().map(|m| m.rejected).sum::<u64>(), t.rejected);
        prop_assert_eq!(t.clients_rejected, t.top_rejected_clients.len() as u64);
        // The first and last rejections are those of the decisions, in the
        // first and last minutes with rejections.
        let rejected_at = (0..ts.len()).filter(|&i| !out.allowed[i]).map(|i| ts[i]);
        prop_assert_eq!((t.first_reject, t.last_reject), (rejected_at.clone().min(), rejected_at.max()));
        let minute_of = |ms: Millis| ms.div_euclid(60_000) * 60_000;
        prop_assert_eq!(t.first_reject.map(minute_of), t.rejects_per_minute.first().map(|m| m.minute));
        prop_assert_eq!(t.last_reject.map(minute_of), t.rejects_per_minute.last().map(|m| m.minute));

        // A client's decisions are those it gets when alone.
        for c in 0..6u32 {
            let rows: Vec<usize> = (0..ts.len()).filter(|&i| client[i] == c).collect();
            let alone_ts: Vec<Millis> = rows.iter().map(|&i| ts[i]).collect();
            let zeros = vec![0u32; rows.len()];
            let alone = replay(&alone_ts, &[Rule { limiter: limiter.clone(), keys: &zeros, key_count: 1 }]).unwrap();
            let together: Vec<bool> = rows.iter().map(|&i| out.allowed[i]).collect();
            prop_assert_eq!(alone.allowed, together, "client c{} depends on others", c);
        }

        let most = s.boundary.max_admitted;
        match kind {
            AlgorithmKind::SlidingLog => prop_assert!(most <= requests),
            AlgorithmKind::FixedWindow => prop_assert!(most <= 2 * requests),
            AlgorithmKind::SlidingCounter => prop_assert!(most <= 2 * requests),
            _ => prop_assert!(most <= s.instant_capacity + requests),
        }
    }

    #[test]
    fn leaky_bucket_admits_at_most_b_plus_one_plus_rate_times_span(
        requests in 1u64..30,
        secs in prop_oneof![Just(1u32), Just(60), 1u32..60],
        burst in 0u64..20,
        nodelay in any::<bool>(),
        gaps in prop::collection::vec(0u32..3000, 1..200),
    ) {
        let delay = if nodelay { Delay::NoDelay } else { Delay::After(burst / 2) };
        let bucket = LeakyBucket::new(limit(requests, secs), burst, delay).unwrap();
        prop_assume!(bucket.rate() > 0);
        let mut t: Millis = 1_000_000;
        let ts: Vec<Millis> = gaps.iter().map(|&g| { t += i64::from(g % 500); t }).collect();
        let ok: Vec<Millis> = ts.iter().zip(decisions(&bucket, &ts)).filter(|p| p.1).map(|p| *p.0).collect();
        // In any closed span [ok[i], ok[j]] of length d ms: count ≤ B + 1 + rate·d/10⁶
        // (rate in milli-requests per second), i.e. count·10⁶ ≤ (B+1)·10⁶ + rate·d.
        let rate = i128::from(bucket.rate());
        for i in 0..ok.len() {
            for j in i..ok.len() {
                let count = (j - i + 1) as i128;
                let span = i128::from(ok[j] - ok[i]);
                prop_assert!(
                    count * 1_000_000 <= (i128::from(burst) + 1) * 1_000_000 + rate * span,
                    "{} admitted in {} ms", count, span
                );
            }
        }
    }
}
