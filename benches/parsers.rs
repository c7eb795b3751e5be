//! Throughput of each log parser through the real per-chunk path
//! (`parse_chunk`: parsing, client key, endpoint normalisation, interning), on
//! one thread, over one 4 MiB chunk of `rlctl generate` output (seed 1, the
//! CLI's default mix). Reported in bytes per second (criterion's bytes/s), so
//! the figures compare with `bench/run.sh`'s whole-process MB/s.
//!
//! - `combined`: the hand-written combined parser;
//! - `log_format-scan`: a custom `log_format` matched by literal scanning;
//! - `log_format-regex`: a format with adjacent variables (the regex fallback);
//! - `json`: nginx `escape=json` lines as `rlctl generate --format json` writes them;
//! - `combined-30000-paths`: combined lines with `--distinct-paths 30000`,
//!   whose chunk holds thousands of distinct targets (the request cache's
//!   misses and lookups beyond the first level of cache);
//! - `parse_chunk_sources/NAME`: each named source (`--log-format NAME`) on its
//!   hand-written fixture in `fixtures/sources/`, repeated to a chunk.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rlctl::generate::{Config, Format, Generator, Length, Shapes};
use rlctl::ingest::KeptPaths;
use rlctl::ingest::chunk::{ChunkContext, parse_chunk};
use rlctl::ingest::key::{KeySet, KeySpec};
use rlctl::ingest::lines::CHUNK_BYTES;
use rlctl::ingest::{FormatChoice, Settings, parser_for, parser_for_input};

/// A custom format as a site would write it: `combined` plus timings.
const CUSTOM: &str = r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time"#;

/// The same information with two variables written back to back.
const ADJACENT: &str =
    r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent$request_time"#;

/// About `CHUNK_BYTES` of whole generated lines, with a pool of
/// `distinct_paths` paths when given.
fn chunk(format: Format, distinct_paths: Option<u32>) -> Vec<u8> {
    let config = Config {
        length: Length::Lines(60_000),
        seed: 1,
        format,
        shapes: Shapes {
            distinct_paths,
            ..Shapes::default()
        },
        ..Config::default()
    };
    let mut out = Vec::new();
    Generator::new(&config)
        .expect("valid generator configuration")
        .write_to(&mut out)
        .expect("writing to memory");
    let end = out[..CHUNK_BYTES.min(out.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    out.truncate(end);
    out
}

fn settings(format: FormatChoice) -> Settings {
    Settings {
        inputs: Vec::new(),
        format,
        json_fields: Vec::new(),
        keys: KeySet::new(KeySpec::parse("ip", None, None).expect("valid key")),
        routes: Vec::new(),
        strict: false,
        progress: None,
        paths: KeptPaths::All,
        time_of: Default::default(),
    }
}

fn parsers(c: &mut Criterion) {
    let cases = [
        ("combined", Format::Combined, FormatChoice::Combined, None),
        (
            "log_format-scan",
            Format::Template(CUSTOM.into()),
            FormatChoice::log_format(CUSTOM),
            None,
        ),
        (
            "log_format-regex",
            Format::Template(ADJACENT.into()),
            FormatChoice::log_format(ADJACENT),
            None,
        ),
        ("json", Format::Json, FormatChoice::Json, None),
        (
            "combined-30000-paths",
            Format::Combined,
            FormatChoice::Combined,
            Some(30_000),
        ),
    ];
    let mut group = c.benchmark_group("parse_chunk");
    group.sample_size(20);
    for (name, written, read, distinct_paths) in cases {
        let data = chunk(written, distinct_paths);
        let settings = settings(read.clone());
        let parser = parser_for(&read, &settings).expect("valid format");
        let ctx = ChunkContext {
            keys: &settings.keys,
            routes: &settings.routes,
            paths: settings.paths,
        };
        let check = parse_chunk(&data, 1, parser.fork().as_mut(), &ctx);
        assert_eq!(check.parsed, check.lines, "{name}: every line parses");
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| parse_chunk(black_box(&data), 1, parser.fork().as_mut(), &ctx))
        });
    }
    group.finish();
}

/// About `CHUNK_BYTES` of a source's hand-written fixture (`fixtures/sources/`),
/// its data lines repeated after its header lines.
fn fixture_chunk(file: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sources")
        .join(file);
    let text = std::fs::read(path).expect("a source fixture");
    let (header, body): (Vec<&[u8]>, Vec<&[u8]>) = text
        .split_inclusive(|&b| b == b'\n')
        .partition(|l| l.starts_with(b"#"));
    let mut out = header.concat();
    let body = body.concat();
    while out.len() + body.len() <= CHUNK_BYTES {
        out.extend_from_slice(&body);
    }
    out
}

/// Each named source (`--log-format NAME`) on its fixture, through the same
/// per-chunk path. The fixtures hold odd lines on purpose (some are skipped),
/// so these figures are lower bounds for clean logs.
fn sources(c: &mut Criterion) {
    let cases = [
        ("alb", "alb.log"),
        ("cloudfront", "cloudfront.log"),
        ("w3c", "iis.log"),
        ("haproxy", "haproxy.log"),
        ("ingress-nginx", "ingress-nginx.log"),
        ("traefik", "traefik.log"),
        ("envoy", "envoy.log"),
        ("istio", "istio.log"),
        ("gcp", "gcp.log"),
        ("azure-frontdoor", "azure-frontdoor.log"),
        ("azure-appgw", "azure-appgw.log"),
        ("cloudflare", "cloudflare.log"),
        ("envoy-json", "envoy-json.log"),
        ("caddy", "caddy.log"),
        ("traefik-json", "traefik-json.log"),
        ("vhost_combined", "vhost_combined.log"),
    ];
    let mut group = c.benchmark_group("parse_chunk_sources");
    group.sample_size(10);
    for (name, file) in cases {
        let data = fixture_chunk(file);
        let read = FormatChoice::named(name).expect("a named source");
        let settings = settings(read.clone());
        let parser = parser_for_input(&read, &settings, &data).expect("valid source");
        let ctx = ChunkContext {
            keys: &settings.keys,
            routes: &settings.routes,
            paths: settings.paths,
        };
        let check = parse_chunk(&data, 1, parser.fork().as_mut(), &ctx);
        assert!(check.parsed * 2 > check.lines, "{name}: most lines parse");
        group.throughput(Throughput::Bytes(data.len() as u64));
        group.bench_function(BenchmarkId::from_parameter(name), |b| {
            b.iter(|| parse_chunk(black_box(&data), 1, parser.fork().as_mut(), &ctx))
        });
    }
    group.finish();
}

criterion_group!(benches, parsers, sources);
criterion_main!(benches);
