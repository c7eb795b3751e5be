//! The baseline a recommendation rests on: which (client, window) samples count.
//!
//! `--baseline all` is the literal definition: every sample of the scope.
//! `--baseline robust` (the default) first separates the clients whose traffic is
//! a different population from everyone else's, so that a few runaway loops
//! cannot set the limit that is meant to stop them. The rule, per scope (all
//! traffic, or one endpoint), on the samples of the clients not yet separated:
//!
//! 1. A scope with fewer than [`MIN_CLIENTS`] clients keeps the literal
//!    definition (too few clients to tell a population from an outlier).
//! 2. Compute p95, p99 and p99.9 of the remaining samples (nearest rank). The
//!    tail is steep at p99 when p99.9 > [`TAIL_RATIO`] × p99; else it is steep
//!    at p95 when p99 > [`TAIL_RATIO`] × p95 (a population holding more than
//!    1% of the samples, whose windows are p99 itself). Neither: stop.
//! 3. Let T = [`TAIL_RATIO`] × that quantile (p99, else p95). Separate every
//!    remaining client with a run of at least R consecutive windows (indices
//!    w, w+1, …) each holding more than T requests, where R =
//!    min([`MIN_RUN_WINDOWS`], the number of windows the input spans). If no
//!    client qualifies: stop.
//! 4. Drop every sample of the separated clients and go back to 2, at most
//!    [`MAX_ROUNDS`] rounds.
//!
//! The recommendation then rests on the remaining samples. Every step works on
//! multisets and sets of client ids, so the result depends neither on input
//! order nor on the number of threads.
//!
//! Why runs of consecutive windows rather than "any window above T" (the first
//! rule tried): in heavy-tailed but homogeneous traffic (every client drawing
//! its windows from the same Pareto tail) p99.9 exceeds 5 × p99 too, and one
//! window above T is common to a fifth of the clients, so that rule separates
//! honest clients; three windows in a row above T are a sustained rate, which
//! independent heavy-tailed windows almost never produce. The tests of this
//! module hold the evidence.
//!
//! Why p95 when the tail is flat above p99: p99 stands for the population
//! only while the clients apart hold under 1% of the samples. A batch job
//! busy in every window and two runaway loops in a log of 120 clients hold
//! more; their windows are then p99 itself, p99.9 is within 5 × p99, and the
//! rule at p99 alone separated nobody (a limit of 5592/1m where ordinary
//! clients peak near 110). On a homogeneous Pareto tail of index α, p99.9 /
//! p99 = 10^(1/α) and p99 / p95 = 5^(1/α): whenever the second exceeds 5 the
//! first exceeds 10, so the step at p95 is never reached there.

use std::fmt;
use std::str::FromStr;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::events::Id;
use crate::stats::ClientPeak;
use crate::stats::quantiles::{CountDistribution, Quantiles};

/// A scope with fewer clients than this keeps the literal definition.
pub const MIN_CLIENTS: u64 = 20;

/// The tail is steep when p99.9 > this × p99 (else when p99 > this × p95);
/// the threshold T is this × p99 (else × p95).
pub const TAIL_RATIO: u64 = 5;

/// The quantile a steep tail is measured from, and T set by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TailBasis {
    P99,
    P95,
}

impl fmt::Display for TailBasis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TailBasis::P99 => "p99",
            TailBasis::P95 => "p95",
        })
    }
}

/// Where the tail of `q` is steep (step 2), with that quantile's value.
pub fn steep_tail(q: &Quantiles) -> Option<(TailBasis, u64)> {
    if q.p999 > TAIL_RATIO.saturating_mul(q.p99) {
        Some((TailBasis::P99, q.p99))
    } else if q.p999 > TAIL_RATIO.saturating_mul(q.p95) {
        Some((TailBasis::P95, q.p95))
    } else {
        None
    }
}

/// Windows in a row above T that separate a client.
pub const MIN_RUN_WINDOWS: u64 = 3;

/// Rounds of separation at most.
pub const MAX_ROUNDS: u32 = 8;

/// Which samples a recommendation rests on (`--baseline`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineChoice {
    /// Separate clients whose traffic is a different population first.
    #[default]
    Robust,
    /// Every (client, window) sample counts (the literal definition).
    All,
}

