use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// The order a stable comparison sort of every row gives.
fn reference(ts: &[Millis]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..ts.len() as u32).collect();
    order.sort_by_key(|&i| ts[i as usize]);
    order
}

/// The rows in the order the stretches give, with the times sorted alike.
fn sorted_rows(ts: &[Millis], max_len: usize) -> Option<Vec<u32>> {
    let stretches = Stretches::find(ts, max_len)?;
    let mut rows: Vec<u32> = (0..ts.len() as u32).collect();
    stretches.permute(&mut rows);
    let mut times = ts.to_vec();
    stretches.permute(&mut times);
    assert!(times.iter().zip(&rows).all(|(&t, &r)| t == ts[r as usize]));
    Some(rows)
}

#[test]
fn lines_shuffled_within_each_minute_are_sorted_minute_by_minute() {
    // Seconds 0..4 in one minute, 60..62 in the next, each shuffled; a row
    // in place between them.
    let ts: Vec<Millis> = [3, 0, 2, 0, 1, 59, 61, 60, 62, 60]
        .map(|s| s * 1000)
        .to_vec();
    let stretches = Stretches::find(&ts, 100).unwrap();
    assert_eq!(stretches.ranges, [0..5, 6..10]);
    assert_eq!(
        sorted_rows(&ts, 100).unwrap(),
        [1, 3, 4, 2, 0, 5, 7, 9, 6, 8]
    );
    // A stretch longer than allowed: none.
    assert!(Stretches::find(&ts, 4).is_none());
    assert!(Stretches::find(&ts, 5).is_some());
}

#[test]
fn sorted_rows_have_no_stretch() {
    let ts: Vec<Millis> = (0..10_000).map(|i| i / 3).collect();
    assert!(Stretches::find(&ts, 2).unwrap().ranges.is_empty());
}

/// Times in order, with ties, then shuffled within windows of `window`
/// rows (`shuffle` picks the swaps), in whole seconds or milliseconds.
fn shuffled_times() -> impl Strategy<Value = Vec<Millis>> {
    (
        vec(0i64..3, 0..3 * BLOCK),
        1usize..300,
        vec(any::<prop::sample::Index>(), 3 * BLOCK),
        prop_oneof![Just(1000i64), Just(1), Just(7919)],
        -5_000_000i64..5_000_000,
    )
        .prop_map(|(steps, window, swaps, unit, origin)| {
            let mut t = origin;
            let mut ts: Vec<Millis> = steps
                .iter()
                .map(|&s| {
                    t += s * unit;
                    t
                })
                .collect();
            for (start, chunk) in (0..ts.len()).step_by(window).zip(ts.chunks_mut(window)) {
                for i in (1..chunk.len()).rev() {
                    chunk.swap(i, swaps[start + i].index(i + 1));
                }
            }
            ts
        })
}

proptest! {
    #[test]
    fn the_stretches_give_the_stable_time_order(
        ts in prop_oneof![shuffled_times(), vec(-50i64..50, 0..400), vec(any::<i64>(), 0..50)],
        max_len in prop_oneof![Just(usize::MAX), 2usize..600],
    ) {
        match sorted_rows(&ts, max_len) {
            Some(rows) => prop_assert_eq!(rows, reference(&ts)),
            None => prop_assert!(max_len != usize::MAX, "no bound, yet no stretches"),
        }
    }
}
