//! The facts about each client that the profiles read, gathered client after
//! client from the time-ordered table (plus the per-client totals the
//! analysis already holds): memory follows one client's requests, not the
//! (client × user agent, client × user, client × endpoint) pairs of all.

use rustc_hash::FxHashSet;

use rayon::prelude::*;

use crate::events::{EventTable, Id, KeyColumn, NO_KEY};
use crate::ingest::key::{KeySet, KeySpec};
use crate::stats::Analysis;
use crate::stats::by_client::{ClientRows, INDEXED_ROWS, by_rows, client_ranges, gather};

/// Which extra key columns of the table hold the user agent and the user.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProfileColumns {
    pub user_agent: Option<usize>,
    pub user: Option<usize>,
}

impl ProfileColumns {
    /// Asks the ingestion for the user agent and the user of each request (as
    /// extra keys of `keys`, read where the log format has them); returns
    /// their columns. `analyze` and `report` both call it, so their profiles
    /// rest on the same facts.
    pub fn request(keys: &mut KeySet) -> ProfileColumns {
        ProfileColumns {
            user_agent: Some(keys.add(KeySpec::user_agent())),
            user: Some(keys.add(KeySpec::parse("user", None, None).expect("`user` is a key"))),
        }
    }
}

/// What one pass learnt about one client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientFacts {
    pub requests: u64,
    /// Requests per endpoint, most first (ties by endpoint id).
    pub endpoints: Vec<(Id, u64)>,
    pub distinct_user_agents: u64,
    pub distinct_users: u64,
    /// The user agent of its first request (id in the user-agent column).
    pub first_user_agent: Option<Id>,
    /// Requests whose user agent is a known crawler's, and that user agent.
    pub crawler_requests: u64,
    pub crawler_agent: Option<Id>,
    /// Answers 400–499 other than 429 (a limiter's answer is not the client's
    /// mistake), and on how many distinct endpoints.
    pub client_errors: u64,
    pub client_error_endpoints: u64,
    /// Spacing of the requests to its top endpoint (ms): how many gaps, their
    /// mean and their coefficient of variation (standard deviation / mean).
    pub gaps: u64,
    pub gap_mean_ms: f64,
    pub gap_cv: f64,
}

/// `visit` of the facts of every client with requests (excluded clients have
/// none), the `Some` answers in client-id order. A few threads each go
/// through a range of clients one client after another, each client's rows in
/// time order ([`ClientRows`]), so a thread holds one client's facts and
/// pair sets at a time.
pub fn map_clients<T: Send>(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
    visit: impl Fn(Id, ClientFacts) -> Option<T> + Sync,
) -> Vec<T> {
    map_clients_indexing(table, analysis, columns, is_crawler, visit, INDEXED_ROWS)
}

/// [`map_clients`] indexing at most `indexed_rows` rows at a time (tests vary it).
pub(super) fn map_clients_indexing<T: Send>(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
    visit: impl Fn(Id, ClientFacts) -> Option<T> + Sync,
    indexed_rows: usize,
) -> Vec<T> {
    let mut events = vec![0u32; table.clients.len()];
    for p in &analysis.overall.peaks {
        // A client's requests are rows of the table, whose row indices are u32.
        events[p.client as usize] = p.requests as u32;
    }
    let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
    let crawler: Vec<bool> =
        agents.map_or_else(Vec::new, |col| col.names.names().map(&is_crawler).collect());
    let ranges = client_ranges(&events, table.len(), rayon::current_num_threads().max(1));
    let parts: Vec<Vec<T>> = ranges
        .into_par_iter()
        .map(|clients| {
            let mut gatherer = Gatherer::new(table, columns, &crawler);
            let mut found = Vec::new();
            // Indexed a bounded number of rows at a time.
            for some in by_rows(&events, clients, indexed_rows) {
                let grouped = ClientRows::group(table, some.clone(), &events, 1);
                found.extend(
                    some.filter(|&c| events[c] > 0)
                        .filter_map(|c| visit(c as Id, gatherer.facts(grouped.of(c)))),
                );
            }
            found
        })
        .collect();
    parts.into_iter().flatten().collect()
}

/// Gathers the facts of one client after another, with buffers kept from
/// one client to the next.
struct Gatherer<'t> {
    table: &'t EventTable,
    agents: Option<&'t KeyColumn>,
    users: Option<&'t KeyColumn>,
    crawler: &'t [bool],
    /// Per endpoint id, its place in the facts' `endpoints` (reset after each client).
    endpoint_at: Vec<Id>,
    endpoints: Vec<Id>,
    statuses: Vec<u16>,
    ids: Vec<Id>,
    agents_seen: Distinct,
    users_seen: Distinct,
    error_endpoints: Distinct,
}

impl<'t> Gatherer<'t> {
    fn new(table: &'t EventTable, columns: ProfileColumns, crawler: &'t [bool]) -> Self {
        let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
        let users = columns.user.map(|i| &table.extra_keys[i]);
        Gatherer {
            table,
            agents,
            users,
            crawler,
            endpoint_at: vec![NO_KEY; table.endpoints.len()],
            endpoints: Vec::new(),
            statuses: Vec::new(),
            ids: Vec::new(),
            agents_seen: Distinct::new(agents.map_or(0, |col| col.names.len())),
            users_seen: Distinct::new(users.map_or(0, |col| col.names.len())),
            error_endpoints: Distinct::new(table.endpoints.len()),
        }
    }