impl FromStr for BaselineChoice {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "robust" => Ok(BaselineChoice::Robust),
            "all" => Ok(BaselineChoice::All),
            other => Err(format!("unknown baseline `{other}` (use robust or all)")),
        }
    }
}

impl fmt::Display for BaselineChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BaselineChoice::Robust => "robust",
            BaselineChoice::All => "all",
        })
    }
}

/// How the baseline of one scope was formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineRule {
    /// Every sample, as asked (`--baseline all`).
    All,
    /// The robust rule ran (it may have separated nobody).
    Robust,
    /// Robust was asked, but the scope has fewer than [`MIN_CLIENTS`] clients.
    FewClients,
}

/// A client left out of a scope's baseline, with the figures that explain why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Separated {
    pub client: Id,
    pub requests: u64,
    pub peak_window: u64,
    /// p99 of the samples when it was separated; the quantile T was set by
    /// (p99, or p95 when the tail was steep only there) and its value; T =
    /// [`TAIL_RATIO`] × that value.
    pub p99: u64,
    pub basis: TailBasis,
    pub basis_value: u64,
    pub threshold: u64,
    /// Its windows above T, and the longest run of them in a row.
    pub windows_above: u64,
    pub longest_run: u64,
    /// The round (1-based) that separated it.
    pub round: u32,
}

/// The baseline of one scope.
#[derive(Debug, Clone)]
pub struct ScopeBaseline {
    pub rule: BaselineRule,
    /// The figures of the samples the recommendation rests on.
    pub per_window: Quantiles,
    /// Separated clients, largest peak window first (ties by id).
    pub separated: Vec<Separated>,
    /// True when [`MAX_ROUNDS`] ended the separation before the tail flattened.
    pub rounds_exhausted: bool,
    ids: FxHashSet<Id>,
}

impl ScopeBaseline {
    /// The literal baseline of a scope.
    pub fn literal(rule: BaselineRule, per_window: Quantiles) -> Self {
        ScopeBaseline {
            rule,
            per_window,
            separated: Vec::new(),
            rounds_exhausted: false,
            ids: FxHashSet::default(),
        }
    }

    /// Whether `client` was separated from this baseline.
    pub fn is_separated(&self, client: Id) -> bool {
        self.ids.contains(&client)
    }
}

/// One scope to form a baseline for.
pub struct ScopeInput<'a> {
    pub per_window: &'a CountDistribution,
    /// Every client of the scope with its peaks.
    pub peaks: &'a [ClientPeak],
}

/// Supplies the window counts of (scope, client) pairs on demand.
pub trait WindowLoader {
    /// For each asked (scope index, client): its (window index, count) pairs in
    /// window order, one per window with at least one request.
    fn load(&mut self, asked: &[(usize, Id)]) -> Vec<Vec<(i64, u64)>>;
}

/// Forms the baseline of every scope (`span_windows`: how many windows the
/// input spans, first to last request).
pub fn baselines(
    choice: BaselineChoice,
    scopes: &[ScopeInput<'_>],
    span_windows: u64,
    loader: &mut dyn WindowLoader,
) -> Vec<ScopeBaseline> {
    let min_run = MIN_RUN_WINDOWS.min(span_windows.max(1));
    baselines_with(choice, scopes, min_run, loader)
}

/// Per-scope state while separating.
struct State<'a> {
    input: &'a ScopeInput<'a>,
    remaining: Option<CountDistribution>,
    loaded: FxHashMap<Id, Vec<(i64, u64)>>,
    candidates: Vec<Id>,
    threshold: u64,
    p99: u64,
    basis: (TailBasis, u64),
    active: bool,
    baseline: ScopeBaseline,
}

impl State<'_> {
    fn quantiles(&self) -> Quantiles {
        match &self.remaining {
            Some(d) => d.quantiles(),
            None => self.input.per_window.quantiles(),
        }
    }
}

