//! The facts about each client that the profiles read, gathered client after
//! client from the time-ordered table (plus the per-client totals the
//! analysis already holds): memory follows one client's requests, not the
//! (client × user agent, client × user, client × endpoint) pairs of all.

use rustc_hash::FxHashSet;

use crate::events::{EventTable, Id, NO_KEY};
use crate::ingest::key::{KeySet, KeySpec};
use crate::stats::Analysis;
use crate::stats::by_client::{ClientRows, gather};

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

/// The facts of every client with requests (excluded clients have none),
/// passed to `visit` one client after another in client-id order. Each
/// client's rows are gone through in time order ([`ClientRows`]), so only one
/// client's facts and pair sets are held at a time.
pub fn for_each_client(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    is_crawler: impl Fn(&str) -> bool,
    mut visit: impl FnMut(Id, ClientFacts),
) {
    let mut events = vec![0u32; table.clients.len()];
    for p in &analysis.overall.peaks {
        // A client's requests are rows of the table, whose row indices are u32.
        events[p.client as usize] = p.requests as u32;
    }
    let grouped = ClientRows::group(table, 0..events.len(), &events);
    drop(events);
    let agents = columns.user_agent.map(|i| &table.extra_keys[i]);
    let users = columns.user.map(|i| &table.extra_keys[i]);
    let crawler: Vec<bool> =
        agents.map_or_else(Vec::new, |col| col.names.names().map(&is_crawler).collect());
    // Per endpoint id, its place in `endpoints` for the client being gathered.
    let mut endpoint_at = vec![NO_KEY; table.endpoints.len()];
    let (mut agent_ids, mut user_ids, mut error_endpoints) = (Vec::new(), Vec::new(), Vec::new());
    let (mut endpoints, mut statuses) = (Vec::new(), Vec::new());
    for p in &analysis.overall.peaks {
        let rows = grouped.of(p.client as usize);
        let mut f = ClientFacts {
            requests: p.requests,
            ..ClientFacts::default()
        };
        // The client's columns first, in tight loops whose reads overlap.
        gather(&table.endpoint, rows, &mut endpoints);
        gather(&table.status, rows, &mut statuses);
        for &e in &endpoints {
            let at = &mut endpoint_at[e as usize];
            if *at == NO_KEY {
                *at = f.endpoints.len() as Id;
                f.endpoints.push((e, 0));
            }
            f.endpoints[*at as usize].1 += 1;
        }
        if let Some(col) = agents {
            gather(&col.ids, rows, &mut agent_ids);
            agent_ids.retain(|&ua| ua != NO_KEY);
            f.first_user_agent = agent_ids.first().copied();
            for &ua in &agent_ids {
                if crawler[ua as usize] {
                    f.crawler_requests += 1;
                    f.crawler_agent.get_or_insert(ua);
                }
            }
        }
        if let Some(col) = users {
            gather(&col.ids, rows, &mut user_ids);
            user_ids.retain(|&u| u != NO_KEY);
        }
        for (&e, &status) in endpoints.iter().zip(&statuses) {
            if (400..500).contains(&status) && status != 429 {
                f.client_errors += 1;
                error_endpoints.push(e);
            }
        }
        for &(e, _) in &f.endpoints {
            endpoint_at[e as usize] = NO_KEY;
        }
        f.endpoints
            .sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        f.distinct_user_agents = distinct(&mut agent_ids);
        f.distinct_users = distinct(&mut user_ids);
        f.client_error_endpoints = distinct(&mut error_endpoints);
        let top = f.endpoints.first().map(|&(e, _)| e);
        let mut gaps = GapStats::default();
        for (&e, &row) in endpoints.iter().zip(rows) {
            if Some(e) == top {
                gaps.add(table.ts[row as usize]);
            }
        }
        (f.gaps, f.gap_mean_ms, f.gap_cv) = gaps.summary();
        visit(p.client, f);
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

/// How many distinct ids `ids` holds; empties it.
fn distinct(ids: &mut Vec<Id>) -> u64 {
    ids.sort_unstable();
    ids.dedup();
    let n = ids.len() as u64;
    ids.clear();
    n
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
