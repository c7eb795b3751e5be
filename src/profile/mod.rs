//! Client profiles: what kind of traffic a client sends, with the evidence
//! from the log, so a reviewer can decide about it in seconds.
//!
//! Every separated or flagged client is checked against every kind; periodic
//! probes, crawlers and scanners are looked for among all clients, since they
//! want a rule of their own whatever their rate. Each kind is a heuristic in a
//! file of its own ([`runaway`], [`steady`], [`shared`], [`periodic`],
//! [`crawler`], [`scanner`]) with its thresholds as documented constants. A
//! profile is a label and a suggestion: nothing is ever dropped because of it.

pub mod crawler;
pub mod facts;
mod facts_group;
mod facts_pairs;
mod facts_ranges;
pub mod periodic;
pub mod runaway;
pub mod scanner;
pub mod shared;
pub mod steady;

use serde::Serialize;

use crate::events::{EventTable, Id};
use crate::recommend::baseline::{WindowLoader, runs_above};
use crate::recommend::windows::{TableWindows, span_windows};
use crate::stats::Analysis;
use crate::units::Window;
pub use facts::{ClientFacts, ProfileColumns};

/// How many profiled clients are listed.
pub const PROFILES_LISTED: usize = 50;

/// The kinds of traffic rlctl recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    RunawayLoop,
    HeavySteady,
    SharedAddress,
    PeriodicProbe,
    Crawler,
    Scanner,
}

impl Kind {
    /// The label shown in reports.
    pub fn label(self) -> &'static str {
        match self {
            Kind::RunawayLoop => "runaway loop",
            Kind::HeavySteady => "heavy steady client",
            Kind::SharedAddress => "shared address",
            Kind::PeriodicProbe => "periodic probe",
            Kind::Crawler => "crawler",
            Kind::Scanner => "scanner",
        }
    }
}

/// One kind recognised in one client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub kind: Kind,
    /// The figures from the log that support it.
    pub evidence: String,
    /// What a reviewer might do about it.
    pub suggestion: String,
}

/// A client with what it was recognised as.
#[derive(Debug, Clone, Serialize)]
pub struct ClientProfile {
    pub client: String,
    pub requests: u64,
    /// Separated from the baseline or flagged by the recommendation.
    pub reviewed: bool,
    /// Every kind it matched (none: a separated or flagged client nothing explains).
    pub findings: Vec<Finding>,
}

/// How a client's windows compare with the baseline (separated or flagged clients only).
#[derive(Debug, Clone, Copy, Default)]
pub struct WindowFacts {
    pub peak_window: u64,
    pub active_windows: u64,
    pub windows_above: u64,
    pub longest_run: u64,
}

/// What every detector may read besides the client's facts.
pub struct Context<'a> {
    pub table: &'a EventTable,
    pub columns: ProfileColumns,
    pub window: Window,
    pub span_windows: u64,
    /// p99 of the baseline, and the threshold 5 × p99 that runs are counted above.
    pub p99: u64,
    pub threshold: u64,
}

/// One client as a detector sees it.
pub struct Subject<'a> {
    pub facts: &'a ClientFacts,
    /// Present for separated and flagged clients.
    pub windows: Option<WindowFacts>,
    pub ctx: &'a Context<'a>,
}

impl Subject<'_> {
    /// The share of its requests on its `n` busiest endpoints (at most
    /// [`facts::TOP_ENDPOINTS`]), and their names.
    pub fn top_endpoints(&self, n: usize) -> (f64, Vec<&str>) {
        debug_assert!(n <= facts::TOP_ENDPOINTS, "the facts keep fewer endpoints");
        let f = self.facts;
        let top: u64 = f.endpoints.iter().take(n).map(|e| e.1).sum();
        let names = f
            .endpoints
            .iter()
            .take(n)
            .map(|&(e, _)| self.ctx.table.endpoints.name(e))
            .collect();
        (top as f64 / f.requests.max(1) as f64, names)
    }

    /// The name of a user-agent id.
    pub fn agent(&self, id: Id) -> &str {
        self.ctx
            .columns
            .user_agent
            .map_or("", |i| self.ctx.table.extra_keys[i].names.name(id))
    }
}