/// [`baselines`] with the run length given (tests compare rules with it).
pub(crate) fn baselines_with(
    choice: BaselineChoice,
    scopes: &[ScopeInput<'_>],
    min_run: u64,
    loader: &mut dyn WindowLoader,
) -> Vec<ScopeBaseline> {
    let mut states: Vec<State<'_>> = scopes
        .iter()
        .map(|input| {
            let literal = input.per_window.quantiles();
            let rule = match choice {
                BaselineChoice::All => BaselineRule::All,
                BaselineChoice::Robust if (input.peaks.len() as u64) < MIN_CLIENTS => {
                    BaselineRule::FewClients
                }
                BaselineChoice::Robust => BaselineRule::Robust,
            };
            State {
                input,
                remaining: None,
                loaded: FxHashMap::default(),
                candidates: Vec::new(),
                threshold: 0,
                p99: 0,
                basis: (TailBasis::P99, 0),
                active: rule == BaselineRule::Robust,
                baseline: ScopeBaseline::literal(rule, literal),
            }
        })
        .collect();
    for round in 1..=MAX_ROUNDS {
        let mut asked = Vec::new();
        for (s, state) in states.iter_mut().enumerate().filter(|(_, s)| s.active) {
            let q = state.quantiles();
            let Some(basis) = steep_tail(&q) else {
                state.active = false;
                continue;
            };
            state.p99 = q.p99;
            state.basis = basis;
            state.threshold = TAIL_RATIO.saturating_mul(basis.1);
            state.candidates = state
                .input
                .peaks
                .iter()
                .filter(|p| p.peak_window > state.threshold)
                .map(|p| p.client)
                .filter(|c| !state.baseline.ids.contains(c))
                .collect();
            asked.extend(
                state
                    .candidates
                    .iter()
                    .filter(|c| !state.loaded.contains_key(c))
                    .map(|&c| (s, c)),
            );
        }
        if !asked.is_empty() {
            for (&(s, c), windows) in asked.iter().zip(loader.load(&asked)) {
                states[s].loaded.insert(c, windows);
            }
        }
        let mut any_active = false;
        for state in states.iter_mut().filter(|s| s.active) {
            separate_round(state, round, min_run);
            any_active |= state.active;
        }
        if !any_active {
            break;
        }
        if round == MAX_ROUNDS {
            for state in states.iter_mut().filter(|s| s.active) {
                state.baseline.rounds_exhausted = true;
            }
        }
    }
    states
        .into_iter()
        .map(|mut state| {
            if let Some(rest) = &state.remaining {
                state.baseline.per_window = rest.quantiles();
            }
            state.baseline.separated.sort_by(|a, b| {
                b.peak_window
                    .cmp(&a.peak_window)
                    .then(a.client.cmp(&b.client))
            });
            state.baseline
        })
        .collect()
}

/// One round of step 3 and 4 for one scope whose tail is steep.
fn separate_round(state: &mut State<'_>, round: u32, min_run: u64) {
    let t = state.threshold;
    let mut removed = Vec::new();
    let mut newly = Vec::new();
    for &c in &state.candidates {
        let windows = &state.loaded[&c];
        let (above, run) = runs_above(windows, t);
        if run >= min_run {
            newly.push((c, above, run));
            removed.extend(windows.iter().map(|&(_, n)| n));
        }
    }
    if newly.is_empty() {
        state.active = false;
        return;
    }
    for &(c, windows_above, longest_run) in &newly {
        state.baseline.ids.insert(c);
        let peak = state.input.peaks.iter().find(|p| p.client == c);
        let peak = peak.expect("candidates come from the scope's peaks");
        state.baseline.separated.push(Separated {
            client: c,
            requests: peak.requests,
            peak_window: peak.peak_window,
            p99: state.p99,
            basis: state.basis.0,
            basis_value: state.basis.1,
            threshold: t,
            windows_above,
            longest_run,
            round,
        });
    }
    let ids = &state.baseline.ids;
    let max = state
        .input
        .peaks
        .iter()
        .filter(|p| !ids.contains(&p.client))
        .map(|p| p.peak_window)
        .max()
        .unwrap_or(0);
    let current = state.remaining.as_ref().unwrap_or(state.input.per_window);
    state.remaining = Some(current.without(&removed, max));
}

/// How many windows hold more than `t`, and the longest run of consecutive
/// windows that all do.
pub fn runs_above(windows: &[(i64, u64)], t: u64) -> (u64, u64) {
    let (mut above, mut run, mut longest) = (0u64, 0u64, 0u64);
    let mut previous: Option<i64> = None;
    for &(w, n) in windows {
        if n > t {
            above += 1;
            run = if previous.is_some_and(|p| p + 1 == w) {
                run + 1
            } else {
                1
            };
            longest = longest.max(run);
            previous = Some(w);
        } else {
            previous = None;
        }
    }
    (above, longest)
}

#[cfg(test)]
mod tests;
