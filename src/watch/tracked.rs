//! The profile of each client a rule would reject most: what `rlctl analyze`
//! recognises ([`crate::profile`]), with its thresholds, tests and wording,
//! from what a watch can know in fixed memory.
//!
//! Only the clients a rule's Space-Saving table ([`super::top`]) holds are
//! followed, from the request that brought them in (its window's count is
//! taken from the rolling figures); what is kept about a client is dropped
//! when it leaves the table. Per client: its windows of the last hour
//! (at most one hour's worth), its requests on its [`ENDPOINTS_KEPT`] busiest
//! endpoints (a Space-Saving table of its own), and its 4xx answers (429
//! aside) with their distinct endpoints ([`Distinct`]).
//!
//! Differences from `rlctl analyze`, which sees the whole log:
//! - T = 5 × the p99 of the rule's requests per client per window over the
//!   last hour, leaving out the windows of clients that were in the top
//!   table when their window closed ([`super::rolling`]), not the baseline
//!   `rlctl analyze` keeps after separating heavy clients round by round;
//! - the windows spanned are those of the last hour since the rule's first
//!   request; a client's windows before it entered the table are unknown and
//!   count as not above T;
//! - endpoint shares and 4xx counts are over the requests since the client
//!   entered the table.
//!
//! Runaway loops, heavy steady clients and scanners are recognised; periodic
//! probes, crawlers and shared addresses are not (they need every gap, user
//! agent or user of a client, which the watch does not read).

use std::collections::{HashMap, VecDeque};

use super::distinct::{Distinct, key_hash};
use super::top::TopClients;
use crate::profile::{Finding, WindowFacts, runaway, scanner, steady};
use crate::recommend::baseline::{TAIL_RATIO, runs_above};
use crate::units::{Millis, Window};

/// Endpoints counted per tracked client.
pub const ENDPOINTS_KEPT: usize = 16;
const HOUR_MS: Millis = 3_600_000;

/// What is kept about one tracked client.
#[derive(Debug, Clone)]
struct Track {
    /// Its windows of the last hour, oldest first: (window index, requests).
    windows: VecDeque<(i64, u64)>,
    /// Requests since it entered the table.
    requests: u64,
    endpoints: TopClients,
    client_errors: u64,
    error_endpoints: Distinct,
}

impl Track {
    fn add(&mut self, window: i64, oldest: i64, endpoint: &str, status: u16) {
        match self.windows.back_mut() {
            Some((w, n)) if *w == window => *n += 1,
            _ => self.windows.push_back((window, 1)),
        }
        while self.windows.front().is_some_and(|&(w, _)| w < oldest) {
            self.windows.pop_front();
        }
        self.requests += 1;
        self.endpoints.add(endpoint);
        if (400..500).contains(&status) && status != 429 {
            self.client_errors += 1;
            self.error_endpoints.insert(key_hash(endpoint));
        }
    }
}

/// A client's profile as the watch sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profiled {
    /// Every kind it matched, in `rlctl analyze`'s order.
    pub findings: Vec<Finding>,
    /// Its busiest window of the last hour while tracked.
    pub peak_window: u64,
}

/// The tracked clients of one rule.
#[derive(Debug, Clone)]
pub struct Tracked {
    window: Window,
    /// Windows in an hour (at least 1).
    hour_windows: i64,
    /// The window of the rule's first request.
    first_window: Option<i64>,
    tracks: HashMap<Box<str>, Track>,
}

impl Tracked {
    /// Nobody tracked yet, for a rule of window `window`.
    pub fn new(window: Window) -> Self {
        Tracked {
            window,
            hour_windows: (HOUR_MS / window.millis()).max(1),
            first_window: None,
            tracks: HashMap::new(),
        }
    }

    fn window_of(&self, t: Millis) -> i64 {
        t.div_euclid(self.window.millis())
    }

    /// Notes a request of the rule by `key` at `t` (windows must not go
    /// back), adding it to `key`'s track if it is tracked.
    pub fn observe(&mut self, key: &str, t: Millis, endpoint: &str, status: u16) {
        let window = self.window_of(t);
        self.first_window.get_or_insert(window);
        let oldest = window - self.hour_windows + 1;
        if let Some(track) = self.tracks.get_mut(key) {
            track.add(window, oldest, endpoint, status);
        }
    }

    /// Starts tracking `key`, whose request at `t` (already observed) was the
    /// `in_window`-th of its current window.
    pub fn start(&mut self, key: &str, t: Millis, in_window: u64, endpoint: &str, status: u16) {
        let window = self.window_of(t);
        let mut track = Track {
            windows: VecDeque::new(),
            requests: 0,
            endpoints: TopClients::new(ENDPOINTS_KEPT),
            client_errors: 0,
            error_endpoints: Distinct::default(),
        };
        track.add(window, window, endpoint, status);
        track.windows[0].1 = in_window.max(1);
        self.tracks.insert(key.into(), track);
    }

    /// Forgets `key` (it left the top table).
    pub fn forget(&mut self, key: &str) {
        self.tracks.remove(key);
    }

    /// How many clients are tracked.
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// Whether nobody is tracked.
    pub fn is_empty(&self) -> bool {
        self.tracks.is_empty()
    }

    /// `key`'s profile in the hour ending at `now`, with T = 5 × `p99`;
    /// `None` when it is not tracked.
    pub fn profile(&self, key: &str, now: Millis, p99: u64) -> Option<Profiled> {
        let track = self.tracks.get(key)?;
        let current = self.window_of(now);
        let oldest = current - self.hour_windows + 1;
        let windows: Vec<(i64, u64)> = track
            .windows
            .iter()
            .copied()
            .filter(|&(w, _)| w >= oldest && w <= current)
            .collect();
        let span = self
            .first_window
            .map_or(0, |first| current - first.max(oldest) + 1)
            .max(0) as u64;
        let threshold = TAIL_RATIO.saturating_mul(p99);
        let (windows_above, longest_run) = runs_above(&windows, threshold);
        let w = WindowFacts {
            peak_window: windows.iter().map(|w| w.1).max().unwrap_or(0),
            active_windows: windows.len() as u64,
            windows_above,
            longest_run,
        };
        let busiest = track.endpoints.top(runaway::FEW_ENDPOINTS);
        let on_busiest: u64 = busiest.iter().map(|e| e.would_reject).sum();
        let share = on_busiest.min(track.requests) as f64 / track.requests.max(1) as f64;
        let names: Vec<&str> = busiest.iter().map(|e| e.client.as_str()).collect();
        let mut findings = Vec::new();
        if runaway::is_runaway(longest_run, share, windows_above, span) {
            findings.push(runaway::finding(
                &w,
                self.window,
                p99,
                threshold,
                share,
                &names,
            ));
        }
        if steady::is_steady(windows_above, span) {
            findings.push(steady::finding(&w, self.window, p99, threshold, span));
        }
        let error_endpoints = track.error_endpoints.count();
        if scanner::is_scanner(track.client_errors, track.requests, error_endpoints) {
            findings.push(scanner::finding(
                track.client_errors,
                track.requests,
                error_endpoints,
            ));
        }
        Some(Profiled {
            findings,
            peak_window: w.peak_window,
        })
    }
}

#[cfg(test)]
mod tests;
