//! A census shared by summaries changes none of their figures: totals and
//! boundary effects against their first definitions.

use super::super::tests::{boundary_by_clients, spec};
use super::super::totals::most_rejected;
use super::super::*;
use crate::simulate::{Replayer, Rule};

/// Totals as first defined: every id tallied over every decision.
fn totals_by_tally(traffic: &Traffic, allowed: &[bool], top: usize) -> Totals {
    let tally = |ids: &[u32], names: &Interner| {
        let mut counts = vec![(0u64, 0u64); names.len()];
        for (&id, &ok) in ids.iter().zip(allowed) {
            if id as usize >= counts.len() {
                counts.resize(id as usize + 1, (0, 0));
            }
            counts[id as usize].0 += 1;
            counts[id as usize].1 += u64::from(!ok);
        }
        let entries = counts.into_iter().enumerate();
        entries
            .map(|(id, (requests, rejected))| Rejects {
                name: name_of(names, id),
                requests,
                rejected,
            })
            .collect::<Vec<_>>()
    };
    let clients = tally(traffic.client, traffic.client_names);
    let endpoints = tally(traffic.endpoint, traffic.endpoint_names);
    let mut rejects_per_minute: Vec<MinuteRejects> = Vec::new();
    for (&t, _) in traffic.ts.iter().zip(allowed).filter(|p| !*p.1) {
        let minute = t.div_euclid(60_000) * 60_000;
        match rejects_per_minute.last_mut() {
            Some(last) if last.minute == minute => last.rejected += 1,
            _ => rejects_per_minute.push(MinuteRejects {
                minute,
                rejected: 1,
            }),
        }
    }
    let rejected_at = (allowed.iter().zip(traffic.ts))
        .filter(|&(&a, _)| !a)
        .map(|(_, &ts)| ts);
    let requests = allowed.len() as u64;
    let rejected = allowed.iter().filter(|&&a| !a).count() as u64;
    let seen = clients.iter().filter(|c| c.requests > 0).count() as u64;
    let hit = clients.iter().filter(|c| c.rejected > 0).count() as u64;
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    Totals {
        requests,
        allowed: requests - rejected,
        rejected,
        reject_rate: share(rejected, requests),
        clients: seen,
        clients_rejected: hit,
        clients_rejected_share: share(hit, seen),
        rejected_by_endpoint: most_rejected(endpoints, usize::MAX),
        top_rejected_clients: most_rejected(clients, top),
        rejects_per_minute,
        first_reject: rejected_at.clone().min(),
        last_reject: rejected_at.max(),
    }
}

proptest::proptest! {
    /// A census shared by several summaries (other decisions, other windows,
    /// spans worked out once per window) changes no figure: the totals are
    /// those of tallying every decision, the boundary effect its definition.
    #[test]
    fn summaries_sharing_a_census_match_their_definitions(
        events in proptest::collection::vec((0i64..200_000, 0u32..7, 0u32..4), 0..300),
        decisions in proptest::collection::vec(
            (proptest::collection::vec(proptest::bool::weighted(0.9), 300), 1u32..90, 0u8..3),
            1..5,
        ),
        top in 0usize..5,
    ) {
        let mut events = events;
        events.sort_by_key(|e| e.0);
        let ts: Vec<Millis> = events.iter().map(|e| e.0).collect();
        let client: Vec<u32> = events.iter().map(|e| e.1).collect();
        let endpoint: Vec<u32> = events.iter().map(|e| e.2).collect();
        // Ids 5, 6 and 3 have no name: they are listed as `#id`.
        let mut clients = Interner::default();
        (0..5).for_each(|c| { clients.intern(&format!("c{c}")); });
        let mut endpoints = Interner::default();
        (0..3).for_each(|e| { endpoints.intern(&format!("/e{e}")); });
        let keys = [Rule { limiter: spec("fixed-window", "1/1s").limiter().unwrap(), keys: &client, key_count: 7 }];
        let mut replayer = Replayer::new(&ts);
        replayer.replay(&keys).unwrap();
        let census = Census::new(&client, &endpoint);
        let plain = Traffic { ts: &ts, client: &client, endpoint: &endpoint, client_names: &clients, endpoint_names: &endpoints, by_client: None, census: None };
        let shared = Traffic { by_client: replayer.grouped_by(&client), census: Some(&census), ..plain };
        proptest::prop_assert!(shared.by_client.is_some());
        for (pattern, secs, rejecting) in decisions {
            // All admitted, as drawn, or all rejected.
            let allowed: Vec<bool> = (0..ts.len()).map(|i| match rejecting { 0 => true, 1 => pattern[i], _ => false }).collect();
            let spec = spec("fixed-window", &format!("5/{secs}s"));
            let limiter = spec.limiter().unwrap();
            let got = summarize(&spec, &limiter, &shared, &allowed, None, top);
            proptest::prop_assert_eq!(&got.totals, &totals_by_tally(&plain, &allowed, top));
            proptest::prop_assert_eq!(&got, &summarize(&spec, &limiter, &plain, &allowed, None, top));
            proptest::prop_assert_eq!(&totals(&shared, &allowed, top), &got.totals);
            let want = boundary_by_clients(spec.limit.window.millis(), &plain, &allowed);
            proptest::prop_assert_eq!(
                (got.boundary.max_admitted, got.boundary.client.clone(), got.boundary.span_end),
                match want {
                    Some((n, c, t)) => (n, Some(c), Some(t)),
                    None => (0, None, None),
                }
            );
        }
    }
}
