//! Hand-worked replays: several rules, keys that do not apply, column errors, and
//! identical results whatever the number of threads.

use super::*;
use crate::simulate::AlgorithmSpec;

fn limiter(kind: &str, limit: &str, burst: Option<u64>) -> Limiter {
    let mut spec = AlgorithmSpec::new(kind.parse().unwrap(), limit.parse().unwrap());
    spec.burst = burst;
    spec.limiter().unwrap()
}

fn rule<'a>(kind: &str, limit: &str, keys: &'a [u32], key_count: usize) -> Rule<'a> {
    Rule {
        limiter: limiter(kind, limit, None),
        keys,
        key_count,
    }
}

const NA: u32 = NOT_APPLICABLE;

#[test]
fn a_request_rejected_by_one_rule_leaves_the_others_untouched() {
    // Rule 1: fixed-window 2/1s over everything (one key).
    // Rule 2: fixed-window 1/1s per endpoint (keys 0 and 1).
    //   t=0 e0   rule 1 count 0 < 2, rule 2[e0] 0 < 1   admitted (r1 = 1, r2[e0] = 1)
    //   t=1 e0   rule 1 1 < 2 yes, rule 2[e0] 1 no      rejected; rule 1 stays at 1
    //   t=2 e1   rule 1 1 < 2, rule 2[e1] 0 < 1          admitted (r1 = 2)
    //   t=3 e1   rule 1 2 no, rule 2[e1] 1 no            rejected by both
    // Had the rejected request at t=1 counted in rule 1, t=2 would be rejected.
    let ts = [0, 1, 2, 3];
    let everyone = [0, 0, 0, 0];
    let endpoint = [0, 0, 1, 1];
    let rules = [
        rule("fixed-window", "2/1s", &everyone, 1),
        rule("fixed-window", "1/1s", &endpoint, 2),
    ];
    let out = replay(&ts, &rules).unwrap();
    assert_eq!(out.allowed, vec![true, false, true, false]);
    assert_eq!(out.rule_allowed[0], vec![true, true, true, false]);
    assert_eq!(out.rule_allowed[1], vec![true, false, true, false]);
    assert_eq!(out.delay_ms, None);
}

#[test]
fn rules_apply_only_where_they_have_a_key() {
    // Rule 1: sliding-log 1/1s per client, only on /login (events 0, 2).
    // Rule 2: sliding-log 2/1s per client on everything. One client (key 0).
    //   t=0 /login   r1 0<1, r2 0<2   admitted (r1 = [0], r2 = [0])
    //   t=1 /home    r1 n/a, r2 1<2   admitted (r2 = [0, 1])
    //   t=2 /login   r1 1, no         rejected
    //   t=3 /home    r2 2, no         rejected
    // Both rules key the same client, so this takes the grouped path.
    let ts = [0, 1, 2, 3];
    let login = [0, NA, 0, NA];
    let all = [0, 0, 0, 0];
    let rules = [
        rule("sliding-log", "1/1s", &login, 1),
        rule("sliding-log", "2/1s", &all, 1),
    ];
    let out = replay(&ts, &rules).unwrap();
    assert_eq!(out.allowed, vec![true, true, false, false]);
    assert_eq!(out.rule_allowed[0], vec![true, true, false, true]);
    assert_eq!(out, replay_in_time_order(&ts, &rules).unwrap());
}

#[test]
fn events_no_rule_applies_to_are_admitted() {
    let ts = [0, 0, 0];
    let keys = [NA, 0, 0];
    let out = replay(&ts, &[rule("fixed-window", "1/1s", &keys, 1)]).unwrap();
    assert_eq!(out.allowed, vec![true, true, false]);
}

#[test]
fn leaky_bucket_delays_are_the_largest_over_rules() {
    // Two nginx rules on one key, 5r/s burst=3 and 10r/s burst=3 (delay=0).
    // Four requests at t=0: excess 0, 1000, 2000, 3000 in both; delays
    // excess·1000/rate: 5r/s gives 0, 200, 400, 600; 10r/s gives 0, 100, 200, 300.
    let ts = [0, 0, 0, 0, 0];
    let keys = [0; 5];
    let rules = [
        Rule {
            limiter: limiter("leaky-bucket", "10r/s", Some(3)),
            keys: &keys,
            key_count: 1,
        },
        Rule {
            limiter: limiter("leaky-bucket", "5r/s", Some(3)),
            keys: &keys,
            key_count: 1,
        },
    ];
    let out = replay(&ts, &rules).unwrap();
    assert_eq!(out.allowed, vec![true, true, true, true, false]);
    assert_eq!(out.delay_ms, Some(vec![0, 200, 400, 600, 0]));

    // With nodelay the delays are reported, and all 0.
    let mut spec = AlgorithmSpec::new("leaky-bucket".parse().unwrap(), "5r/s".parse().unwrap());
    spec.burst = Some(3);
    spec.delay = Some(crate::simulate::Delay::NoDelay);
    let rules = [Rule {
        limiter: spec.limiter().unwrap(),
        keys: &keys,
        key_count: 1,
    }];
    let out = replay(&ts, &rules).unwrap();
    assert_eq!(out.delay_ms, Some(vec![0; 5]));
}

