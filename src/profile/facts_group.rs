//! The facts of [`super::facts`] gathered for a group of consecutive clients
//! at once, the group's rows in table order. A client's rows lie far apart
//! in the time-ordered table, so reading its columns client by client misses
//! the cache on nearly every value; a group's rows, many clients' together,
//! are read nearly in sequence. The group's (client, endpoint) pairs are
//! counted by [`super::facts_pairs`], its (client, user agent) and (client,
//! user) pairs in a set bounded by the group's rows.
//!
//! The facts equal those of one client's rows read alone: every client sees
//! its own rows in time order, and its endpoints are ranked the same way.

use rustc_hash::FxHashSet;

use super::facts::{ClientFacts, GapStats, keep_busiest};
use super::facts_pairs::{PairCounting, PairCounts};
use crate::events::{EventTable, Id, KeyColumn, NO_KEY};
use crate::stats::by_client::{GATHERED_ROWS, gather};

/// What a group's pass holds about one of its clients.
#[derive(Clone, Default)]
struct Running {
    first_user_agent: Option<Id>,
    last_user_agent: Option<Id>,
    distinct_user_agents: u64,
    crawler_requests: u64,
    crawler_agent: Option<Id>,
    last_user: Option<Id>,
    distinct_users: u64,
    client_errors: u64,
    client_error_endpoints: u64,
    top: Option<Id>,
    gaps: GapStats,
}

/// Gathers the facts of one group of clients after another, with buffers
/// kept from one group to the next.
pub(super) struct GroupGatherer<'t> {
    table: &'t EventTable,
    agents: Option<&'t KeyColumn>,
    users: Option<&'t KeyColumn>,
    crawler: &'t [bool],
    pairs: PairCounts,
    running: Vec<Running>,
    agents_seen: FxHashSet<u64>,
    users_seen: FxHashSet<u64>,
    ids: Vec<Id>,
    endpoint_ids: Vec<Id>,
    statuses: Vec<u16>,
    agent_ids: Vec<Id>,
    user_ids: Vec<Id>,
    times: Vec<i64>,
}

impl<'t> GroupGatherer<'t> {
    /// For groups of at most `per_group` clients, their pairs counted as
    /// `counting` says.
    pub(super) fn new(
        table: &'t EventTable,
        (agents, users): (Option<&'t KeyColumn>, Option<&'t KeyColumn>),
        crawler: &'t [bool],
        per_group: usize,
        counting: PairCounting,
    ) -> Self {
        GroupGatherer {
            table,
            agents,
            users,
            crawler,
            pairs: PairCounts::new(counting, per_group, table.endpoints.len()),
            running: vec![Running::default(); per_group],
            agents_seen: FxHashSet::default(),
            users_seen: FxHashSet::default(),
            ids: Vec::new(),
            endpoint_ids: Vec::new(),
            statuses: Vec::new(),
            agent_ids: Vec::new(),
            user_ids: Vec::new(),
            times: Vec::new(),
        }
    }

    /// `visit` of the facts of each client of `first..` with requests
    /// (`events[c] > 0`), in client order, `rows` being the group's rows in
    /// table order.
    pub(super) fn facts(
        &mut self,
        first: usize,
        clients: usize,
        events: &[u32],
        rows: &[u32],
        mut visit: impl FnMut(Id, ClientFacts),
    ) {
        self.pairs.begin(&events[first..first + clients]);
        for chunk in rows.chunks(GATHERED_ROWS) {
            self.count_chunk(first, chunk);
        }
        let mut facts: Vec<ClientFacts> = (first..first + clients)
            .map(|c| ClientFacts {
                requests: u64::from(events[c]),
                ..ClientFacts::default()
            })
            .collect();
        let running = &mut self.running;
        self.pairs.drain(|local, e, requests, error| {
            keep_busiest(&mut facts[local].endpoints, e, requests);
            running[local].client_error_endpoints += u64::from(error);
        });
        for (f, run) in facts.iter().zip(running.iter_mut()) {
            run.top = f.endpoints.first().map(|&(e, _)| e);
        }
        // The spacing of each client's requests to its top endpoint.
        for chunk in rows.chunks(GATHERED_ROWS) {
            gather(&self.table.client, chunk, &mut self.ids);
            gather(&self.table.endpoint, chunk, &mut self.endpoint_ids);
            gather(&self.table.ts, chunk, &mut self.times);
            for k in 0..chunk.len() {
                let run = &mut self.running[self.ids[k] as usize - first];
                if run.top == Some(self.endpoint_ids[k]) {
                    run.gaps.add(self.times[k]);
                }
            }
        }
        for (local, mut f) in facts.into_iter().enumerate() {
            let run = std::mem::take(&mut self.running[local]);
            if events[first + local] == 0 {
                continue;
            }
            f.first_user_agent = run.first_user_agent;
            f.distinct_user_agents = run.distinct_user_agents;
            f.crawler_requests = run.crawler_requests;
            f.crawler_agent = run.crawler_agent;
            f.distinct_users = run.distinct_users;
            f.client_errors = run.client_errors;
            f.client_error_endpoints = run.client_error_endpoints;
            (f.gaps, f.gap_mean_ms, f.gap_cv) = run.gaps.summary();
            visit((first + local) as Id, f);
        }
        self.agents_seen.clear();
        self.users_seen.clear();
    }

    /// Counts the endpoints, user agents, users and client errors of `rows`.
    fn count_chunk(&mut self, first: usize, rows: &[u32]) {
        let table = self.table;
        // The columns first, in tight loops whose reads overlap.
        gather(&table.client, rows, &mut self.ids);
        gather(&table.endpoint, rows, &mut self.endpoint_ids);
        gather(&table.status, rows, &mut self.statuses);
        if let Some(col) = self.agents {
            gather(&col.ids, rows, &mut self.agent_ids);
        }
        if let Some(col) = self.users {
            gather(&col.ids, rows, &mut self.user_ids);
        }
        let GroupGatherer {
            pairs,
            running,
            agents,
            users,
            crawler,
            agents_seen,
            users_seen,
            ids,
            endpoint_ids,
            statuses,
            agent_ids,
            user_ids,
            ..
        } = self;
        // The rest of each request counted in the pairs' own loop.
        pairs.add(
            first,
            (ids, endpoint_ids, statuses),
            #[inline(always)]
            |k, local, error| {
                let run = &mut running[local];
                run.client_errors += u64::from(error);
                if agents.is_some() {
                    let ua = agent_ids[k];
                    if ua != NO_KEY {
                        run.first_user_agent.get_or_insert(ua);
                        if run.last_user_agent != Some(ua) {
                            run.last_user_agent = Some(ua);
                            if agents_seen.insert(pair(local, ua)) {
                                run.distinct_user_agents += 1;
                            }
                        }
                        if crawler[ua as usize] {
                            run.crawler_requests += 1;
                            run.crawler_agent.get_or_insert(ua);
                        }
                    }
                }
                if users.is_some() {
                    let user = user_ids[k];
                    if user != NO_KEY && run.last_user != Some(user) {
                        run.last_user = Some(user);
                        if users_seen.insert(pair(local, user)) {
                            run.distinct_users += 1;
                        }
                    }
                }
            },
        );
    }
}

/// One (local client, id) pair as a set key.
fn pair(local: usize, id: Id) -> u64 {
    (local as u64) << 32 | u64::from(id)
}
