//! Hand-worked expectations for the statistics.

use super::*;
use crate::events::Event;

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
