//! [`from_histograms`] against [`crate::stats::analyze`] on the same events: the
//! rows are computed here the way the SQL of `rlctl sql` groups them (GROUP BY
//! client, window; then GROUP BY count), by a plain independent count.

use std::collections::BTreeMap;

use super::*;
use crate::events::{Event, EventTable};
use crate::stats::{StatsSettings, analyze, top_clients};
use proptest::prelude::*;

/// The result tables of `rlctl sql`, computed by brute force.
fn sql_rows(t: &EventTable, window: Window, detail: usize) -> HistogramInput {
    let wms = window.millis();
    let mut per_client: BTreeMap<&str, ClientRow> = BTreeMap::new();
    let mut windows: BTreeMap<(Option<&str>, &str, i64), u64> = BTreeMap::new();
    let mut seconds: BTreeMap<(Option<&str>, &str, i64), u64> = BTreeMap::new();
    let mut endpoint_totals: BTreeMap<&str, (u64, Vec<&str>)> = BTreeMap::new();
    for i in 0..t.len() {
        let e = t.get(i);
        let (c, ep) = (t.clients.name(e.client), t.endpoints.name(e.endpoint));
        let row = per_client.entry(c).or_insert(ClientRow {
            client: c.into(),
            requests: 0,
            peak_window: 0,
            peak_second: 0,
            first_ts_ms: e.ts,
            status_429: 0,
            status_503: 0,
        });
        row.requests += 1;
        row.first_ts_ms = row.first_ts_ms.min(e.ts);
        row.status_429 += u64::from(e.status == 429);
        row.status_503 += u64::from(e.status == 503);
        for scope in [None, Some(ep)] {
            *windows.entry((scope, c, e.ts.div_euclid(wms))).or_default() += 1;
            *seconds
                .entry((scope, c, e.ts.div_euclid(1000)))
                .or_default() += 1;
        }
        let total = endpoint_totals.entry(ep).or_default();
        total.0 += 1;
        if !total.1.contains(&c) {
            total.1.push(c);
        }
    }
    let mut ranked: Vec<(&str, u64)> = endpoint_totals.iter().map(|(e, t)| (*e, t.0)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let top: Vec<&str> = ranked.iter().take(detail).map(|r| r.0).collect();
    let mut histograms: BTreeMap<(Option<&str>, bool, u64), u64> = BTreeMap::new();
    let mut pair_peaks: BTreeMap<(&str, &str), (u64, u64, u64)> = BTreeMap::new();
    for (per_window, counts) in [(true, &windows), (false, &seconds)] {
        for (&(scope, c, _), &n) in counts.iter() {
            if scope.is_some_and(|e| !top.contains(&e)) {
                continue;
            }
            *histograms.entry((scope, per_window, n)).or_default() += 1;
            match scope {
                None => {
                    let row = per_client.get_mut(c).unwrap();
                    let peak = if per_window {
                        &mut row.peak_window
                    } else {
                        &mut row.peak_second
                    };
                    *peak = (*peak).max(n);
                }
                Some(e) => {
                    let p = pair_peaks.entry((e, c)).or_default();
                    if per_window {
                        p.0 += n;
                        p.1 = p.1.max(n);
                    } else {
                        p.2 = p.2.max(n);
                    }
                }
            }
        }
    }
    HistogramInput {
        summary: SummaryRow {
            requests: t.len() as u64,
            clients: per_client.len() as u64,
            endpoints: endpoint_totals.len() as u64,
            first_ts_ms: t.span().map_or(0, |s| s.0),
            last_ts_ms: t.span().map_or(0, |s| s.1),
            window_s: window.secs(),
            subsecond: 0,
            detail_endpoints: detail as u64,
        },
        histograms: histograms
            .into_iter()
            .map(|((scope, per_window, n), samples)| HistogramRow {
                endpoint: scope.map(str::to_string),
                metric: if per_window {
                    Metric::PerWindow
                } else {
                    Metric::PerSecond
                },
                requests: n,
                samples,
            })
            .collect(),
        clients: per_client.into_values().collect(),
        endpoints: endpoint_totals
            .iter()
            .map(|(e, t)| EndpointRow {
                endpoint: e.to_string(),
                requests: t.0,
                clients: t.1.len() as u64,
            })
            .collect(),
        endpoint_clients: pair_peaks
            .into_iter()
            .map(
                |((e, c), (requests, peak_window, peak_second))| EndpointClientRow {
                    endpoint: e.into(),
                    client: c.into(),
                    requests,
                    peak_window,
                    peak_second,
                },
            )
            .collect(),
    }
}

fn table_of(rows: &[(i64, u8, u8, u16)]) -> EventTable {
    let mut t = EventTable::default();
    for &(ts, client, endpoint, status) in rows {
        let event = Event {
            ts,
            client: t.clients.intern(&format!("c{client}")),
            endpoint: t.endpoints.intern(&format!("GET /e{endpoint}")),
            status,
            ..Event::default()
        };
        t.push(event);
    }
    t.sort_by_time();
    t
}

/// Every figure of the two analyses, with client ids replaced by names.
fn figures(a: &Analysis, names: &Interner, shown: usize) -> String {
    let peaks = |s: &ScopeStats| -> Vec<(String, u64, u64, u64)> {
        let mut v: Vec<_> = s
            .peaks
            .iter()
            .map(|p| {
                let name = names.name(p.client).to_string();
                (name, p.requests, p.peak_window, p.peak_second)
            })
            .collect();
        v.sort();
        v
    };
    let mut out = format!(
        "{:?} {} {} {:?} {:?}\n",
        a.window,
        a.overall.requests,
        a.overall.clients,
        (a.overall.per_window, a.overall.per_second),
        (a.overall.client_peak_second, peaks(&a.overall)),
    );
    out.push_str(&format!("endpoints {}\n", a.endpoints.len()));
    for e in a.endpoints.iter().take(shown) {
        let s = &e.stats;
        out.push_str(&format!(
            "{} {} {} {:?} {:?} {:?} {:?}\n",
            e.endpoint,
            s.requests,
            s.clients,
            s.per_window,
            s.per_second,
            s.client_peak_second,
            peaks(s)
        ));
    }
    out.push_str(&format!("{:?}", a.status.clients));
    out
}

fn check(rows: &[(i64, u8, u8, u16)], window: &str, detail: usize) {
    let t = table_of(rows);
    let window: Window = window.parse().unwrap();
    let settings = StatsSettings {
        window,
        top: 5,
        exclude: vec![],
        keep_counts: false,
    };
    let direct = analyze(&t, &settings);
    let built = from_histograms(&sql_rows(&t, window, detail)).unwrap();
    let shown = detail.min(direct.endpoints.len());
    assert_eq!(built.detailed_endpoints, shown);
    assert_eq!(
        figures(&direct, &t.clients, shown),
        figures(&built.analysis, &built.clients, shown)
    );
    let tops = |a: &Analysis, names: &Interner| -> Vec<(String, u64)> {
        let fake = EventTable {
            clients: names.clone(),
            ..EventTable::default()
        };
        top_clients(&fake, &a.overall, 5)
            .into_iter()
            .map(|(n, p)| (n.to_string(), p.requests))
            .collect()
    };
    assert_eq!(
        tops(&direct, &t.clients),
        tops(&built.analysis, &built.clients)
    );
}

#[test]
fn hand_sized_log_gives_the_same_figures() {
    let rows = [
        (0, 0, 0, 200),
        (500, 0, 0, 200),
        (1_000, 0, 1, 429),
        (30_000, 1, 1, 429),
        (59_900, 0, 1, 200),
        (60_000, 0, 1, 503),
        (61_000, 2, 2, 200),
        (61_200, 0, 1, 200),
        (90_000, 1, 1, 429),
    ];
    check(&rows, "1m", 20);
    check(&rows, "10s", 2);
}

#[test]
fn counts_beyond_exact_hdr_buckets_still_agree() {
    // 3000 requests in one window (HDR keeps counts above 2047 in shared buckets).
    let mut rows: Vec<(i64, u8, u8, u16)> = (0..3000).map(|i| (i, 0, 0, 200)).collect();
    rows.push((70_000, 1, 1, 429));
    check(&rows, "1m", 5);
}

#[test]
fn mixed_tables_are_refused() {
    let t = table_of(&[(0, 0, 0, 200), (10, 1, 0, 200)]);
    let mut rows = sql_rows(&t, "1m".parse().unwrap(), 5);
    rows.summary.requests = 3;
    let err = from_histograms(&rows).unwrap_err().to_string();
    assert!(err.contains("same `rlctl sql` run"), "{err}");
    rows.summary.window_s = 0;
    assert!(from_histograms(&rows).is_err());
}

proptest! {
    #[test]
    fn any_log_gives_the_same_figures(
        rows in prop::collection::vec((0i64..400_000, 0u8..12, 0u8..5, prop::sample::select(vec![200u16, 429, 503])), 1..300),
        detail in 1usize..6,
        window in prop::sample::select(vec!["1s", "10s", "1m"]),
    ) {
        check(&rows, window, detail);
    }
}
