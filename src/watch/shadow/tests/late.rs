//! Late requests: each is decided where every rule that applies can place
//! it in its key's time order, or by none, and a line far ahead does not
//! sweep the states its neighbours are placed against.

use super::*;
use crate::watch::reached::REACHED_BY;

#[test]
fn a_late_request_is_decided_in_its_clients_own_time_or_not_at_all() {
    let mut shadow = fixed_window_swept_at_newest("1/10s").with_lateness(60_000);
    // b at 100 s is decided first; a's requests come later, all older. a's
    // windows are its own: [10 s, 20 s) admits 10 s and rejects 15 s,
    // [20 s, 30 s) admits 25 s, as the sorted log decides them. (At the
    // newest time, 100 s, they would all fall in one window: admitted,
    // rejected, rejected.) 22 s is older than a's last decision (25 s): it
    // cannot be placed, so it is not decided (admitted, counted unplaced).
    let sequence = [
        (100_000, "b"),
        (10_000, "a"),
        (15_000, "a"),
        (25_000, "a"),
        (22_000, "a"),
        (105_000, "c"),
    ];
    let decide = |shadow: &mut Shadow, sequence: &[(Millis, &str)]| -> Vec<bool> {
        (sequence.iter())
            .map(|&(t, k)| shadow.decide(t, &request(k)))
            .collect()
    };
    assert_eq!(
        decide(&mut shadow, &sequence),
        [true, true, false, true, true, true]
    );
    assert_eq!(shadow.now(), Some(105_000));
    let f = &shadow.figures()[0];
    assert_eq!((f.requests, f.would_reject, f.unplaced), (5, 1, 1));
    assert_eq!((f.hour.clients_seen, f.hour.clients_hit), (3, 1));
    // States are kept a minute behind the newest time: a late client at 46 s
    // is decided in its own time (admitted, then rejected in its window); at
    // 44 s, before the sweep's 45 s, a client without state may have been
    // dropped: not decided.
    shadow.sweep(105_000);
    let late = [(46_000, "d"), (47_000, "d"), (44_000, "e")];
    assert_eq!(decide(&mut shadow, &late), [true, false, true]);
    let f = &shadow.figures()[0];
    assert_eq!((f.requests, f.would_reject, f.unplaced), (7, 2, 2));
}

#[test]
fn one_line_far_ahead_does_not_sweep_the_states_its_neighbours_need() {
    let mut shadow = fixed_window("2/10s").with_lateness(60_000);
    // A client a second for 200 s, then one line half an hour ahead (the
    // newest time: a pause in a log behind the wall clock let it out of the
    // reorder buffer), then the log goes on. Sweeping at that line's time
    // would leave every new client unplaced: the states are swept at the
    // time 64 requests have reached.
    for s in 0..200 {
        shadow.decide(s * 1000, &request(&format!("c{s}")));
    }
    shadow.decide(2_000_000, &request("ahead"));
    shadow.sweep(2_000_000);
    for t in [200_000, 200_500, 201_000] {
        shadow.decide(t, &request("new"));
    }
    let f = &shadow.figures()[0];
    assert_eq!((f.requests, f.would_reject, f.unplaced), (204, 1, 0));
    // Once REACHED_BY requests have reached a time, states are swept there:
    // a client without state older than that minus the lateness is unplaced.
    for i in 0..REACHED_BY as i64 {
        shadow.decide(2_000_000 + i, &request(&format!("d{i}")));
    }
    shadow.sweep(2_000_000 + REACHED_BY as i64);
    shadow.decide(1_900_000, &request("late"));
    shadow.decide(1_950_000, &request("late"));
    assert_eq!(shadow.figures()[0].unplaced, 1);
}

#[test]
fn a_request_one_rule_cannot_place_is_decided_by_none() {
    let policy = "[[rule]]\nname='per-user'\nkey='user'\nlimit='2/1m'\nalgorithm='sliding-log'\n\n\
                  [[rule]]\nname='per-ip'\nlimit='3/1m'\nalgorithm='sliding-log'\n";
    let (rules, keys) = policy_keyed_by_ip(policy);
    let mut shadow = Shadow::new(&rules, &keys).unwrap();
    let alice_at = |ip: &str| Request {
        keys: vec![Some("alice".into()), Some(ip.into())],
        ..request("alice")
    };
    // alice's three requests at 295 to 297 s (the third rejected by
    // per-user, so not recorded under her address), then her ten from a
    // second address at 0 to 9 s, late. Sorted, those ten come first:
    // per-user admits two and rejects eight, so per-ip records two and
    // rejects none. per-user cannot place them (alice has a decision at
    // 297 s); if per-ip decided them alone, it would admit and record three
    // and reject seven, none of which the sorted replay rejects there.
    let mut decisions = Vec::new();
    for t in [295_000, 296_000, 297_000] {
        decisions.push(shadow.decide(t, &alice_at("10.0.0.1")));
    }
    for t in (0..10).map(|s| s * 1000) {
        decisions.push(shadow.decide(t, &alice_at("10.0.9.9")));
    }
    assert_eq!(decisions[..3], [true, true, false]);
    assert!(decisions[3..].iter().all(|&d| d));
    let figures: Vec<(u64, u64, u64)> = (shadow.figures().iter())
        .map(|f| (f.requests, f.would_reject, f.unplaced))
        .collect();
    assert_eq!(figures, [(3, 1, 10), (3, 0, 10)]);
    // Nor did they leave any state: per-ip holds alice's first address only.
    assert_eq!(shadow.figures()[1].states, 1);
}
