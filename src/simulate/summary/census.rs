//! What a summary needs of its events that no decision changes: the requests
//! of each client and endpoint, how many clients there are, and each client's
//! busiest span (t − W, t] when all its requests are admitted.
//!
//! The scenarios of one run (one per algorithm) summarise the same events
//! with other decisions: with a census worked out once and shared, a summary
//! reads only its rejected requests (usually few) for its counts, and scans
//! again for the boundary effect only the clients it rejected some requests
//! of (a client with none rejected has its all-admitted span). It decides
//! nothing and changes no figure: a summary with a census equals the one
//! without.

use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::{ByClient, Traffic};
use crate::units::Millis;

/// Per client id, its busiest all-admitted span as (count, row of its end).
pub(super) type Spans = Arc<[Option<(u64, usize)>]>;

/// Decision-free figures of one set of events (see the module doc).
#[derive(Debug)]
pub struct Census {
    /// Requests per client id (up to the largest id seen).
    pub(super) client_requests: Vec<u64>,
    /// Requests per endpoint id (up to the largest id seen).
    pub(super) endpoint_requests: Vec<u64>,
    /// Clients with at least one request.
    pub(super) clients: u64,
    /// Per window W (ms), the clients' busiest spans, worked out on first use.
    spans: Mutex<Vec<(Millis, Spans)>>,
}

impl Census {
    /// The census of the events with these `client` and `endpoint` ids.
    pub fn new(client: &[u32], endpoint: &[u32]) -> Self {
        let (client_requests, endpoint_requests) =
            rayon::join(|| requests_per_id(client), || requests_per_id(endpoint));
        let clients = client_requests.iter().filter(|&&n| n > 0).count() as u64;
        Census {
            client_requests,
            endpoint_requests,
            clients,
            spans: Mutex::new(Vec::new()),
        }
    }

    /// Per client id, its busiest span of `window` ms when all its requests are
    /// admitted, from `traffic` grouped `by_client` (the events this census
    /// counted): worked out once per window.
    pub(super) fn spans(&self, window: Millis, traffic: &Traffic, by_client: ByClient) -> Spans {
        let known = |spans: &[(Millis, Spans)]| {
            (spans.iter())
                .find(|(w, _)| *w == window)
                .map(|(_, s)| s.clone())
        };
        if let Some(spans) = known(&self.spans.lock().expect("census lock")) {
            return spans;
        }
        // Worked out without the lock held: the parallel work below may run
        // another summary's request for spans on this thread.
        let per_group: Vec<Option<(u64, usize)>> = (0..by_client.groups.len())
            .into_par_iter()
            .map(|g| super::boundary::busiest_in_group(window, by_client, g, |_| true))
            .collect();
        let mut by_id = vec![None; self.client_requests.len()];
        for (count, row) in per_group.into_iter().flatten() {
            by_id[traffic.client[row] as usize] = Some((count, row));
        }
        let computed: Spans = by_id.into();
        let mut spans = self.spans.lock().expect("census lock");
        if let Some(spans) = known(&spans) {
            return spans;
        }
        spans.push((window, computed.clone()));
        computed
    }
}

/// How many times each id occurs in `ids`, up to the largest.
fn requests_per_id(ids: &[u32]) -> Vec<u64> {
    let mut counts: Vec<u64> = Vec::new();
    for &id in ids {
        let id = id as usize;
        if id >= counts.len() {
            counts.resize(id + 1, 0);
        }
        counts[id] += 1;
    }
    counts
}

#[cfg(test)]
mod tests;
