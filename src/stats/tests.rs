//! Hand-worked expectations for the statistics.

use super::*;
use crate::events::Event;
use by_client::RowBounds;

/// A: 0, 0.5 (/y); 1, 59.9, 60, 61, 61.2, 61.5 (/x).  B: 30, 90 (/x, status 429).
fn table() -> EventTable {
    let mut t = EventTable::default();
    let (a, b) = (t.clients.intern("A"), t.clients.intern("B"));
    let (x, y) = (t.endpoints.intern("GET /x"), t.endpoints.intern("GET /y"));
    let rows = [
        (0, a, y, 200),
        (500, a, y, 200),
        (1_000, a, x, 200),
        (30_000, b, x, 429),
        (59_900, a, x, 200),
        (60_000, a, x, 200),
        (61_000, a, x, 200),
        (61_200, a, x, 503),
        (61_500, a, x, 200),
        (90_000, b, x, 429),
    ];
    for (ts, client, endpoint, status) in rows {
        t.push(Event {
            ts,
            client,
            endpoint,
            status,
            ..Event::default()
        });
    }
    t
}

fn settings() -> StatsSettings {
    StatsSettings {
        window: "1m".parse().unwrap(),
        top: 10,
        exclude: vec![],
        keep_counts: true,
    }
}

#[test]
fn overall_figures_by_hand() {
    let a = analyze(&table(), &settings());
    // per window: A 4, 4; B 1, 1 → sorted 1 1 4 4.
    assert_eq!(
        a.overall.per_window,
        Quantiles {
            samples: 4,
            p50: 1,
            p90: 4,
            p95: 4,
            p99: 4,
            p999: 4,
            max: 4
        }
    );
    // per second: A s0=2 s1=1 s59=1 s60=1 s61=3; B s30=1 s90=1 → 1 1 1 1 1 2 3.
    assert_eq!(
        a.overall.per_second,
        Quantiles {
            samples: 7,
            p50: 1,
            p90: 3,
            p95: 3,
            p99: 3,
            p999: 3,
            max: 3
        }
    );
    // peaks: A 3, B 1.
    assert_eq!(
        a.overall.client_peak_second,
        Quantiles {
            samples: 2,
            p50: 1,
            p90: 3,
            p95: 3,
            p99: 3,
            p999: 3,
            max: 3
        }
    );
    assert_eq!((a.overall.requests, a.overall.clients), (10, 2));
}

#[test]
fn endpoint_figures_by_hand() {
    let a = analyze(&table(), &settings());
    let names: Vec<&str> = a.endpoints.iter().map(|e| e.endpoint.as_str()).collect();
    assert_eq!(names, ["GET /x", "GET /y"]);
    // /x: (A) w0 = 2, w1 = 4; (B) w0 = 1, w1 = 1.
    assert_eq!(
        a.endpoints[0].stats.distributions.per_window.rows(),
        vec![(1, 2), (2, 1), (4, 1)]
    );
    assert_eq!(a.endpoints[0].stats.requests, 8);
    assert_eq!(a.endpoints[1].stats.per_window.max, 2);
}

#[test]
fn statuses_and_top_clients() {
    let t = table();
    let a = analyze(&t, &settings());
    assert_eq!((a.status.status_429, a.status.status_503), (2, 1));
    assert_eq!(
        (
            a.status.clients[0].client.as_str(),
            a.status.clients[0].status_429
        ),
        ("B", 2)
    );
    let top = top_clients(&t, &a.overall, 1);
    assert_eq!(top[0].0, "A");
    assert_eq!(
        (
            top[0].1.requests,
            top[0].1.peak_window,
            top[0].1.peak_second
        ),
        (8, 4, 3)
    );
}

#[test]
fn export_rows_cover_every_pair_window() {
    let a = analyze(&table(), &settings());
    let rows = a.counts.unwrap();
    let total: u64 = rows.count.iter().sum();
    assert_eq!(total, 10);
    assert_eq!(rows.count.len(), 5); // A/y w0, A/x w0, A/x w1, B/x w0, B/x w1
    assert!(rows.window_start.iter().all(|w| w % 60_000 == 0));
}

#[test]
fn excluded_clients_leave_every_figure() {
    let s = StatsSettings {
        exclude: vec!["A".into(), "nobody".into()],
        ..settings()
    };
    let a = analyze(&table(), &s);
    assert_eq!((a.overall.requests, a.overall.per_window.max), (2, 1));
    assert_eq!(a.excluded, ["A"]);
    assert_eq!(a.excluded_unknown, ["nobody"]);
}

/// The sequential single pass the parallel pass must agree with:
/// every event in table order, a hash map of (client, endpoint) pairs.
mod sequential {
    use rustc_hash::FxHashMap;

    use super::super::counting::{KeyCounts, ScopeTally};
    use super::*;

