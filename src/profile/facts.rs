//! The facts about each client that the profiles read, gathered group of
//! consecutive clients after group from the time-ordered table (plus the
//! per-client totals the analysis already holds): memory follows one group's
//! requests and pairs, not the (client × user agent, client × user, client ×
//! endpoint) pairs of all.

use rayon::prelude::*;

use super::facts_group::GroupGatherer;
use super::facts_pairs::PairCounting;
use super::facts_ranges;
use crate::events::{EventTable, Id, KeyColumn};
use crate::ingest::key::{KeySet, KeySpec};
use crate::stats::Analysis;
use crate::stats::by_client::{ClientRows, RowBounds, by_rows, client_ranges};

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

/// How many of a client's busiest endpoints its facts keep.
pub const TOP_ENDPOINTS: usize = 2;

/// Adds endpoint `e` with its `requests` to a client's `busiest` endpoints,
/// keeping the first [`TOP_ENDPOINTS`] of the order most requests first,
/// ties by endpoint id: what sorting all of them and keeping the first gives.
pub(super) fn keep_busiest(busiest: &mut Vec<(Id, u64)>, e: Id, requests: u64) {
    let at = busiest
        .iter()
        .take_while(|&&(other, n)| n > requests || (n == requests && other < e))
        .count();
    if at < TOP_ENDPOINTS {
        busiest.insert(at, (e, requests));
        busiest.truncate(TOP_ENDPOINTS);
    }
}

/// What one pass learnt about one client.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientFacts {
    pub requests: u64,
    /// Its busiest endpoints with their requests, most first (ties by
    /// endpoint id), at most [`TOP_ENDPOINTS`] of them: what the profiles
    /// read (a client of a million endpoints is not sorted whole).
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
/// through a range of clients one group of consecutive clients after
/// another, the group's rows in time order ([`ClientRows`]), so a thread
/// holds one group's facts and pair sets at a time
/// ([`super::facts_group`]).
pub fn map_clients<T: Send>(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
    visit: impl Fn(Id, ClientFacts) -> Option<T> + Sync,
) -> Vec<T> {
    if facts_ranges::few_pairs(table.clients.len(), table.endpoints.len()) {
        let requests = client_requests(table, analysis);
        let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
        let crawler = crawlers(agents, is_crawler);
        let sources = facts_ranges::Sources {
            agents,
            users: columns.user.map(|i| &table.extra_keys[i]),
            crawler: &crawler,
        };
        let ranges = rayon::current_num_threads().max(1);
        return facts_ranges::map_clients(table, &requests, &sources, ranges, visit);
    }
    map_clients_indexing(
        table,
        analysis,
        columns,
        is_crawler,
        visit,
        (RowBounds::default(), None, None),
    )
}

/// Per client id, its requests in the analysis (none for excluded clients).
pub(super) fn client_requests(table: &EventTable, analysis: &Analysis) -> Vec<u32> {
    let mut events = vec![0u32; table.clients.len()];
    for p in &analysis.overall.peaks {
        // A client's requests are rows of the table, whose row indices are u32.
        events[p.client as usize] = p.requests as u32;
    }
    events
}

/// Per user agent id of `agents`: whether it is a known crawler's.
fn crawlers(agents: Option<&KeyColumn>, is_crawler: impl Fn(&str) -> bool) -> Vec<bool> {
    agents.map_or_else(Vec::new, |col| col.names.names().map(&is_crawler).collect())
}

