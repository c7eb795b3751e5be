//! Hand-worked summaries: totals, clients, endpoints, minutes, the boundary
//! effect, delay percentiles and the JSON fields.

use super::*;
use crate::simulate::{Replayer, Rule};

struct Fixture {
    ts: Vec<Millis>,
    client: Vec<u32>,
    endpoint: Vec<u32>,
    clients: Interner,
    endpoints: Interner,
}

impl Fixture {
    /// Events as (time, client name, endpoint name), sorted by time.
    fn new(events: &[(Millis, &str, &str)]) -> Self {
        let mut f = Fixture {
            ts: Vec::new(),
            client: Vec::new(),
            endpoint: Vec::new(),
            clients: Interner::default(),
            endpoints: Interner::default(),
        };
        for &(t, c, e) in events {
            f.ts.push(t);
            f.client.push(f.clients.intern(c));
            f.endpoint.push(f.endpoints.intern(e));
        }
        f
    }

    fn traffic(&self) -> Traffic<'_> {
        Traffic {
            ts: &self.ts,
            client: &self.client,
            endpoint: &self.endpoint,
            client_names: &self.clients,
            endpoint_names: &self.endpoints,
            by_client: None,
            census: None,
        }
    }

    fn run(&self, spec: &AlgorithmSpec) -> Summary {
        let limiter = spec.limiter().unwrap();
        let rules = [Rule {
            limiter: limiter.clone(),
            keys: &self.client,
            key_count: self.clients.len(),
        }];
        let mut replayer = Replayer::new(&self.ts);
        let out = replayer.replay(&rules).unwrap();
        let summary = |by_client| {
            let traffic = Traffic {
                by_client,
                ..self.traffic()
            };
            summarize(
                spec,
                &limiter,
                &traffic,
                &out.allowed,
                out.delay_ms.as_deref(),
                10,
            )
        };
        // Passes over the events in time order and client by client agree.
        let by_client = replayer.grouped_by(&self.client);
        assert!(by_client.is_some(), "the replay grouped by client");
        let in_time_order = summary(None);
        assert_eq!(in_time_order, summary(by_client));
        // And with the decisions in that order, as the replay kept them.
        let grouped_allowed = out.grouped_allowed.as_deref();
        assert!(
            grouped_allowed.is_some(),
            "the replay kept its decisions grouped"
        );
        let with_decisions = by_client.map(|b| ByClient {
            allowed: grouped_allowed,
            ..b
        });
        assert_eq!(in_time_order, summary(with_decisions));
        in_time_order
    }
}

pub(super) fn spec(text: &str, limit: &str) -> AlgorithmSpec {
    AlgorithmSpec::new(text.parse().unwrap(), limit.parse().unwrap())
}

#[test]
fn counts_clients_endpoints_and_minutes() {
    // fixed-window 2/1m per client.
    //   a: t=0 /x, 1 /x, 2 /y (rejected), 60_000 /y, 60_001 /x, 60_002 /x (rejected)
    //   b: t=5 /x  (admitted)
    let f = Fixture::new(&[
        (0, "a", "/x"),
        (1, "a", "/x"),
        (2, "a", "/y"),
        (5, "b", "/x"),
        (60_000, "a", "/y"),
        (60_001, "a", "/x"),
        (60_002, "a", "/x"),
    ]);
    let s = f.run(&spec("fixed-window", "2/1m"));
    assert_eq!(
        (s.totals.requests, s.totals.allowed, s.totals.rejected),
        (7, 5, 2)
    );
    assert_eq!(s.totals.allowed + s.totals.rejected, s.totals.requests);
    assert!((s.totals.reject_rate - 2.0 / 7.0).abs() < 1e-12);
    assert_eq!((s.totals.clients, s.totals.clients_rejected), (2, 1));
    assert_eq!(s.totals.clients_rejected_share, 0.5);
    let by_endpoint: Vec<(&str, u64, u64)> = s
        .totals
        .rejected_by_endpoint
        .iter()
        .map(|r| (r.name.as_str(), r.requests, r.rejected))
        .collect();
    assert_eq!(by_endpoint, vec![("/x", 5, 1), ("/y", 2, 1)]);
    assert_eq!(s.totals.top_rejected_clients.len(), 1);
    assert_eq!(s.totals.top_rejected_clients[0].name, "a");
    assert_eq!(
        (
            s.totals.top_rejected_clients[0].requests,
            s.totals.top_rejected_clients[0].rejected
        ),
        (6, 2)
    );
    let minutes: Vec<(Millis, u64)> = s
        .totals
        .rejects_per_minute
        .iter()
        .map(|m| (m.minute, m.rejected))
        .collect();
    assert_eq!(minutes, vec![(0, 1), (60_000, 1)]);
    assert_eq!(s.delays, None);
}

#[test]
fn boundary_effect_of_the_fixed_window() {
    // fixed-window 3/1m: 3 at the end of minute 0 and 3 at the start of minute 1
    // are all admitted, 6 = 2L within 2 s. The sliding log admits only 3.
    let mut events: Vec<(Millis, &str, &str)> = (0..3).map(|i| (59_000 + i, "c", "/")).collect();
    events.extend((0..3).map(|i| (60_000 + i, "c", "/")));
    events.push((61_000, "d", "/"));
    let f = Fixture::new(&events);
    let fw = f.run(&spec("fixed-window", "3/1m"));
    assert_eq!(fw.boundary.max_admitted, 6);
    assert_eq!(fw.boundary.ratio, 2.0);
    assert_eq!(fw.boundary.client.as_deref(), Some("c"));
    assert_eq!(fw.boundary.span_end, Some(60_002));
    let log = f.run(&spec("sliding-log", "3/1m"));
    assert_eq!(log.boundary.max_admitted, 3);
    assert_eq!(log.totals.rejected, 3);
}