#[test]
fn mismatched_columns_are_reported() {
    let keys = [0, 1];
    let err = replay(&[0, 1, 2], &[rule("gcra", "1/1s", &keys, 2)]).unwrap_err();
    assert_eq!(
        err,
        ReplayError::KeysLength {
            rule: 0,
            keys: 2,
            events: 3
        }
    );
    let err = replay(&[0, 1], &[rule("gcra", "1/1s", &keys, 1)]).unwrap_err();
    assert!(matches!(
        err,
        ReplayError::KeyOutOfRange { row: 1, key: 1, .. }
    ));
    let err = replay(&[5, 1], &[rule("gcra", "1/1s", &keys, 2)]).unwrap_err();
    assert_eq!(err, ReplayError::Unsorted { row: 1 });
}

/// A deterministic, bursty workload large enough to be split into several chunks.
fn workload(events: usize, clients: u32) -> (Vec<Millis>, Vec<u32>, Vec<u32>) {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = 1_700_000_000_000;
    let mut ts = Vec::with_capacity(events);
    let mut client = Vec::with_capacity(events);
    let mut endpoint = Vec::with_capacity(events);
    for _ in 0..events {
        t += (next() % 7) as i64;
        ts.push(t);
        // Skewed: a few clients send most of the traffic.
        let r = next();
        client.push(if r % 4 == 0 {
            (r >> 8) as u32 % clients
        } else {
            (r >> 8) as u32 % 8
        });
        endpoint.push((r >> 40) as u32 % 3);
    }
    (ts, client, endpoint)
}

#[test]
fn results_do_not_depend_on_the_number_of_threads() {
    let (ts, client, endpoint) = workload(60_000, 500);
    let pool = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    };
    for kind in crate::simulate::AlgorithmKind::ALL {
        let spec = AlgorithmSpec::new(kind, "20/1s".parse().unwrap());
        let rules = [Rule {
            limiter: spec.limiter().unwrap(),
            keys: &client,
            key_count: 500,
        }];
        let one = pool(1).install(|| replay(&ts, &rules).unwrap());
        let two = pool(2).install(|| replay(&ts, &rules).unwrap());
        assert_eq!(one, two, "{kind}");
        assert_eq!(one, replay(&ts, &rules).unwrap(), "{kind}: second run");
        assert_eq!(
            one,
            replay_in_time_order(&ts, &rules).unwrap(),
            "{kind}: sequential"
        );
        assert!(
            one.allowed.contains(&false) && one.allowed.contains(&true),
            "{kind}"
        );
    }
    // Several rules with different keys (the sequential path) are deterministic too.
    let rules = [
        rule("token-bucket", "20/1s", &client, 500),
        rule("leaky-bucket", "100r/s", &endpoint, 3),
    ];
    let one = pool(1).install(|| replay(&ts, &rules).unwrap());
    let two = pool(2).install(|| replay(&ts, &rules).unwrap());
    assert_eq!(one, two);
}

#[test]
fn a_replayer_reuses_its_grouping_only_for_the_same_keys() {
    // One replayer through rule sets whose keys change, come back, and keep their
    // values under a larger key count: each replay must equal a fresh one.
    let (ts, client, endpoint) = workload(20_000, 300);
    let login: Vec<u32> = client
        .iter()
        .zip(&endpoint)
        .map(|(&c, &e)| if e == 0 { c } else { NA })
        .collect();
    let sets: Vec<Vec<Rule>> = vec![
        vec![rule("fixed-window", "5/1s", &client, 300)],
        vec![rule("token-bucket", "5/1s", &client, 300)],
        vec![rule("gcra", "5/1s", &login, 300)],
        vec![rule("sliding-log", "5/1s", &endpoint, 3)],
        vec![rule("gcra", "5/1s", &client, 400)],
        vec![
            rule("sliding-counter", "9/1s", &client, 300),
            rule("leaky-bucket", "3r/s", &login, 300),
        ],
        vec![rule("fixed-window", "5/1s", &client, 300)],
    ];
    let mut replayer = Replayer::new(&ts);
    for (i, rules) in sets.iter().enumerate() {
        let reused = replayer.replay(rules).unwrap();
        assert_eq!(reused, replay(&ts, rules).unwrap(), "rule set {i}");
        assert_eq!(
            reused,
            replay_in_time_order(&ts, rules).unwrap(),
            "rule set {i}: sequential"
        );
    }
}

proptest::proptest! {
    /// The one-pass grouping equals the counting sort of the keys (with
    /// [`NOT_APPLICABLE`] as the last key) and that sort's rows inverted.
    #[test]
    fn grouping_positions_invert_the_counting_sort(
        key_count in 0usize..6,
        raw in proptest::collection::vec(0u32..8, 0..200),
    ) {
        let keys: Vec<u32> = (raw.iter())
            .map(|&k| if k as usize >= key_count { NOT_APPLICABLE } else { k })
            .collect();
        let (groups, positions) = grouped::group_with_positions(&keys, key_count);
        let dense: Vec<u32> = (keys.iter())
            .map(|&k| if k == NOT_APPLICABLE { key_count as u32 } else { k })
            .collect();
        let expected = crate::events::group_rows(&dense, key_count + 1);
        proptest::prop_assert_eq!(&groups.offsets, &expected.offsets);
        proptest::prop_assert_eq!(&groups.rows, &expected.rows);
        let mut inverted = vec![0u32; keys.len()];
        for (at, &row) in expected.rows.iter().enumerate() {
            inverted[row as usize] = at as u32;
        }
        proptest::prop_assert_eq!(positions, inverted);
    }
}
