//! The boundary effect: the most admitted requests any one client got through
//! in one span (t − W, t], against L (fixed window lets up to 2L through).

use std::collections::VecDeque;

use rayon::prelude::*;

use super::{BoundaryEffect, ByClient, Traffic, name_of};
use crate::simulate::AlgorithmSpec;
use crate::units::Millis;

/// The largest count of one client's admitted requests in any (t − W, t], found
/// in one pass in time order with a queue of recent admitted times per client.
/// Among equal counts the client first by name wins (not the first in the
/// input, which would make the figure depend on the order of the files),
/// then its earliest span.
/// `rejected`, when known, lists the rows `allowed` rejects (in order).
pub(super) fn boundary_effect(
    spec: &AlgorithmSpec,
    traffic: &Traffic,
    allowed: &[bool],
    rejected: Option<&[u32]>,
) -> BoundaryEffect {
    let window = spec.limit.window.millis();
    let best = match traffic.by_client {
        Some(by_client) => busiest_span_by_client(window, traffic, by_client, allowed, rejected),
        None => busiest_span(window, traffic, allowed),
    };
    let max_admitted = best.map_or(0, |b| b.0);
    BoundaryEffect {
        limit: spec.limit.requests,
        window_s: spec.limit.window.secs(),
        max_admitted,
        ratio: max_admitted as f64 / spec.limit.requests as f64,
        client: best.map(|b| name_of(traffic.client_names, b.1)),
        span_end: best.map(|b| traffic.ts[b.2]),
    }
}

/// The busiest span as (count, client, row of its end), scanning in time order.
fn busiest_span(
    window: Millis,
    traffic: &Traffic,
    allowed: &[bool],
) -> Option<(u64, usize, usize)> {
    let mut recent: Vec<VecDeque<Millis>> = vec![VecDeque::new(); traffic.client_names.len()];
    // (count, client, row) of the best span so far.
    let mut best: Option<(u64, usize, usize)> = None;
    for (row, (&t, &client)) in traffic.ts.iter().zip(traffic.client).enumerate() {
        if !allowed[row] {
            continue;
        }
        let client = client as usize;
        if client >= recent.len() {
            recent.resize(client + 1, VecDeque::new());
        }
        let times = &mut recent[client];
        while times.front().is_some_and(|&first| first <= t - window) {
            times.pop_front();
        }
        times.push_back(t);
        let count = times.len() as u64;
        let better = best.is_none_or(|(most, c, _)| beats(traffic, (count, client), (most, c)));
        if better {
            best = Some((count, client, row));
        }
    }
    best
}

/// [`busiest_span`] client by client, in parallel: each client's admitted
/// requests in (t − W, t] with two pointers over its times; the same result
/// (the most, then the client first by name, then its earliest span).
/// With `rejected` (the rows `allowed` rejects) and the traffic's census, a
/// client none of whose requests is rejected takes its all-admitted span from
/// the census instead of a scan.
fn busiest_span_by_client(
    window: Millis,
    traffic: &Traffic,
    by_client: ByClient,
    allowed: &[bool],
    rejected: Option<&[u32]>,
) -> Option<(u64, usize, usize)> {
    let known = traffic.census.zip(rejected).map(|(census, rejected)| {
        let mut marked = vec![false; census.client_requests.len()];
        for &row in rejected {
            marked[traffic.client[row as usize] as usize] = true;
        }
        (census.spans(window, traffic, by_client), marked)
    });
    let offsets = &by_client.groups.offsets;
    (0..by_client.groups.len())
        .into_par_iter()
        .filter_map(|g| {
            let rows = &by_client.groups.rows[offsets[g]..offsets[g + 1]];
            let client = traffic.client[*rows.first()? as usize] as usize;
            let best = match &known {
                Some((spans, marked)) if !marked[client] => spans[client],
                _ => {
                    let grouped = by_client.allowed.map(|grouped| &grouped[offsets[g]..]);
                    let admitted =
                        |i: usize| grouped.map_or_else(|| allowed[rows[i] as usize], |g| g[i]);
                    busiest_in_group(window, by_client, g, admitted)
                }
            };
            best.map(|(most, row)| (most, client, row))
        })
        .reduce_with(|a, b| match beats(traffic, (b.0, b.1), (a.0, a.1)) {
            true => b,
            false => a,
        })
}

/// Whether `a` (admitted requests, client) is a busier span than `b`: more
/// requests, or as many for a client whose name sorts first.
fn beats(traffic: &Traffic, a: (u64, usize), b: (u64, usize)) -> bool {
    let name = |id: usize| {
        let names = traffic.client_names;
        (id < names.len()).then(|| names.name(id as u32))
    };
    a.0 > b.0 || (a.0 == b.0 && a.1 != b.1 && (name(a.1), a.1) < (name(b.1), b.1))
}

/// The busiest span of group `g` of `by_client` (its client's requests, `i`-th
/// admitted when `admitted(i)`) as (count, row of its end), the earliest among
/// equal counts; `None` when none is admitted.
pub(super) fn busiest_in_group(
    window: Millis,
    by_client: ByClient,
    g: usize,
    admitted: impl Fn(usize) -> bool,
) -> Option<(u64, usize)> {
    let span = by_client.groups.offsets[g]..by_client.groups.offsets[g + 1];
    let rows = &by_client.groups.rows[span.clone()];
    let ts = &by_client.ts[span];
    let (mut left, mut count, mut best) = (0, 0u64, None);
    for (i, &t) in ts.iter().enumerate() {
        if !admitted(i) {
            continue;
        }
        count += 1;
        while ts[left] <= t - window {
            count -= u64::from(admitted(left));
            left += 1;
        }
        if best.is_none_or(|(most, _)| count > most) {
            best = Some((count, rows[i] as usize));
        }
    }
    best
}
