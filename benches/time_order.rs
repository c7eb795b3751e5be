//! Putting a table of 1,000,000 rows (whole-second times over three hours,
//! four id columns) in time order, as ingestion does before the analysis, for
//! the input orders real logs come in: already sorted, shuffled within each
//! minute, written as requests end (one in ten up to 3 s late, the rest up
//! to 100 ms), and two, four or ten servers' sorted logs one after another.
//! Reported per row (criterion's elements/s); each iteration sorts a fresh
//! copy.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rlctl::events::{Event, EventTable, Id};
use rlctl::units::Millis;

const ROWS: usize = 1_000_000;
const SPAN_MS: u64 = 3 * 3_600_000;

/// A fixed xorshift stream.
fn stream() -> impl FnMut() -> u64 {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// The rows' times in time order (whole seconds), and the table of `order`.
fn table(times: &[Millis], order: &[usize]) -> EventTable {
    let mut t = EventTable::default();
    for (row, &i) in order.iter().enumerate() {
        t.push(Event {
            ts: times[i],
            client: (i % 5_000) as Id,
            endpoint: (i % 40) as Id,
            method: 0,
            path: row as Id,
            status: 200,
            ..Event::default()
        });
    }
    t
}

/// `k` servers' sorted shares of the rows, one after another.
fn servers_of(k: usize) -> Vec<usize> {
    let mut servers: Vec<usize> = (0..ROWS).collect();
    servers.sort_by_key(|&i| (i * 7 % k, i));
    servers
}

fn inputs() -> Vec<(&'static str, EventTable)> {
    let mut next = stream();
    let mut times: Vec<Millis> = (0..ROWS)
        .map(|_| (next() % SPAN_MS) as Millis / 1000 * 1000)
        .collect();
    times.sort_unstable();
    let sorted: Vec<usize> = (0..ROWS).collect();
    // Each minute's rows in a random order.
    let mut shuffled = sorted.clone();
    let mut start = 0;
    while start < ROWS {
        let minute = times[start] / 60_000;
        let end = start + times[start..].partition_point(|&t| t / 60_000 == minute);
        for i in (start + 1..end).rev() {
            shuffled.swap(i, start + (next() % (i - start + 1) as u64) as usize);
        }
        start = end;
    }
    // In the order the requests end.
    let mut at_end = sorted.clone();
    let ends: Vec<Millis> = times
        .iter()
        .map(|&t| {
            let late = if next().is_multiple_of(10) {
                3_000
            } else {
                100
            };
            t + (next() % late) as Millis
        })
        .collect();
    at_end.sort_by_key(|&i| (ends[i], i));
    vec![
        ("sorted", table(&times, &sorted)),
        ("shuffled-minutes", table(&times, &shuffled)),
        ("logged-at-end", table(&times, &at_end)),
        ("ten-servers", table(&times, &servers_of(10))),
        ("two-servers", table(&times, &servers_of(2))),
        ("four-servers", table(&times, &servers_of(4))),
    ]
}

fn time_order(c: &mut Criterion) {
    let mut group = c.benchmark_group("sort_by_time");
    group.throughput(Throughput::Elements(ROWS as u64));
    group.sample_size(10);
    for (name, table) in inputs() {
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter_batched(
                || table.clone(),
                |mut t| {
                    t.sort_by_time();
                    black_box(t)
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, time_order);
criterion_main!(benches);