/// One kind of traffic behind one interface (shared by the threads that
/// look at clients).
pub trait Profile: Sync {
    /// Whether it is looked for among all clients (else only reviewed ones).
    fn among_all(&self) -> bool;
    /// The finding, when the client shows this kind.
    fn detect(&self, subject: &Subject<'_>) -> Option<Finding>;
}

/// Every profile, in the order findings are listed.
pub fn all() -> Vec<Box<dyn Profile>> {
    vec![
        Box::new(runaway::RunawayLoop),
        Box::new(steady::HeavySteady),
        Box::new(shared::SharedAddress),
        Box::new(periodic::PeriodicProbe),
        Box::new(crawler::Crawler),
        Box::new(scanner::Scanner),
    ]
}

/// A client as [`profile_clients`] found it: reviewed (with its place in the
/// review and its facts), or another one with findings.
enum Visited {
    Reviewed(usize, ClientFacts),
    Other(ClientProfile),
}

/// The profiles of the `reviewed` clients (separated or flagged, in the order
/// given) and of every other client some kind looked for among all matches
/// (most requests first, ties by name); `p99` is the overall baseline's.
/// `error_endpoints` (per client, see [`facts::client_error_endpoints`])
/// replaces the count of distinct endpoints answered 4xx when the table's
/// endpoints have since been folded into templates.
pub fn profile_clients(
    table: &EventTable,
    analysis: &Analysis,
    columns: ProfileColumns,
    reviewed: &[Id],
    p99: u64,
    error_endpoints: Option<&[u64]>,
) -> Vec<ClientProfile> {
    let window = analysis.window;
    let ctx = Context {
        table,
        columns,
        window,
        span_windows: span_windows(table, window),
        p99,
        threshold: crate::recommend::baseline::TAIL_RATIO.saturating_mul(p99),
    };
    let profiles = all();
    let run = |facts: &ClientFacts, windows: Option<WindowFacts>, only_all: bool| {
        let subject = Subject {
            facts,
            windows,
            ctx: &ctx,
        };
        let mut findings: Vec<Finding> = profiles
            .iter()
            .filter(|p| !only_all || p.among_all())
            .filter_map(|p| p.detect(&subject))
            .collect();
        // A scanner probing many paths at a steady pace is no health check,
        // nor a loop on few endpoints (found by review: discovery folded its
        // paths into one or two templates, and the probe's exemption, or the
        // loop's "tell its owner", was suggested for it).
        if findings.iter().any(|f| f.kind == Kind::Scanner) {
            findings.retain(|f| !matches!(f.kind, Kind::PeriodicProbe | Kind::RunawayLoop));
        }
        findings
    };
    // Facts are gathered client after client: the reviewed clients' are kept
    // for the review below, every other client is looked at and let go.
    let position: rustc_hash::FxHashMap<Id, usize> =
        reviewed.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let visited = facts::map_clients(table, analysis, columns, crawler::is_crawler, |c, mut f| {
        if let Some(counts) = error_endpoints {
            f.client_error_endpoints = counts[c as usize];
        }
        if let Some(&i) = position.get(&c) {
            return Some(Visited::Reviewed(i, f));
        }
        let findings = run(&f, None, true);
        (!findings.is_empty()).then(|| {
            Visited::Other(ClientProfile {
                client: table.clients.name(c).to_string(),
                requests: f.requests,
                reviewed: false,
                findings,
            })
        })
    });
    let mut reviewed_facts = vec![None; reviewed.len()];
    let mut others: Vec<ClientProfile> = Vec::new();
    for v in visited {
        match v {
            Visited::Reviewed(i, f) => reviewed_facts[i] = Some(f),
            Visited::Other(profile) => others.push(profile),
        }
    }
    let asked: Vec<(usize, Id)> = reviewed.iter().map(|&c| (0, c)).collect();
    let mut loader = TableWindows {
        table,
        window,
        scopes: vec![None],
    };
    let series = loader.load(&asked);
    let mut out: Vec<ClientProfile> = reviewed
        .iter()
        .zip(reviewed_facts)
        .zip(&series)
        .map(|((&c, facts), windows)| {
            let facts = facts.unwrap_or_else(|| {
                let mut f = ClientFacts::without_requests();
                if let Some(counts) = error_endpoints {
                    f.client_error_endpoints = counts[c as usize];
                }
                f
            });
            let (windows_above, longest_run) = runs_above(windows, ctx.threshold);
            let w = WindowFacts {
                peak_window: windows.iter().map(|w| w.1).max().unwrap_or(0),
                active_windows: windows.len() as u64,
                windows_above,
                longest_run,
            };
            ClientProfile {
                client: table.clients.name(c).to_string(),
                requests: facts.requests,
                reviewed: true,
                findings: run(&facts, Some(w), false),
            }
        })
        .collect();
    others.sort_by(|a, b| {
        b.requests
            .cmp(&a.requests)
            .then_with(|| a.client.cmp(&b.client))
    });
    out.extend(others);
    out.truncate(PROFILES_LISTED.max(reviewed.len()));
    out
}

#[cfg(test)]
mod facts_tests;
#[cfg(test)]
mod tests;
