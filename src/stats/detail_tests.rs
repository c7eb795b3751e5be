//! Per-endpoint figures kept for the reported endpoints only
//! ([`super::analyze_endpoints`]) equal those of the full analysis, whatever
//! the number of endpoints detailed, the threads and the pair tables.

use proptest::prelude::*;

use super::*;
use crate::events::Event;

fn settings(keep_counts: bool) -> StatsSettings {
    StatsSettings {
        window: "1m".parse().unwrap(),
        top: 10,
        exclude: vec!["c3".into()],
        keep_counts,
    }
}

/// Everything reported about one endpoint.
fn figures(e: &EndpointStats) -> (String, u64, u64, [Quantiles; 3], Vec<ClientPeak>) {
    let s = &e.stats;
    (
        e.endpoint.clone(),
        s.requests,
        s.clients,
        [s.per_window, s.per_second, s.client_peak_second],
        s.peaks.clone(),
    )
}

fn table(rows: Vec<(i64, u32, u32)>) -> EventTable {
    let mut t = EventTable::default();
    for c in 0..9 {
        t.clients.intern(&format!("c{c}"));
    }
    for e in 0..40 {
        t.endpoints.intern(&format!("GET /{e}"));
    }
    let mut rows = rows;
    rows.sort_by_key(|r| r.0);
    for (ts, client, endpoint) in rows {
        t.push(Event {
            ts,
            client,
            endpoint,
            status: 200,
            ..Event::default()
        });
    }
    t
}

#[test]
fn only_the_busiest_endpoints_carry_figures_and_all_are_counted() {
    // /0: 3 requests, /1 and /2: 2 each (a tie, by name), /3: 1; /4 only from
    // the excluded client c3.
    let t = table(vec![
        (0, 0, 0),
        (1, 1, 0),
        (2, 2, 0),
        (3, 0, 2),
        (4, 1, 2),
        (5, 0, 1),
        (6, 2, 1),
        (7, 0, 3),
        (8, 3, 4),
    ]);
    let all = analyze(&t, &settings(false));
    let names: Vec<&str> = all.endpoints.iter().map(|e| e.endpoint.as_str()).collect();
    assert_eq!(names, ["GET /0", "GET /1", "GET /2", "GET /3"]);
    assert_eq!(all.endpoint_count, 4);
    let two = analyze_endpoints(&t, &settings(false), 2);
    let names: Vec<&str> = two.endpoints.iter().map(|e| e.endpoint.as_str()).collect();
    assert_eq!(names, ["GET /0", "GET /1"]);
    assert_eq!(two.endpoint_count, 4);
    assert_eq!(two.endpoints[1].stats.clients, 2);
    let none = analyze_endpoints(&t, &settings(false), 0);
    assert!(none.endpoints.is_empty());
    assert_eq!(none.endpoint_count, 4);
    // The export covers every endpoint; the figures, the one reported.
    let kept = analyze_endpoints(&t, &settings(true), 1);
    assert_eq!(figures(&kept.endpoints[0]), figures(&all.endpoints[0]));
    assert_eq!(kept.endpoints.len(), 1);
    let mut exported = kept.counts.expect("kept").endpoint;
    exported.sort_unstable();
    exported.dedup();
    assert_eq!(exported, [0, 1, 2, 3]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reported_endpoints_have_the_figures_of_the_full_analysis(
        rows in proptest::collection::vec((0i64..300_000, 0u32..9, 0u32..40), 0..500),
        detailed in 0usize..45,
        threads in 1usize..4,
        keep_counts: bool,
    ) {
        let t = table(rows);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let all = analyze(&t, &settings(false));
        let some = pool.install(|| analyze_endpoints(&t, &settings(keep_counts), detailed));
        prop_assert_eq!(some.endpoint_count, all.endpoints.len());
        prop_assert_eq!(all.endpoint_count, all.endpoints.len());
        prop_assert_eq!(some.endpoints.len(), detailed.min(all.endpoints.len()));
        for (s, a) in some.endpoints.iter().zip(&all.endpoints) {
            prop_assert_eq!(figures(s), figures(a));
        }
        prop_assert_eq!(some.overall.per_window, all.overall.per_window);
        prop_assert_eq!(&some.overall.peaks, &all.overall.peaks);
        if keep_counts {
            // The export rows, of every endpoint whatever is reported, are
            // those of the full analysis.
            let full = analyze(&t, &settings(true)).counts.expect("kept");
            prop_assert_eq!(some.counts.expect("kept"), full);
        }
    }
}

/// [`busiest`] as the plain sort of every endpoint it shortcuts.
fn busiest_by_sorting(table: &EventTable, requests: &[u64], n: usize) -> Vec<Id> {
    let mut ids: Vec<Id> = (0..requests.len() as Id)
        .filter(|&e| requests[e as usize] > 0)
        .collect();
    ids.sort_by(|a, b| {
        requests[*b as usize]
            .cmp(&requests[*a as usize])
            .then_with(|| table.endpoints.name(*a).cmp(table.endpoints.name(*b)))
    });
    ids.truncate(n);
    ids
}

proptest! {
    #[test]
    fn the_busiest_endpoints_equal_the_first_of_all_sorted(
        requests in proptest::collection::vec(0u64..5, 0..60),
        names in Just(()).prop_perturb(|_, mut rng| {
            let mut order: Vec<u32> = (0..60).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            order
        }),
        n in 0usize..70,
    ) {
        // Endpoint ids in one order, their names in another.
        let mut t = EventTable::default();
        for &k in &names[..requests.len()] {
            t.endpoints.intern(&format!("GET /{k:02}"));
        }
        prop_assert_eq!(busiest(&t, &requests, n), busiest_by_sorting(&t, &requests, n));
    }
}