    /// The facts of the client whose rows (in time order) are `rows`.
    fn facts(&mut self, rows: &[u32]) -> ClientFacts {
        let table = self.table;
        let mut f = ClientFacts {
            requests: rows.len() as u64,
            ..ClientFacts::default()
        };
        // The client's columns first, in tight loops whose reads overlap.
        gather(&table.endpoint, rows, &mut self.endpoints);
        gather(&table.status, rows, &mut self.statuses);
        for &e in &self.endpoints {
            let at = &mut self.endpoint_at[e as usize];
            if *at == NO_KEY {
                *at = f.endpoints.len() as Id;
                f.endpoints.push((e, 0));
            }
            f.endpoints[*at as usize].1 += 1;
        }
        for &(e, _) in &f.endpoints {
            self.endpoint_at[e as usize] = NO_KEY;
        }
        f.endpoints
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(col) = self.agents {
            gather(&col.ids, rows, &mut self.ids);
            for &ua in self.ids.iter().filter(|&&ua| ua != NO_KEY) {
                f.first_user_agent.get_or_insert(ua);
                self.agents_seen.add(ua);
                if self.crawler[ua as usize] {
                    f.crawler_requests += 1;
                    f.crawler_agent.get_or_insert(ua);
                }
            }
            f.distinct_user_agents = self.agents_seen.count_and_reset();
        }
        if let Some(col) = self.users {
            gather(&col.ids, rows, &mut self.ids);
            for &u in self.ids.iter().filter(|&&u| u != NO_KEY) {
                self.users_seen.add(u);
            }
            f.distinct_users = self.users_seen.count_and_reset();
        }
        for (&e, &status) in self.endpoints.iter().zip(&self.statuses) {
            if (400..500).contains(&status) && status != 429 {
                f.client_errors += 1;
                self.error_endpoints.add(e);
            }
        }
        f.client_error_endpoints = self.error_endpoints.count_and_reset();
        let top = f.endpoints.first().map(|&(e, _)| e);
        let mut gaps = GapStats::default();
        for (&e, &row) in self.endpoints.iter().zip(rows) {
            if Some(e) == top {
                gaps.add(table.ts[row as usize]);
            }
        }
        (f.gaps, f.gap_mean_ms, f.gap_cv) = gaps.summary();
        f
    }
}

impl ClientFacts {
    /// The facts of a client without requests (an excluded one).
    pub fn without_requests() -> ClientFacts {
        let mut f = ClientFacts::default();
        (f.gaps, f.gap_mean_ms, f.gap_cv) = GapStats::default().summary();
        f
    }
}

/// The distinct ids one client has, with a mark per id that is reset after
/// each client (linear in the client's requests, whatever their number).
struct Distinct {
    seen: Vec<bool>,
    marked: Vec<Id>,
}

impl Distinct {
    /// For ids below `ids`.
    fn new(ids: usize) -> Self {
        Distinct {
            seen: vec![false; ids],
            marked: Vec::new(),
        }
    }

    fn add(&mut self, id: Id) {
        let seen = &mut self.seen[id as usize];
        if !*seen {
            *seen = true;
            self.marked.push(id);
        }
    }

    /// How many distinct ids were added since the last reset; resets.
    fn count_and_reset(&mut self) -> u64 {
        for &id in &self.marked {
            self.seen[id as usize] = false;
        }
        let n = self.marked.len() as u64;
        self.marked.clear();
        n
    }
}

/// Per client, the distinct endpoints answered 400–499 (not 429). Computed
/// before endpoint templates are applied, a scanner's hundreds of probed
/// paths stay distinct even where discovery folds them into a few templates.
pub fn client_error_endpoints(table: &EventTable) -> Vec<u64> {
    let mut out = vec![0u64; table.clients.len()];
    let mut seen: FxHashSet<(Id, Id)> = FxHashSet::default();
    for row in 0..table.len() {
        let status = table.status[row];
        if (400..500).contains(&status) && status != 429 {
            let c = table.client[row];
            if seen.insert((c, table.endpoint[row])) {
                out[c as usize] += 1;
            }
        }
    }
    out
}

/// Running sums of the gaps between one client's requests.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct GapStats {
    last: Option<i64>,
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl GapStats {
    pub(super) fn add(&mut self, t: i64) {
        if let Some(last) = self.last {
            let gap = (t - last) as f64;
            self.n += 1;
            self.sum += gap;
            self.sum_sq += gap * gap;
        }
        self.last = Some(t);
    }

    /// (gaps, mean, coefficient of variation); the variation is that of the
    /// population of gaps, and infinite when the mean is zero.
    pub(super) fn summary(&self) -> (u64, f64, f64) {
        if self.n == 0 {
            return (0, 0.0, f64::INFINITY);
        }
        let n = self.n as f64;
        let mean = self.sum / n;
        let variance = (self.sum_sq / n - mean * mean).max(0.0);
        let cv = if mean > 0.0 {
            variance.sqrt() / mean
        } else {
            f64::INFINITY
        };
        (self.n, mean, cv)
    }
}
