//! Throughput of each algorithm through the real replay path: 1,000,000 decisions
//! over 1,000 clients (skewed: a few clients send much of the traffic), one hour
//! of traffic against a limit of 10/1m per client, so both admissions and
//! rejections are frequent. Reported per decision (criterion's elements/s).
//!
//! `replay` uses rayon's default pool; `replay-1-thread` pins a one-thread pool to
//! show the cost per core.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rlctl::simulate::{AlgorithmKind, AlgorithmSpec, Rule, replay};
use rlctl::units::Millis;

const EVENTS: usize = 1_000_000;
const CLIENTS: u32 = 1_000;
const HOUR_MS: u64 = 3_600_000;

/// Time-sorted events and their client ids, from a fixed xorshift seed.
fn workload() -> (Vec<Millis>, Vec<u32>) {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let start: Millis = 1_700_000_000_000;
    let mut ts: Vec<Millis> = (0..EVENTS)
        .map(|_| start + (next() % HOUR_MS) as i64)
        .collect();
    ts.sort_unstable();
    let client = (0..EVENTS)
        .map(|_| {
            let r = next();
            // Half the traffic from 20 heavy clients, half spread over all 1,000.
            if r % 2 == 0 {
                (r >> 32) as u32 % 20
            } else {
                (r >> 32) as u32 % CLIENTS
            }
        })
        .collect();
    (ts, client)
}

fn algorithms(c: &mut Criterion) {
    let (ts, client) = workload();
    let limit = "10/1m".parse().unwrap();
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for (group_name, pool) in [("replay", None), ("replay-1-thread", Some(&one_thread))] {
        let mut group = c.benchmark_group(group_name);
        group.throughput(Throughput::Elements(EVENTS as u64));
        group.sample_size(10);
        for kind in AlgorithmKind::ALL {
            let rules = [Rule {
                limiter: AlgorithmSpec::new(kind, limit).limiter().unwrap(),
                keys: &client,
                key_count: CLIENTS as usize,
            }];
            let run = || replay(black_box(&ts), black_box(&rules)).unwrap();
            group.bench_function(BenchmarkId::from_parameter(kind), |b| match pool {
                Some(pool) => b.iter(|| pool.install(run)),
                None => b.iter(run),
            });
        }
        group.finish();
    }
}

criterion_group!(benches, algorithms);
criterion_main!(benches);
