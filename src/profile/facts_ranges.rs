//! The facts of [`super::facts`] for a table with few clients and endpoints:
//! the rows are split into consecutive ranges, one per thread, and each range
//! is read for every client at once, its columns in order. Grouped by client
//! instead, every thread would read every part of the columns (few clients'
//! requests are mixed all through the table) after indexing its clients' rows.
//!
//! The ranges' findings are then joined in range order: requests per
//! (client, endpoint) pair added up, the first user agent taken from the
//! first range with one, the sets of (client, user agent) and (client, user)
//! pairs merged, and the gaps between a client's requests to its top endpoint
//! joined across the ranges' edges. The facts equal those of one client's
//! rows read alone.

use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::facts::{ClientFacts, GapStats, keep_busiest};
use crate::events::{EventTable, Id, KeyColumn, NO_KEY};
use crate::stats::by_client::GROUP_PAIRS;
use crate::stats::row_ranges::split_rows;

/// Whether `clients` clients and `endpoints` endpoints are few enough for
/// each range to hold a count per (client, endpoint) pair.
pub(super) fn few_pairs(clients: usize, endpoints: usize) -> bool {
    clients.saturating_mul(endpoints.max(1)) <= GROUP_PAIRS
}

/// What a range holds about one client.
#[derive(Debug, Clone, Copy, Default)]
struct Running {
    first_user_agent: Option<Id>,
    last_user_agent: Option<Id>,
    crawler_requests: u64,
    crawler_agent: Option<Id>,
    last_user: Option<Id>,
    client_errors: u64,
}

/// What one range of rows found.
struct RangeFacts {
    /// `count[client * endpoints + e]`: requests; `error[..]`: any client error.
    count: Vec<u32>,
    error: Vec<bool>,
    running: Vec<Running>,
    /// (client, user agent) and (client, user) pairs seen.
    agents_seen: FxHashSet<u64>,
    users_seen: FxHashSet<u64>,
}

/// The columns the facts read besides the table's own.
pub(super) struct Sources<'t> {
    pub agents: Option<&'t KeyColumn>,
    pub users: Option<&'t KeyColumn>,
    /// Per user agent id: whether it is a known crawler's.
    pub crawler: &'t [bool],
}

/// `visit` of the facts of every client with requests (`requests[c] > 0`),
/// the `Some` answers in client-id order, the rows read in `ranges` ranges.
pub(super) fn map_clients<T>(
    table: &EventTable,
    requests: &[u32],
    sources: &Sources,
    ranges: usize,
    visit: impl Fn(Id, ClientFacts) -> Option<T>,
) -> Vec<T> {
    let endpoints = table.endpoints.len();
    // A count and a mark per pair, what a range holds most.
    let state = table.clients.len() * endpoints * (size_of::<u32>() + size_of::<bool>());
    let bounds = split_rows(table.len(), ranges, state);
    let found: Vec<RangeFacts> = bounds
        .par_iter()
        .map(|rows| read_range(table, requests, sources, rows.clone()))
        .collect();
    let mut facts: Vec<ClientFacts> = requests
        .iter()
        .map(|&n| ClientFacts {
            requests: u64::from(n),
            ..ClientFacts::default()
        })
        .collect();
    join_found(found, &mut facts, endpoints);
    // The spacing of each client's requests to its top endpoint.
    let top: Vec<Id> = facts
        .iter()
        .map(|f| f.endpoints.first().map_or(NO_KEY, |&(e, _)| e))
        .collect();
    let gaps: Vec<Vec<(Option<i64>, GapStats)>> = bounds
        .par_iter()
        .map(|rows| range_gaps(table, &top, rows.clone()))
        .collect();
    let mut out = Vec::new();
    for (c, mut f) in facts.into_iter().enumerate() {
        if f.requests == 0 {
            continue;
        }
        let mut joined = GapStats::default();
        for (first, stats) in gaps.iter().map(|g| g[c]) {
            if let Some(first) = first {
                joined.join(first, &stats);
            }
        }
        (f.gaps, f.gap_mean_ms, f.gap_cv) = joined.summary();
        out.extend(visit(c as Id, f));
    }
    out
}

