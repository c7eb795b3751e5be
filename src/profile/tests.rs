use super::*;
use crate::events::{Event, EventTable, KeyColumn, NO_KEY};
use crate::stats::{StatsSettings, analyze};

/// A table under construction, with user-agent and user columns.
pub(super) struct Builder {
    pub(super) t: EventTable,
}

impl Builder {
    pub(super) fn new() -> Self {
        let t = EventTable {
            extra_keys: vec![KeyColumn::default(), KeyColumn::default()],
            ..EventTable::default()
        };
        Builder { t }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        ts: i64,
        client: &str,
        endpoint: &str,
        status: u16,
        agent: &str,
        user: &str,
    ) {
        let t = &mut self.t;
        let client = t.clients.intern(client);
        let endpoint = t.endpoints.intern(endpoint);
        t.push(Event {
            ts,
            client,
            endpoint,
            status,
            ..Event::default()
        });
        for (column, value) in t.extra_keys.iter_mut().zip([agent, user]) {
            let id = if value.is_empty() {
                NO_KEY
            } else {
                column.names.intern(value)
            };
            column.ids.push(id);
        }
    }

    /// `n` requests spread over minute `w`, each moved by up to half its
    /// share of the minute (so that ordinary traffic is not periodic).
    fn minute(&mut self, w: i64, n: i64, client: &str, endpoint: &str, agent: &str) {
        let slot = 60_000 / n;
        for k in 0..n {
            let jitter = jitter(w * 1_000 + k) % (slot / 2 + 1);
            self.push(
                w * 60_000 + k * slot + jitter,
                client,
                endpoint,
                200,
                agent,
                "",
            );
        }
    }

    fn finish(mut self) -> EventTable {
        self.t.sort_by_time(); // permutes the extra columns with the rest

        self.t
    }
}

/// A fixed scramble of `x`, for jitter.
fn jitter(x: i64) -> i64 {
    (x.wrapping_mul(0x9E37_79B9) ^ (x >> 3)).rem_euclid(1 << 20)
}

const COLUMNS: ProfileColumns = ProfileColumns {
    user_agent: Some(0),
    user: Some(1),
};

/// 30 ordinary clients at 10 a minute for 20 minutes, and the cast.
fn traffic() -> EventTable {
    let mut b = Builder::new();
    for w in 0..20 {
        for c in 0..30 {
            b.minute(w, 10, &format!("user{c:02}"), "GET /a", "Mozilla/5.0 (X11)");
        }
        // runaway: 10 a minute, then 600 a minute in minutes 5 to 9.
        let n = if (5..10).contains(&w) { 600 } else { 10 };
        b.minute(w, n, "runaway", "POST /orders", "python-requests/2.31");
        // batch: 300 a minute all along.
        b.minute(w, 300, "batch", "POST /import", "importer/1.0");
        // nat: 30 a minute from 12 browsers and 6 users.
        for k in 0..30 {
            let agent = format!("Mozilla/5.0 (browser {})", (w * 30 + k) % 12);
            let user = format!("u{}", k % 6);
            let at = w * 60_000 + k * 2_000 + jitter(w * 100 + k) % 1_500;
            b.push(at, "nat", "GET /a", 200, &agent, &user);
        }
        // mon: GET /health every 10 s.
        for k in 0..6 {
            b.push(
                w * 60_000 + k * 10_000 + 2,
                "mon",
                "GET /health",
                200,
                "kube-probe/1.29",
                "",
            );
        }
        // crawler: 5 a minute as Googlebot.
        b.minute(
            w,
            5,
            "crawler",
            "GET /products/:id",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        );
        // scanner: in minute 0, 40 distinct paths answered 404, and 10 answered 200.
        if w == 0 {
            for k in 0..50 {
                let (endpoint, status) = if k < 40 {
                    (format!("GET /probe{k}"), 404)
                } else {
                    ("GET /".to_string(), 200)
                };
                b.push(k * 1_000 + 3, "scanner", &endpoint, status, "zgrab/0.x", "");
            }
        }
        // limited: 40 requests a minute on one endpoint, 30 of them answered 429.
        for k in 0..40 {
            let status = if k < 30 { 429 } else { 200 };
            b.push(
                w * 60_000 + k * 1_000 + 4,
                "limited",
                "GET /b",
                status,
                "curl/8",
                "",
            );
        }
    }
    b.finish()
}

fn settings_1m() -> StatsSettings {
    StatsSettings {
        window: "1m".parse().unwrap(),
        top: 5,
        exclude: vec![],
        keep_counts: false,
    }
}

fn profiles(t: &EventTable, reviewed: &[&str]) -> Vec<ClientProfile> {
    let a = analyze(t, &settings_1m());
    let ids: Vec<Id> = reviewed.iter().map(|c| t.clients.get(c).unwrap()).collect();
    // Baseline p99 by hand: 20, so runs are counted above 100 a minute.
    profile_clients(t, &a, COLUMNS, &ids, 20, None)
}

fn kinds(p: &ClientProfile) -> Vec<Kind> {
    p.findings.iter().map(|f| f.kind).collect()
}

fn find<'a>(ps: &'a [ClientProfile], client: &str) -> &'a ClientProfile {
    ps.iter()
        .find(|p| p.client == client)
        .unwrap_or_else(|| panic!("{client} not profiled"))
}

