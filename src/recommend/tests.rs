use super::*;
use crate::events::Event;
use crate::stats::{StatsSettings, analyze};

/// 1000 quiet clients with 1..=10 requests in one minute (spread over seconds),
/// and one runaway with 500 requests in a minute, 50 of them in one second.
fn table() -> EventTable {
    let mut t = EventTable::default();
    let e = t.endpoints.intern("GET /x");
    for c in 0..1000u32 {
        let id = t.clients.intern(&format!("c{c}"));
        for r in 0..(c % 10 + 1) {
            t.push(Event {
                ts: i64::from(r) * 5_000,
                client: id,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
        }
    }
    let bad = t.clients.intern("runaway");
    for r in 0..500 {
        let ts = if r < 50 { 1_000 } else { 2_000 + r * 100 };
        t.push(Event {
            ts,
            client: bad,
            endpoint: e,
            status: 200,
            ..Event::default()
        });
    }
    t.sort_by_time();
    t
}

#[test]
fn limit_burst_and_flags_by_hand() {
    let t = table();
    let s = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    };
    let a = analyze(&t, &s);
    // 1001 samples: 100 each of 1..=10, plus 500. rank ceil(0.999*1001) = 1000 → 10.
    assert_eq!(a.overall.per_window.p999, 10);
    let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
    assert_eq!((r.limit, r.rate.as_str()), (40, "40/1m"));
    // quiet clients peak at 1 per second; floor = ceil(10 s * 40 / 60 s) = 7.
    assert_eq!((r.normal_peak_second, r.burst_floor, r.burst), (1, 7, 7));
    assert_eq!(r.flagged_count, 1);
    assert_eq!(r.flagged[0].client, "runaway");
    assert_eq!(r.flagged[0].peak_second, 50);
    let limits: Vec<(u64, u64)> = r
        .alternatives
        .iter()
        .map(|a| (a.limit, a.clients_over))
        .collect();
    assert_eq!(limits, vec![(30, 1), (40, 1), (50, 1)]);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn a_huge_multiplier_saturates_instead_of_overflowing() {
    // Found by review: --multiplier 1e300 overflowed the burst arithmetic.
    let t = table();
    let s = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    };
    let a = analyze(&t, &s);
    let r = recommend(&t, &a.overall, s.window, 1e300).unwrap();
    assert_eq!(r.limit, u64::MAX);
    assert_eq!(r.burst_floor, u64::MAX.div_ceil(60));
    assert_eq!(r.flagged_count, 0);
}

#[test]
fn excluding_the_runaway_changes_nothing_but_the_flag() {
    let t = table();
    let s = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec!["runaway".into()],
        keep_counts: false,
    };
    let a = analyze(&t, &s);
    let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
    assert_eq!((r.limit, r.flagged_count), (40, 0));
}

#[test]
fn a_steep_tail_is_called_out() {
    let mut t = EventTable::default();
    let e = t.endpoints.intern("GET /x");
    // 998 clients with one request and two with 100: of 1000 samples, p99 is the
    // 990th (1) and p99.9 the 999th (100).
    for c in 0..998u32 {
        let id = t.clients.intern(&format!("c{c}"));
        t.push(Event {
            ts: 0,
            client: id,
            endpoint: e,
            status: 200,
            ..Event::default()
        });
    }
    for heavy in ["h1", "h2"] {
        let id = t.clients.intern(heavy);
        for r in 0..100 {
            t.push(Event {
                ts: r * 100,
                client: id,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
        }
    }
    t.sort_by_time();
    let s = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    };
    let a = analyze(&t, &s);
    assert_eq!(
        (a.overall.per_window.p99, a.overall.per_window.p999),
        (1, 100)
    );
    let r = recommend(&t, &a.overall, s.window, 4.0).unwrap();
    assert!(
        r.warnings.iter().any(|w| w.contains("tail is steep")),
        "{:?}",
        r.warnings
    );
}

#[test]
fn no_traffic_no_recommendation() {
    let t = EventTable::default();
    let s = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    };
    assert!(recommend(&t, &analyze(&t, &s).overall, s.window, 4.0).is_none());
}

#[test]
fn a_decimal_multiplier_is_taken_as_written() {
    // Found by review: 4.4 x 25 was ceil(110.00000000000001) = 111.
    for (multiplier, basis, limit) in [
        (4.4, 25, 110),
        (4.9, 50, 245),
        (2.7, 90, 243),
        (4.4, 90, 396),
        (0.1, 10, 1),
        (0.3, 10, 3),
        (4.0, 87, 348),
        (3.5, 3, 11),
        (0.001, 1, 1),
        (1e6, 1 << 20, 1_048_576_000_000),
    ] {
        assert_eq!(limit_at(multiplier, basis), limit, "{multiplier} x {basis}");
    }
    assert_eq!(limit_at(1e6, u64::MAX), u64::MAX);
}

proptest::proptest! {
    /// The limit is the least whole number at or above the product of the
    /// multiplier as written (tenths and hundredths here) and the basis.
    #[test]
    fn the_limit_is_the_exact_ceiling(hundredths in 1u64..100_000, basis in 1u64..1_000_000) {
        let multiplier: f64 = format!("{}.{:02}", hundredths / 100, hundredths % 100).parse().unwrap();
        let exact = (hundredths * basis).div_ceil(100).max(1);
        proptest::prop_assert_eq!(limit_at(multiplier, basis), exact);
    }
}
