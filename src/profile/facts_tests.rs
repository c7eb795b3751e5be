//! The facts gathered client after client equal those of one pass over the
//! table in time order with sets of (client, value) pairs (the reference
//! below), whatever the clients, their interleaving, the excluded ones and
//! the threads.

use rustc_hash::{FxHashMap, FxHashSet};

use super::facts::{ClientFacts, GapStats, ProfileColumns, TOP_ENDPOINTS, map_clients_indexing};
use super::facts_pairs::PairCounting;
use super::facts_ranges::Sources;
use super::tests::Builder;
use crate::events::{EventTable, Id, NO_KEY};
use crate::stats::by_client::RowBounds;
use crate::stats::{Analysis, StatsSettings, analyze};

/// The facts of every client (indexed by client id; excluded clients have
/// none): one pass over the table in time order, with sets of pairs.
fn gather(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
) -> Vec<ClientFacts> {
    let mut facts = vec![ClientFacts::default(); table.clients.len()];
    for p in &analysis.overall.peaks {
        facts[p.client as usize].requests = p.requests;
    }
    // Requests per client and endpoint, counted from the table: the analysis
    // keeps per-endpoint detail only for the endpoints it reports, and a
    // client's busiest endpoint (a probe's /health) may not be among them.
    let mut per_endpoint: rustc_hash::FxHashMap<(Id, Id), u64> = Default::default();
    for row in 0..table.len() {
        let c = table.client[row];
        if facts[c as usize].requests > 0 {
            *per_endpoint.entry((c, table.endpoint[row])).or_insert(0) += 1;
        }
    }
    for ((c, e), n) in per_endpoint {
        facts[c as usize].endpoints.push((e, n));
    }
    let mut top = vec![NO_KEY; facts.len()];
    for (c, f) in facts.iter_mut().enumerate() {
        f.endpoints
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        f.endpoints.truncate(TOP_ENDPOINTS);
        if let Some(&(e, _)) = f.endpoints.first() {
            top[c] = e;
        }
    }
    let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
    let users = columns.user.map(|i| &table.extra_keys[i]);
    let crawler: Vec<bool> =
        agents.map_or_else(Vec::new, |col| col.names.names().map(&is_crawler).collect());
    let mut agent_pairs: FxHashSet<(Id, Id)> = FxHashSet::default();
    let mut user_pairs: FxHashSet<(Id, Id)> = FxHashSet::default();
    let mut error_pairs: FxHashSet<(Id, Id)> = FxHashSet::default();
    let mut gaps = vec![GapStats::default(); facts.len()];
    for row in 0..table.len() {
        let c = table.client[row];
        let f = &mut facts[c as usize];
        if f.requests == 0 {
            continue; // excluded
        }
        if let Some(col) = agents {
            let ua = col.ids[row];
            if ua != NO_KEY {
                f.first_user_agent.get_or_insert(ua);
                if agent_pairs.insert((c, ua)) {
                    f.distinct_user_agents += 1;
                }
                if crawler[ua as usize] {
                    f.crawler_requests += 1;
                    f.crawler_agent.get_or_insert(ua);
                }
            }
        }
        if let Some(col) = users {
            let u = col.ids[row];
            if u != NO_KEY && user_pairs.insert((c, u)) {
                f.distinct_users += 1;
            }
        }
        let e = table.endpoint[row];
        let status = table.status[row];
        if (400..500).contains(&status) && status != 429 {
            f.client_errors += 1;
            if error_pairs.insert((c, e)) {
                f.client_error_endpoints += 1;
            }
        }
        if e == top[c as usize] {
            gaps[c as usize].add(table.ts[row]);
        }
    }
    for (f, g) in facts.iter_mut().zip(&gaps) {
        (f.gaps, f.gap_mean_ms, f.gap_cv) = g.summary();
    }
    facts
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    #[test]
    fn facts_client_by_client_equal_one_pass_over_the_table(
        rows in proptest::collection::vec(
            (0i64..600_000, 0u32..12, 0u32..6, 0usize..4, 0u32..4, 0u32..3),
            1..300,
        ),
        excluded in proptest::option::of(0u32..12),
        threads in 1usize..4,
        indexed_rows in proptest::sample::select(vec![1usize, 20, 1 << 20]),
        group_rows in proptest::sample::select(vec![1usize, 7, 1 << 20]),
        per_group in proptest::sample::select(vec![None, Some(1usize), Some(3)]),
        counting in proptest::sample::select(vec![None, Some(PairCounting::Dense), Some(PairCounting::Sorted)]),
    ) {
        let (t, analysis) = table_of(rows, excluded);
        let expected = gather(&t, &analysis, COLUMNS, is_crawler);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let pairs = pool.install(|| {
            map_clients_indexing(&t, &analysis, COLUMNS, is_crawler, |c, f| Some((c, f)), (RowBounds { indexed: indexed_rows, group: group_rows }, per_group, counting))
        });
        check(&t, &analysis, pairs, &expected)?;
    }

    /// Read by ranges of rows (up to more ranges than rows), the same facts.
    #[test]
    fn facts_by_ranges_of_rows_equal_one_pass_over_the_table(
        rows in proptest::collection::vec(
            (-100_000i64..600_000, 0u32..12, 0u32..6, 0usize..4, 0u32..4, 0u32..3),
            1..300,
        ),
        excluded in proptest::option::of(0u32..12),
        threads in 1usize..4,
        ranges in 1usize..30,
    ) {
        let (t, analysis) = table_of(rows, excluded);
        let expected = gather(&t, &analysis, COLUMNS, is_crawler);
        let agents = &t.extra_keys[0];
        let crawler: Vec<bool> = agents.names.names().map(is_crawler).collect();
        let sources = Sources { agents: Some(agents), users: Some(&t.extra_keys[1]), crawler: &crawler };
        let requests = super::facts::client_requests(&t, &analysis);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let pairs = pool.install(|| {
            super::facts_ranges::map_clients(&t, &requests, &sources, ranges, |c, f| Some((c, f)))
        });
        check(&t, &analysis, pairs, &expected)?;
    }
}