    pub struct Reference {
        pub overall: ScopeTally,
        pub per_endpoint: Vec<ScopeTally>,
        pub peaks: Vec<ClientPeak>,
        pub endpoint_peaks: Vec<Vec<ClientPeak>>,
        pub status: Vec<(Id, u64, u64)>,
        pub counts: CountRows,
    }

    fn peak(client: Id, k: &KeyCounts) -> ClientPeak {
        ClientPeak {
            client,
            requests: k.requests,
            peak_window: k.peak_window,
            peak_second: k.peak_second,
        }
    }

    pub fn pass(table: &EventTable, excluded: &[bool], window: Window) -> Reference {
        let mut per_client = vec![KeyCounts::default(); table.clients.len()];
        let mut overall = ScopeTally::default();
        let mut pair_index: FxHashMap<(Id, Id), usize> = FxHashMap::default();
        let mut pairs: Vec<(Id, Id, KeyCounts)> = Vec::new();
        let mut per_endpoint = vec![ScopeTally::default(); table.endpoints.len()];
        let mut counts = CountRows::default();
        let mut push = |c: Id, e: Id, (w, n): (i64, u64)| {
            counts.client.push(c);
            counts.endpoint.push(e);
            counts.window_start.push(w * window.millis());
            counts.count.push(n);
        };
        let mut status: FxHashMap<Id, (u64, u64)> = FxHashMap::default();
        for i in 0..table.len() {
            let (t, c, e) = (table.ts[i], table.client[i], table.endpoint[i]);
            if excluded[c as usize] {
                continue;
            }
            per_client[c as usize].add(t, window, &mut overall, &mut |_| {});
            let slot = *pair_index.entry((c, e)).or_insert_with(|| {
                pairs.push((c, e, KeyCounts::default()));
                pairs.len() - 1
            });
            pairs[slot]
                .2
                .add(t, window, &mut per_endpoint[e as usize], &mut |w| {
                    push(c, e, w)
                });
            match table.status[i] {
                429 => status.entry(c).or_default().0 += 1,
                503 => status.entry(c).or_default().1 += 1,
                _ => {}
            }
        }
        let mut peaks = Vec::new();
        for (c, k) in per_client.iter_mut().enumerate() {
            if k.requests > 0 {
                k.finish(&mut overall, &mut |_| {});
                peaks.push(peak(c as Id, k));
            }
        }
        let mut endpoint_peaks = vec![Vec::new(); table.endpoints.len()];
        for (c, e, k) in &mut pairs {
            k.finish(&mut per_endpoint[*e as usize], &mut |w| push(*c, *e, w));
            endpoint_peaks[*e as usize].push(peak(*c, k));
        }
        for peaks in &mut endpoint_peaks {
            peaks.sort_by_key(|p| p.client);
        }
        let mut status: Vec<(Id, u64, u64)> =
            status.into_iter().map(|(c, (a, b))| (c, a, b)).collect();
        status.sort_unstable();
        Reference {
            overall,
            per_endpoint,
            peaks,
            endpoint_peaks,
            status,
            counts,
        }
    }
}