#[test]
fn delay_percentiles_and_json_fields() {
    // leaky-bucket 5r/s burst=3 (delay=0): four requests at once: delays 0, 200,
    // 400, 600; the fifth is rejected. Nearest rank: p50 = 2nd = 200, p99 = 4th = 600.
    let f = Fixture::new(&[
        (0, "a", "/"),
        (0, "a", "/"),
        (0, "a", "/"),
        (0, "a", "/"),
        (0, "a", "/"),
    ]);
    let mut s = spec("leaky-bucket", "5r/s");
    s.burst = Some(3);
    let summary = f.run(&s);
    assert_eq!(
        summary.delays,
        Some(DelayStats {
            delayed: 3,
            p50_ms: 200,
            p99_ms: 600,
            max_ms: 600
        })
    );
    assert_eq!(summary.instant_capacity, 4);
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["algo"], "leaky-bucket");
    assert_eq!(json["limit"], "5/1s");
    assert_eq!(json["window_s"], 1);
    assert_eq!(json["burst"], 3);
    for field in [
        "requests",
        "allowed",
        "rejected",
        "reject_rate",
        "clients",
        "clients_rejected",
    ] {
        assert!(json.get(field).is_some(), "{field}");
    }
    assert_eq!(json["rejected"], 1);
}

#[test]
fn empty_input() {
    let f = Fixture::new(&[]);
    let s = f.run(&spec("gcra", "1/1s"));
    assert_eq!(
        (s.totals.requests, s.totals.clients, s.totals.reject_rate),
        (0, 0, 0.0)
    );
    assert_eq!(s.boundary.max_admitted, 0);
    assert_eq!(s.boundary.client, None);
}

/// The boundary effect as defined: two pointers over each client's admitted
/// times in turn, clients in name order, the first largest count winning.
pub(super) fn boundary_by_clients(
    window: Millis,
    traffic: &Traffic,
    allowed: &[bool],
) -> Option<(u64, String, Millis)> {
    let ids = traffic.client.iter().map(|&c| c as usize + 1).max();
    let ids = ids.unwrap_or(0).max(traffic.client_names.len());
    let groups = crate::events::group_rows(traffic.client, ids);
    let mut best: Option<(u64, usize, Millis)> = None;
    let names = traffic.client_names;
    let mut clients: Vec<usize> = (0..groups.len()).collect();
    clients.sort_by_key(|&c| ((c < names.len()).then(|| names.name(c as u32)), c));
    for client in clients {
        let times: Vec<Millis> = groups
            .rows(client)
            .iter()
            .map(|&r| r as usize)
            .filter(|&r| allowed[r])
            .map(|r| traffic.ts[r])
            .collect();
        let mut first = 0;
        for (last, &t) in times.iter().enumerate() {
            while times[first] <= t - window {
                first += 1;
            }
            let count = (last - first + 1) as u64;
            if best.is_none_or(|(most, _, _)| count > most) {
                best = Some((count, client, t));
            }
        }
    }
    best.map(|(n, c, t)| (n, name_of(traffic.client_names, c), t))
}

/// Delay percentiles by sorting.
fn delays_by_sorting(delay_ms: &[u64], allowed: &[bool]) -> (u64, u64, u64, u64) {
    let mut delays: Vec<u64> = delay_ms
        .iter()
        .zip(allowed)
        .filter(|p| *p.1)
        .map(|p| *p.0)
        .collect();
    delays.sort_unstable();
    let rank = |p: usize| {
        delays
            .get((p * delays.len()).div_ceil(100).max(1) - 1)
            .copied()
            .unwrap_or(0)
    };
    let delayed = delays.iter().filter(|&&d| d > 0).count() as u64;
    (
        delayed,
        rank(50),
        rank(99),
        delays.last().copied().unwrap_or(0),
    )
}

proptest::proptest! {
    #[test]
    fn one_pass_boundary_and_selected_delays_match_their_definitions(
        events in proptest::collection::vec((0i64..20_000, 0usize..4, proptest::bool::weighted(0.8), 0u64..100), 0..200),
        window in 1u32..6,
    ) {
        let mut events = events;
        events.sort_by_key(|e| e.0);
        let names = ["a", "b", "c", "d"];
        let rows: Vec<(Millis, &str, &str)> = events.iter().map(|e| (e.0, names[e.1], "/x")).collect();
        let f = Fixture::new(&rows);
        let allowed: Vec<bool> = events.iter().map(|e| e.2).collect();
        // About half the delays 0, as when most requests pass undelayed.
        let delays: Vec<u64> = events.iter().map(|e| e.3.saturating_sub(50)).collect();
        let spec = AlgorithmSpec::new(AlgorithmKind::FixedWindow, format!("5/{window}s").parse().unwrap());
        let got = boundary::boundary_effect(&spec, &f.traffic(), &allowed, None);
        let want = boundary_by_clients(spec.limit.window.millis(), &f.traffic(), &allowed);
        proptest::prop_assert_eq!(
            (got.max_admitted, got.client.clone(), got.span_end),
            match want {
                Some((n, c, t)) => (n, Some(c), Some(t)),
                None => (0, None, None),
            }
        );
        let d = delay_stats(&delays, &allowed);
        proptest::prop_assert_eq!((d.delayed, d.p50_ms, d.p99_ms, d.max_ms), delays_by_sorting(&delays, &allowed));
    }
}
