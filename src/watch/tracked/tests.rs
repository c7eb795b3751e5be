use super::*;
use crate::profile::Kind;

const MIN: Millis = 60_000;

fn minute() -> Tracked {
    Tracked::new(Window::from_secs(60).unwrap())
}

/// `n` requests of `key` in minute `m`, on `endpoint` with `status`.
fn burst(t: &mut Tracked, key: &str, m: i64, n: u64, endpoint: &str, status: u16) {
    for i in 0..n {
        t.observe(key, m * MIN + i as i64, endpoint, status);
    }
}

fn labels(p: &Profiled) -> Vec<Kind> {
    p.findings.iter().map(|f| f.kind).collect()
}

#[test]
fn a_runaway_loop_by_hand() {
    // The rule's first request in minute 0; the client enters the table with
    // its 11th request of minute 2 (10 were before it was tracked), then sends
    // 9 more in minute 2 and 20 in minutes 3 and 4: windows 2, 3, 4 hold
    // 20 requests each. Its 50 tracked requests: 41 on GET /api/search,
    // 6 on GET /b, 3 on GET /c; top two 47 of 50 = 94%.
    let mut t = minute();
    t.observe("quiet", 0, "GET /", 200);
    burst(&mut t, "r", 2, 10, "GET /api/search", 200); // not tracked yet
    t.start("r", 2 * MIN + 10, 11, "GET /api/search", 200);
    burst(&mut t, "r", 2, 9, "GET /api/search", 200);
    burst(&mut t, "r", 3, 14, "GET /api/search", 200);
    burst(&mut t, "r", 3, 6, "GET /b", 200);
    burst(&mut t, "r", 4, 17, "GET /api/search", 200);
    burst(&mut t, "r", 4, 3, "GET /c", 200);
    // At minute 19: 20 windows spanned (0..=19), 3 above T = 5 x 2 = 10,
    // in a row; 3 < 90% of 20, so not steady.
    let p = t.profile("r", 19 * MIN, 2).unwrap();
    assert_eq!(labels(&p), [Kind::RunawayLoop]);
    assert_eq!(p.peak_window, 20);
    assert_eq!(
        p.findings[0].evidence,
        "peak 20/1m; 3 windows in a row above 5 x p99 2 = 10/1m; \
         94% of its requests on GET /api/search, GET /b"
    );
    // With p99 4, T = 20: no window is above it.
    assert!(t.profile("r", 19 * MIN, 4).unwrap().findings.is_empty());
    // Still in minute 4, 5 windows spanned: above T in 3 of 5 (< 90%).
    assert_eq!(
        labels(&t.profile("r", 4 * MIN + 59_999, 2).unwrap()),
        [Kind::RunawayLoop]
    );
    // Clients not in the table have no profile.
    assert!(t.profile("quiet", 19 * MIN, 2).is_none());
}

#[test]
fn spread_over_many_endpoints_is_no_runaway_loop() {
    // Windows above T in a row, but 40% on its two busiest endpoints (< 80%).
    let mut t = minute();
    t.start("r", 0, 1, "GET /a", 200);
    burst(&mut t, "r", 0, 11, "GET /a", 200);
    burst(&mut t, "r", 1, 12, "GET /b", 200);
    burst(&mut t, "r", 2, 12, "GET /c", 200);
    burst(&mut t, "r", 2, 12, "GET /d", 200);
    burst(&mut t, "r", 3, 12, "GET /e", 200);
    // Windows 12, 12, 24, 12: 4 above T 10, in a row; 4 of 20 spanned.
    // Busiest: GET /a 12, then one of the others 12: 24 of 60 = 40%.
    let p = t.profile("r", 19 * MIN, 2).unwrap();
    assert!(p.findings.is_empty(), "{p:?}");
    assert_eq!(p.peak_window, 24);
}

#[test]
fn a_heavy_steady_client_by_hand() {
    // Tracked from its first request; 25 requests in each of minutes 0..=9.
    let mut t = minute();
    t.start("b", 0, 1, "GET /api/sync", 200);
    burst(&mut t, "b", 0, 24, "GET /api/sync", 200);
    for m in 1..10 {
        burst(&mut t, "b", m, 25, "GET /api/sync", 200);
    }
    // At minute 9: above T 10 in 10 of 10 windows (>= 90%, >= 3).
    let p = t.profile("b", 9 * MIN, 2).unwrap();
    assert_eq!(labels(&p), [Kind::HeavySteady]);
    assert_eq!(
        p.findings[0].evidence,
        "above 5 x p99 2 = 10/1m in 10 of 10 windows; peak 25/1m"
    );
    // At minute 10 (quiet): 10 of 11 = 91% still; at minute 11, 10 of 12 =
    // 83%: an episode, so a runaway loop (100% on one endpoint).
    assert_eq!(
        labels(&t.profile("b", 10 * MIN, 2).unwrap()),
        [Kind::HeavySteady]
    );
    assert_eq!(
        labels(&t.profile("b", 11 * MIN, 2).unwrap()),
        [Kind::RunawayLoop]
    );
}

#[test]
fn windows_older_than_an_hour_are_dropped() {
    let mut t = minute();
    t.start("b", 0, 1, "GET /", 200);
    for m in 0..10 {
        burst(&mut t, "b", m, 25, "GET /", 200);
    }
    // Minute 70: minutes 0..=10 are out of the hour (11..=70).
    let p = t.profile("b", 70 * MIN, 2).unwrap();
    assert_eq!((p.peak_window, p.findings.len()), (0, 0));
    // A request in minute 70 drops them from memory too.
    t.observe("b", 70 * MIN, "GET /", 200);
    assert_eq!(t.tracks["b"].windows, [(70, 1)]);
    // One hour of one-second windows is 3600 windows at most.
    let mut s = Tracked::new(Window::from_secs(1).unwrap());
    s.start("c", 0, 1, "GET /", 200);
    for i in 1..5000 {
        s.observe("c", i * 1000, "GET /", 200);
    }
    assert_eq!(s.tracks["c"].windows.len(), 3600);
}

#[test]
fn a_scanner_by_hand() {
    // 30 distinct paths answered 404, 10 answers 429 (not counted), 5 x 200.
    let mut t = minute();
    t.start("s", 0, 1, "GET /p0", 404);
    for i in 1..30 {
        t.observe("s", i, &format!("GET /p{i}"), 404);
    }
    for i in 0..10 {
        t.observe("s", 100 + i, "GET /login", 429);
    }
    for i in 0..5 {
        t.observe("s", 200 + i, "GET /", 200);
    }
    let p = t.profile("s", 0, 100).unwrap();
    assert_eq!(labels(&p), [Kind::Scanner]);
    assert_eq!(
        p.findings[0].evidence,
        "30 of 45 answers 4xx (67%, 429 not counted) on 30 distinct endpoints"
    );
    // 19 distinct endpoints are not enough.
    let mut t = minute();
    t.start("s", 0, 1, "GET /p0", 404);
    for i in 1..40 {
        t.observe("s", i, &format!("GET /p{}", i % 19), 404);
    }
    assert!(t.profile("s", 0, 100).unwrap().findings.is_empty());
}

#[test]
fn forgotten_clients_have_no_profile() {
    let mut t = minute();
    t.start("a", 0, 1, "GET /", 200);
    assert_eq!(t.len(), 1);
    t.forget("a");
    assert!(t.is_empty() && t.profile("a", 0, 1).is_none());
}
