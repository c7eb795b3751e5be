//! Totals from the rejected requests alone: requests per client and endpoint
//! come from the traffic's [`Census`] (or one worked out here), so a summary
//! reads each decision once to find the rejected rows and then only those.

use rayon::prelude::*;

use super::{Census, MinuteRejects, Rejects, Totals, Traffic, name_of};
use crate::events::Interner;
use crate::units::Millis;

const MS_PER_MINUTE: i64 = 60_000;

/// Decisions per parallel task when looking for rejections.
const SCAN_BLOCK: usize = 1 << 16;

/// The rows `allowed` rejects, in order.
pub(super) fn rejected_rows(allowed: &[bool]) -> Vec<u32> {
    let blocks: Vec<Vec<u32>> = allowed
        .par_chunks(SCAN_BLOCK)
        .enumerate()
        .map(|(b, block)| {
            // All admitted (the usual block) is told by a branch-free pass.
            if block.iter().fold(true, |all, &ok| all & ok) {
                return Vec::new();
            }
            let first = (b * SCAN_BLOCK) as u32;
            (block.iter().enumerate())
                .filter(|&(_, &ok)| !ok)
                .map(|(i, _)| first + i as u32)
                .collect()
        })
        .collect();
    blocks.concat()
}

/// The totals of `requests` decisions over `traffic` of which the rows
/// `rejected` (in order) were rejected, listing the `top` most rejected clients.
pub(super) fn of_rejected(
    traffic: &Traffic,
    requests: usize,
    rejected: &[u32],
    top: usize,
) -> Totals {
    let worked_out;
    let census = match traffic.census {
        Some(census) => census,
        None => {
            worked_out = Census::new(traffic.client, traffic.endpoint);
            &worked_out
        }
    };
    let ((clients, endpoints), rejects_per_minute) = rayon::join(
        || {
            rayon::join(
                || {
                    let (ids, names) = (traffic.client, traffic.client_names);
                    rejects(ids, rejected, &census.client_requests, names)
                },
                || {
                    let (ids, names) = (traffic.endpoint, traffic.endpoint_names);
                    rejects(ids, rejected, &census.endpoint_requests, names)
                },
            )
        },
        || rejects_per_minute(traffic.ts, rejected),
    );
    let rejected_at = rejected.iter().map(|&row| traffic.ts[row as usize]);
    let requests = requests as u64;
    let rejected = rejected.len() as u64;
    let clients_rejected = clients.len() as u64;
    Totals {
        requests,
        allowed: requests - rejected,
        rejected,
        reject_rate: ratio(rejected, requests),
        clients: census.clients,
        clients_rejected,
        clients_rejected_share: ratio(clients_rejected, census.clients),
        rejected_by_endpoint: most_rejected(endpoints, usize::MAX),
        top_rejected_clients: most_rejected(clients, top),
        rejects_per_minute,
        first_reject: rejected_at.clone().min(),
        last_reject: rejected_at.max(),
    }
}

fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// Requests and rejections of each id in `ids` that the rows `rejected`
/// name, in id order; `requests` holds each id's requests.
fn rejects(ids: &[u32], rejected: &[u32], requests: &[u64], names: &Interner) -> Vec<Rejects> {
    let entry = |id: usize, rejected: u64| Rejects {
        name: name_of(names, id),
        requests: requests[id],
        rejected,
    };
    // Few rejections among many ids: sorted; otherwise counted per id.
    if rejected.len().saturating_mul(16) < requests.len() {
        let mut hit: Vec<u32> = rejected.iter().map(|&row| ids[row as usize]).collect();
        hit.sort_unstable();
        return (hit.chunk_by(|a, b| a == b))
            .map(|run| entry(run[0] as usize, run.len() as u64))
            .collect();
    }
    let mut counts = vec![0u64; requests.len()];
    for &row in rejected {
        counts[ids[row as usize] as usize] += 1;
    }
    (counts.iter().enumerate())
        .filter(|&(_, &n)| n > 0)
        .map(|(id, &n)| entry(id, n))
        .collect()
}

/// Entries with rejections, most rejected first (then most requests, then name).
pub(super) fn most_rejected(mut all: Vec<Rejects>, top: usize) -> Vec<Rejects> {
    all.retain(|r| r.rejected > 0);
    all.sort_by(|a, b| {
        (b.rejected, b.requests)
            .cmp(&(a.rejected, a.requests))
            .then_with(|| a.name.cmp(&b.name))
    });
    all.truncate(top);
    all
}

/// Rejections per epoch-aligned minute of the rows `rejected` at times `ts`.
fn rejects_per_minute(ts: &[Millis], rejected: &[u32]) -> Vec<MinuteRejects> {
    let mut minutes: Vec<Millis> = (rejected.iter())
        .map(|&row| ts[row as usize].div_euclid(MS_PER_MINUTE) * MS_PER_MINUTE)
        .collect();
    minutes.sort_unstable();
    let mut series: Vec<MinuteRejects> = Vec::new();
    for minute in minutes {
        match series.last_mut() {
            Some(last) if last.minute == minute => last.rejected += 1,
            _ => series.push(MinuteRejects {
                minute,
                rejected: 1,
            }),
        }
    }
    series
}