/// A table of `clients` clients and five endpoints holding `rows` (time,
/// client, endpoint, status index) in time order, and which clients are
/// excluded (`excluded`, when it is one of them).
fn drawn_table(
    clients: u32,
    mut rows: Vec<(i64, u32, u32, usize)>,
    excluded: Option<usize>,
) -> (EventTable, Vec<bool>) {
    let mut t = EventTable::default();
    for c in 0..clients {
        t.clients.intern(&format!("c{c}"));
    }
    for e in 0..5 {
        t.endpoints.intern(&format!("GET /{e}"));
    }
    rows.sort_by_key(|r| r.0);
    for (ts, client, endpoint, s) in rows {
        let status = [200, 429, 503, 404][s];
        t.push(Event {
            ts,
            client: client % clients,
            endpoint,
            status,
            ..Event::default()
        });
    }
    let mut out = vec![false; clients as usize];
    if let Some(c) = excluded.filter(|&c| c < clients as usize) {
        out[c] = true;
    }
    (t, out)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever the threads, the client ranges (`parts`, up to more ranges
    /// than clients), the groups of clients counted at once and the rows
    /// indexed at once, the pass gives
    /// the figures, peaks and export rows (in their order) of one pass over
    /// the table in time order.
    #[test]
    fn the_parallel_pass_equals_one_sequential_pass(
        clients in 1u32..40,
        rows in proptest::collection::vec((0i64..400_000, 0u32..40, 0u32..5, 0usize..4), 0..400),
        excluded_client in proptest::option::of(0usize..40),
        window in proptest::sample::select(vec!["1s", "10s", "1m"]),
        threads in 1usize..4,
        parts in 1usize..50,
        per_group in proptest::option::of(1usize..12),
        indexed_rows in proptest::sample::select(vec![1usize, 7, 60, 1 << 20]),
        group_rows in proptest::sample::select(vec![1usize, 5, 40, 1 << 20]),
    ) {
        let (t, excluded) = drawn_table(clients, rows, excluded_client);
        let window: Window = window.parse().unwrap();
        let expected = sequential::pass(&t, &excluded, window);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let got = pool.install(|| super::pass::count_with(&t, &excluded, window, true, &super::detail::Detail::all(5), &super::pass::Split { parts, per_group, rows: RowBounds { indexed: indexed_rows, group: group_rows } }));
        proptest::prop_assert_eq!(&got.overall.per_window, &expected.overall.per_window);
        proptest::prop_assert_eq!(&got.overall.per_second, &expected.overall.per_second);
        for (g, x) in got.per_endpoint.iter().zip(&expected.per_endpoint) {
            proptest::prop_assert_eq!(&g.per_window, &x.per_window);
            proptest::prop_assert_eq!(&g.per_second, &x.per_second);
        }
        proptest::prop_assert_eq!(&got.peaks, &expected.peaks);
        proptest::prop_assert_eq!(&got.endpoint_peaks, &expected.endpoint_peaks);
        proptest::prop_assert_eq!(&got.status, &expected.status);
        let counts = got.counts.unwrap();
        proptest::prop_assert_eq!(&counts.client, &expected.counts.client);
        proptest::prop_assert_eq!(&counts.endpoint, &expected.counts.endpoint);
        proptest::prop_assert_eq!(&counts.window_start, &expected.counts.window_start);
        proptest::prop_assert_eq!(&counts.count, &expected.counts.count);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Split into ranges of rows (up to more ranges than rows), with some
    /// endpoints detailed, the pass gives the figures and peaks of one pass
    /// over the table in time order, negative times included.
    #[test]
    fn ranges_of_rows_equal_one_sequential_pass(
        clients in 1u32..12,
        rows in proptest::collection::vec((-90_000i64..300_000, 0u32..12, 0u32..5, 0usize..4), 0..300),
        excluded_client in proptest::option::of(0usize..12),
        window in proptest::sample::select(vec!["1s", "10s", "1m"]),
        threads in 1usize..4,
        ranges in 1usize..40,
        detailed in proptest::sample::subsequence(vec![0u32, 1, 2, 3, 4], 0..=5),
    ) {
        let (t, excluded) = drawn_table(clients, rows, excluded_client);
        let window: Window = window.parse().unwrap();
        let expected = sequential::pass(&t, &excluded, window);
        let detail = super::detail::Detail::only(detailed.clone(), 5);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let got = pool.install(|| super::row_ranges::count(&t, &excluded, window, &detail, ranges));
        proptest::prop_assert_eq!(&got.overall.per_window, &expected.overall.per_window);
        proptest::prop_assert_eq!(&got.overall.per_second, &expected.overall.per_second);
        proptest::prop_assert_eq!(got.per_endpoint.len(), detailed.len());
        for (slot, &e) in detailed.iter().enumerate() {
            let (g, x) = (&got.per_endpoint[slot], &expected.per_endpoint[e as usize]);
            proptest::prop_assert_eq!(&g.per_window, &x.per_window);
            proptest::prop_assert_eq!(&g.per_second, &x.per_second);
            proptest::prop_assert_eq!(&got.endpoint_peaks[slot], &expected.endpoint_peaks[e as usize]);
        }
        proptest::prop_assert_eq!(&got.peaks, &expected.peaks);
        proptest::prop_assert_eq!(&got.status, &expected.status);
        proptest::prop_assert!(got.counts.is_none());
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]
    /// Selecting the top clients lists what sorting them all lists: the same
    /// clients in the same order, ties (equal requests) broken by name.
    #[test]
    fn top_clients_are_the_head_of_the_full_order(
        requests in proptest::collection::vec(1u64..6, 1..60),
        n in 0usize..70,
    ) {
        let mut t = EventTable::default();
        let mut peaks = Vec::new();
        for (i, &r) in requests.iter().enumerate() {
            // Names in an order unrelated to the ids.
            let client = t.clients.intern(&format!("c{}", (i * 37) % 101));
            peaks.push(ClientPeak { client, requests: r, peak_window: r, peak_second: 1 });
        }
        let mut stats = analyze(&table(), &settings()).overall;
        stats.peaks = peaks.clone();
        peaks.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| t.clients.name(a.client).cmp(t.clients.name(b.client)))
        });
        let want: Vec<(&str, ClientPeak)> = peaks
            .iter()
            .take(n)
            .map(|p| (t.clients.name(p.client), *p))
            .collect();
        proptest::prop_assert_eq!(top_clients(&t, &stats, n), want);
    }
}