/// [`map_clients`] with rows indexed and grouped as `bounds` says, at most
/// `per_group` clients gathered at once, their pairs counted as `counting`
/// says (else as [`PairCounting::for_endpoints`] and
/// [`PairCounting::clients_per_group`] say); tests vary all three.
pub(super) fn map_clients_indexing<T: Send>(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
    visit: impl Fn(Id, ClientFacts) -> Option<T> + Sync,
    (bounds, per_group, counting): (RowBounds, Option<usize>, Option<PairCounting>),
) -> Vec<T> {
    let events = client_requests(table, analysis);
    let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
    let crawler = crawlers(agents, is_crawler);
    let endpoints = table.endpoints.len();
    let counting = counting.unwrap_or_else(|| PairCounting::for_endpoints(endpoints));
    let per_group = per_group
        .unwrap_or_else(|| counting.clients_per_group(endpoints))
        .max(1);
    let bounds = RowBounds {
        group: bounds.group.min(counting.group_rows()),
        ..bounds
    };
    let ranges = client_ranges(&events, table.len(), rayon::current_num_threads().max(1));
    let parts: Vec<Vec<T>> = ranges
        .into_par_iter()
        .map(|clients| {
            let per_group = per_group.min(clients.len().max(1));
            let users = columns.user.map(|i| &table.extra_keys[i]);
            let mut gatherer =
                GroupGatherer::new(table, (agents, users), &crawler, per_group, counting);
            let mut found = Vec::new();
            // Indexed a bounded number of rows at a time.
            for some in by_rows(&events, clients, bounds.indexed) {
                let grouped = ClientRows::group(table, some, &events, (per_group, bounds.group));
                for g in 0..grouped.groups() {
                    let group = grouped.clients(g);
                    let rows = grouped.rows(g);
                    gatherer.facts(group.start, group.len(), &events, rows, |c, f| {
                        found.extend(visit(c, f));
                    });
                }
            }
            found
        })
        .collect();
    parts.into_iter().flatten().collect()
}

impl ClientFacts {
    /// The facts of a client without requests (an excluded one).
    pub fn without_requests() -> ClientFacts {
        let mut f = ClientFacts::default();
        (f.gaps, f.gap_mean_ms, f.gap_cv) = GapStats::default().summary();
        f
    }
}

/// Per client, the distinct endpoints answered 400–499 (not 429). Computed
/// before endpoint templates are applied, a scanner's hundreds of probed
/// paths stay distinct even where discovery folds them into a few templates.
/// The (client, endpoint) pairs of those rows are sorted and counted once
/// each: a few bytes per error row, read in order, where a set of the pairs
/// would be a cache miss per row with a million distinct endpoints.
pub fn client_error_endpoints(table: &EventTable) -> Vec<u64> {
    let mut pairs: Vec<u64> = table
        .status
        .iter()
        .zip(&table.client)
        .zip(&table.endpoint)
        .filter(|((status, _), _)| (400..500).contains(*status) && **status != 429)
        .map(|((_, &c), &e)| u64::from(c) << 32 | u64::from(e))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    let mut out = vec![0u64; table.clients.len()];
    for pair in pairs {
        out[(pair >> 32) as usize] += 1;
    }
    out
}

/// Running sums of the gaps between one client's requests, in integers:
/// exact, so that sums of parts joined in any grouping are the same.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct GapStats {
    last: Option<i64>,
    n: u64,
    sum: i128,
    sum_sq: i128,
}

impl GapStats {
    pub(super) fn add(&mut self, t: i64) {
        if let Some(last) = self.last {
            let gap = i128::from(t) - i128::from(last);
            self.n += 1;
            self.sum += gap;
            self.sum_sq = self.sum_sq.saturating_add(gap.saturating_mul(gap));
        }
        self.last = Some(t);
    }

    /// Adds the requests of a later part, whose first is at `first` and whose
    /// gaps are `next`'s: what adding them one by one gives.
    pub(super) fn join(&mut self, first: i64, next: &GapStats) {
        self.add(first);
        self.n += next.n;
        self.sum += next.sum;
        self.sum_sq = self.sum_sq.saturating_add(next.sum_sq);
        self.last = next.last.or(self.last);
    }

    /// (gaps, mean, coefficient of variation); the variation is that of the
    /// population of gaps, and infinite when the mean is zero.
    pub(super) fn summary(&self) -> (u64, f64, f64) {
        if self.n == 0 {
            return (0, 0.0, f64::INFINITY);
        }
        let n = self.n as f64;
        let mean = self.sum as f64 / n;
        let variance = (self.sum_sq as f64 / n - mean * mean).max(0.0);
        let cv = if mean > 0.0 {
            variance.sqrt() / mean
        } else {
            f64::INFINITY
        };
        (self.n, mean, cv)
    }
}