proptest::proptest! {
    /// Keeping the busiest endpoints one at a time keeps the head of the
    /// whole list sorted most requests first, ties by endpoint id.
    #[test]
    fn the_busiest_endpoints_kept_are_the_head_of_the_sorted_list(
        requests in proptest::collection::vec(1u64..5, 0..40),
        order in proptest::collection::vec(proptest::num::u32::ANY, 40),
    ) {
        // Endpoint ids in an order unrelated to their requests.
        let mut pairs: Vec<(Id, u64)> = requests.iter().enumerate().map(|(i, &n)| (i as Id, n)).collect();
        pairs.sort_by_key(|&(e, _)| order[e as usize]);
        let mut kept = Vec::new();
        for &(e, n) in &pairs {
            super::facts::keep_busiest(&mut kept, e, n);
        }
        pairs.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        pairs.truncate(TOP_ENDPOINTS);
        proptest::prop_assert_eq!(kept, pairs);
    }
}

const COLUMNS: ProfileColumns = ProfileColumns {
    user_agent: Some(0),
    user: Some(1),
};

fn is_crawler(ua: &str) -> bool {
    ua.contains("bot")
}

/// A table of `rows` (time, client, endpoint, status, user agent, user), put
/// in time order, and its analysis with client `excluded` left out.
fn table_of(
    mut rows: Vec<(i64, u32, u32, usize, u32, u32)>,
    excluded: Option<u32>,
) -> (EventTable, Analysis) {
    let mut table = Builder::new();
    rows.sort_by_key(|r| r.0);
    for (ts, client, endpoint, status, agent, user) in rows {
        // Agent 0 and user 0: no value; agent 3 is a crawler's.
        let agent = ["", "curl/8", "Mozilla/5.0", "Googlebot/2.1"][agent as usize];
        let user = ["", "ann", "bob"][user as usize];
        let (client, endpoint) = (format!("c{client}"), format!("GET /{endpoint}"));
        let status = [200, 404, 429, 451][status];
        table.push(ts, &client, &endpoint, status, agent, user);
    }
    let t = table.t;
    let settings = StatsSettings {
        window: "1m".parse().unwrap(),
        top: 10,
        exclude: excluded.map(|c| format!("c{c}")).into_iter().collect(),
        keep_counts: false,
    };
    let analysis = analyze(&t, &settings);
    (t, analysis)
}

/// The visited (client, facts) are those of `expected`, in client order, for
/// every client with requests.
fn check(
    t: &EventTable,
    analysis: &Analysis,
    pairs: Vec<(Id, ClientFacts)>,
    expected: &[ClientFacts],
) -> Result<(), proptest::test_runner::TestCaseError> {
    let order: Vec<Id> = pairs.iter().map(|p| p.0).collect();
    let visited: FxHashMap<Id, ClientFacts> = pairs.into_iter().collect();
    let error_endpoints = super::facts::client_error_endpoints(t);
    let with_requests: Vec<Id> = analysis.overall.peaks.iter().map(|p| p.client).collect();
    proptest::prop_assert_eq!(&order, &with_requests);
    for (c, want) in expected.iter().enumerate() {
        match visited.get(&(c as Id)) {
            Some(got) => {
                proptest::prop_assert_eq!(got, want);
                proptest::prop_assert_eq!(error_endpoints[c], want.client_error_endpoints);
            }
            None => {
                proptest::prop_assert_eq!(want.requests, 0);
                proptest::prop_assert_eq!(&ClientFacts::without_requests(), want);
            }
        }
    }
    Ok(())
}
