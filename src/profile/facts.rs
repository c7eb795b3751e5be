//! The facts about each client that the profiles read, gathered in one pass
//! over the time-ordered table (plus the per-client totals the analysis
//! already holds). Pair sets (client × user agent, client × user, client ×
//! endpoint answered 4xx) hold only the pairs that occur.

use rustc_hash::FxHashSet;

use crate::events::{EventTable, Id, NO_KEY};
use crate::ingest::key::{KeySet, KeySpec};
use crate::stats::Analysis;

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
#[derive(Debug, Clone, Default)]
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

/// The facts of every client (indexed by client id; excluded clients have none).
pub fn gather(
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
struct GapStats {
    last: Option<i64>,
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl GapStats {
    fn add(&mut self, t: i64) {
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
    fn summary(&self) -> (u64, f64, f64) {
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
