//! Endpoint discovery's plan (the distinct paths indexed, their trie built in
//! the canonical order, every path matched to its template) on a table like
//! `rlctl generate --distinct-paths 1000000` makes: a million distinct raw
//! paths of the generator's four shapes (cache-busted assets, short hex ids,
//! base62 ids, slugs), every one requested once and a quarter of a million
//! more requests drawn among them, besides a million requests to 30 ordinary
//! endpoints. Reported per distinct path (criterion's elements/s).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rlctl::discover::plan_discovery;
use rlctl::events::{Event, EventTable, Id};
use rlctl::generate::distinct::{PoolAssigner, write_path};

const DISTINCT: u32 = 1_000_000;
const REPEATS: u32 = 250_000;
const ORDINARY: u32 = 1_000_000;

fn table() -> EventTable {
    let mut table = EventTable::default();
    let mut path = Vec::new();
    let mut assigner = PoolAssigner::new(DISTINCT, 1);
    let ordinary: Vec<Id> = (0..30)
        .map(|i| table.endpoints.intern(&format!("GET /api/resource-{i}")))
        .collect();
    for row in 0..DISTINCT + REPEATS + ORDINARY {
        let endpoint = if row % 9 < 4 {
            ordinary[(row as usize * 7) % ordinary.len()]
        } else {
            path.clear();
            path.extend_from_slice(b"GET ");
            write_path(assigner.next_index(), &mut path);
            table
                .endpoints
                .intern(std::str::from_utf8(&path).expect("pool paths are ASCII"))
        };
        table.push(Event {
            ts: i64::from(row) * 10,
            client: row % 200,
            endpoint,
            ..Event::default()
        });
    }
    table
}

fn bench(c: &mut Criterion) {
    let table = table();
    let mut group = c.benchmark_group("discovery");
    group.sample_size(20);
    group.throughput(Throughput::Elements(u64::from(DISTINCT)));
    group.bench_function("plan/million_paths", |b| {
        b.iter(|| black_box(plan_discovery(black_box(&table), &[])))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