#[test]
fn every_kind_by_hand() {
    let t = traffic();
    let ps = profiles(&t, &["runaway", "batch", "nat", "user00"]);
    // Reviewed clients first, in the order given.
    let order: Vec<&str> = ps.iter().map(|p| p.client.as_str()).collect();
    assert_eq!(&order[..4], &["runaway", "batch", "nat", "user00"]);

    let runaway = find(&ps, "runaway");
    assert_eq!(kinds(runaway), vec![Kind::RunawayLoop]);
    assert_eq!(
        runaway.findings[0].evidence,
        "peak 600/1m; 5 windows in a row above 5 x p99 20 = 100/1m; 100% of its requests on POST /orders"
    );

    let batch = find(&ps, "batch");
    assert_eq!(kinds(batch), vec![Kind::HeavySteady]);
    assert_eq!(
        batch.findings[0].evidence,
        "above 5 x p99 20 = 100/1m in 20 of 20 windows; peak 300/1m"
    );

    let nat = find(&ps, "nat");
    assert_eq!(kinds(nat), vec![Kind::SharedAddress]);
    assert_eq!(
        nat.findings[0].evidence,
        "12 user agents, 6 users behind one key"
    );
    assert!(nat.findings[0].suggestion.contains("ip+user"));

    // An ordinary reviewed client matches nothing, and says so by an empty list.
    assert!(find(&ps, "user00").findings.is_empty());

    let mon = find(&ps, "mon");
    assert!(!mon.reviewed);
    assert_eq!(kinds(mon), vec![Kind::PeriodicProbe]);
    assert_eq!(
        mon.findings[0].evidence,
        "a request every 10.0 s (variation 0%) on GET /health, 120 requests"
    );
    assert!(mon.findings[0].suggestion.contains("exempt = true"));

    let crawler = find(&ps, "crawler");
    assert_eq!(kinds(crawler), vec![Kind::Crawler]);
    assert!(crawler.findings[0].evidence.contains("Googlebot/2.1"));
    assert!(
        crawler.findings[0]
            .evidence
            .ends_with("on 100% of 100 requests")
    );

    let scanner = find(&ps, "scanner");
    assert_eq!(kinds(scanner), vec![Kind::Scanner]);
    assert_eq!(
        scanner.findings[0].evidence,
        "40 of 50 answers 4xx (80%, 429 not counted) on 40 distinct endpoints"
    );

    // 429s are a limiter's answers, not a scan; ordinary clients are not listed.
    assert!(ps.iter().all(|p| p.client != "limited"));
    assert!(ps.iter().all(|p| p.client != "user01"));
}

#[test]
fn near_misses_match_nothing() {
    let mut b = Builder::new();
    // 9 user agents (one below the threshold), 4 users.
    for k in 0..36 {
        let agent = format!("agent {}", k % 9);
        let user = format!("u{}", k % 4);
        b.push(
            k * 1_000 + jitter(k) % 900,
            "office",
            "GET /a",
            200,
            &agent,
            &user,
        );
    }
    // A probe whose gaps alternate 5 s and 15 s (variation 50%).
    for k in 0..40 {
        b.push(
            k * 10_000 + if k % 2 == 0 { 0 } else { -5_000 } + 100_000,
            "jittery",
            "GET /health",
            200,
            "",
            "",
        );
    }
    // 19 distinct endpoints answered 404: one short of a scanner.
    for k in 0..19 {
        b.push(500_000 + k, "prober", &format!("GET /p{k}"), 404, "", "");
    }
    // Googlebot on a third of the requests only.
    for k in 0..30 {
        let agent = if k % 3 == 0 {
            "Googlebot/2.1"
        } else {
            "Mozilla/5.0"
        };
        b.push(600_000 + k * 10, "mixed", "GET /c", 200, agent, "");
    }
    let t = b.finish();
    let ps = profiles(&t, &["office"]);
    assert!(find(&ps, "office").findings.is_empty());
    assert_eq!(ps.len(), 1, "{ps:?}");
}

#[test]
fn crawler_tokens_match_case_insensitively() {
    assert!(crawler::is_crawler("Mozilla/5.0 (compatible; bingbot/2.0)"));
    assert!(crawler::is_crawler("GOOGLEBOT"));
    assert!(!crawler::is_crawler("Mozilla/5.0 (Windows NT 10.0)"));
}

/// Found by review: discovery folded a scanner's thousands of paths into two
/// templates, so its pace also read as a runaway loop on those two (and as a
/// probe): a scanner is named a scanner only.
#[test]
fn a_fast_scanner_folded_into_few_templates_is_a_scanner_only() {
    let mut b = Builder::new();
    for w in 0..5 {
        for k in 0..150 {
            let endpoint = ["GET /:name", "GET /:name/admin"][(k % 2) as usize];
            b.push(w * 60_000 + k * 400, "scan", endpoint, 404, "zgrab", "");
        }
    }
    for k in 0..40 {
        b.push(k * 30_000 + 11, "user", "GET /a", 200, "curl/8", "");
    }
    let t = b.finish();
    let a = analyze(&t, &settings_1m());
    let scan = t.clients.get("scan").unwrap();
    // Before templates folded them, 750 distinct paths answered it 404.
    let mut error_endpoints = vec![0; t.clients.len()];
    error_endpoints[scan as usize] = 750;
    let ps = profile_clients(&t, &a, COLUMNS, &[scan], 20, Some(&error_endpoints));
    assert_eq!(kinds(find(&ps, "scan")), vec![Kind::Scanner]);
    // Without the 4xx evidence, the same client is a loop on two endpoints.
    let ps = profile_clients(&t, &a, COLUMNS, &[scan], 20, None);
    assert_eq!(kinds(find(&ps, "scan")), vec![Kind::RunawayLoop]);
}

#[test]
fn a_probe_on_a_template_is_exempted_by_client_not_by_its_route() {
    let literal = periodic::exemption("GET /healthz");
    assert!(
        literal.contains("for this client or route GET /healthz"),
        "{literal}"
    );
    let template = periodic::exemption("GET /:name");
    assert!(template.contains("exempt this client"), "{template}");
    assert!(template.contains("not the route GET /:name"), "{template}");
}