/// Reads one range of rows for every client with requests.
fn read_range(
    table: &EventTable,
    requests: &[u32],
    sources: &Sources,
    rows: std::ops::Range<usize>,
) -> RangeFacts {
    let (clients, endpoints) = (table.clients.len(), table.endpoints.len());
    let mut found = RangeFacts {
        count: vec![0; clients * endpoints],
        error: vec![false; clients * endpoints],
        running: vec![Running::default(); clients],
        agents_seen: FxHashSet::default(),
        users_seen: FxHashSet::default(),
    };
    let columns = table.client[rows.clone()]
        .iter()
        .zip(&table.endpoint[rows.clone()])
        .zip(&table.status[rows.clone()]);
    for (k, ((&c, &e), &status)) in columns.enumerate() {
        let row = rows.start + k;
        if requests[c as usize] == 0 {
            continue;
        }
        let place = c as usize * endpoints + e as usize;
        found.count[place] += 1;
        let run = &mut found.running[c as usize];
        if (400..500).contains(&status) && status != 429 {
            found.error[place] = true;
            run.client_errors += 1;
        }
        if let Some(col) = sources.agents {
            let ua = col.ids[row];
            if ua != NO_KEY {
                run.first_user_agent.get_or_insert(ua);
                if run.last_user_agent != Some(ua) {
                    run.last_user_agent = Some(ua);
                    found.agents_seen.insert(pair(c, ua));
                }
                if sources.crawler[ua as usize] {
                    run.crawler_requests += 1;
                    run.crawler_agent.get_or_insert(ua);
                }
            }
        }
        if let Some(col) = sources.users {
            let user = col.ids[row];
            if user != NO_KEY && run.last_user != Some(user) {
                run.last_user = Some(user);
                found.users_seen.insert(pair(c, user));
            }
        }
    }
    found
}

/// Joins the ranges' findings (in row order) into `facts`, per client id.
fn join_found(found: Vec<RangeFacts>, facts: &mut [ClientFacts], endpoints: usize) {
    let mut found = found.into_iter();
    let Some(mut all) = found.next() else {
        return;
    };
    for range in found {
        for (mine, theirs) in all.count.iter_mut().zip(&range.count) {
            *mine += theirs;
        }
        for (mine, theirs) in all.error.iter_mut().zip(&range.error) {
            *mine |= theirs;
        }
        for (mine, theirs) in all.running.iter_mut().zip(&range.running) {
            mine.first_user_agent = mine.first_user_agent.or(theirs.first_user_agent);
            mine.crawler_agent = mine.crawler_agent.or(theirs.crawler_agent);
            mine.crawler_requests += theirs.crawler_requests;
            mine.client_errors += theirs.client_errors;
        }
        all.agents_seen.extend(range.agents_seen);
        all.users_seen.extend(range.users_seen);
    }
    for &key in &all.agents_seen {
        facts[(key >> 32) as usize].distinct_user_agents += 1;
    }
    for &key in &all.users_seen {
        facts[(key >> 32) as usize].distinct_users += 1;
    }
    for (c, f) in facts.iter_mut().enumerate() {
        let run = &all.running[c];
        f.first_user_agent = run.first_user_agent;
        f.crawler_requests = run.crawler_requests;
        f.crawler_agent = run.crawler_agent;
        f.client_errors = run.client_errors;
        let places = c * endpoints..(c + 1) * endpoints;
        for (e, (&n, &error)) in all.count[places.clone()]
            .iter()
            .zip(&all.error[places])
            .enumerate()
        {
            if n > 0 {
                keep_busiest(&mut f.endpoints, e as Id, u64::from(n));
                f.client_error_endpoints += u64::from(error);
            }
        }
    }
}

/// Per client: the time of its first request to its `top` endpoint in the
/// range, and the gaps between those requests.
fn range_gaps(
    table: &EventTable,
    top: &[Id],
    rows: std::ops::Range<usize>,
) -> Vec<(Option<i64>, GapStats)> {
    let mut gaps = vec![(None, GapStats::default()); top.len()];
    let columns = table.client[rows.clone()]
        .iter()
        .zip(&table.endpoint[rows.clone()])
        .zip(&table.ts[rows]);
    for ((&c, &e), &t) in columns {
        if top[c as usize] == e {
            let (first, stats) = &mut gaps[c as usize];
            first.get_or_insert(t);
            stats.add(t);
        }
    }
    gaps
}

/// One (client, id) pair as a set key.
fn pair(client: Id, id: Id) -> u64 {
    u64::from(client) << 32 | u64::from(id)
}
