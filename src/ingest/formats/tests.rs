//! Every named source on its hand-written fixture (`fixtures/sources/`, lines
//! written from the vendor's documented fields, odd cases included), with the
//! counts worked out by hand: lines = parsed + skipped, the clients, the top
//! client and the busiest second of any one client.

use std::collections::HashMap;
use std::path::PathBuf;

use super::*;
use crate::ingest::{FormatChoice, Ingested, ingest};

mod json_sources;

#[test]
fn names_are_unique_and_documented() {
    for (i, source) in SOURCES.iter().enumerate() {
        assert!(
            SOURCES[..i].iter().all(|s| s.name != source.name),
            "{}",
            source.name
        );
        assert!(source.doc.contains('/'), "{}", source.name);
        assert_eq!(named(source.name), Some(source));
    }
}

/// What a fixture must give, worked out by hand from its lines.
struct Expected {
    file: &'static str,
    /// The detected source (its `--log-format` name).
    format: &'static str,
    lines: u64,
    parsed: u64,
    clients: usize,
    top_client: &'static str,
    top_requests: usize,
    /// The most requests one client made within one second.
    busiest_second: usize,
    /// The earliest event time (UTC milliseconds).
    first_ms: i64,
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/sources")
        .join(name)
}

pub(crate) fn read(files: &[&str], format: FormatChoice, time_of: TimeOf) -> Ingested {
    let settings = Settings {
        inputs: files.iter().map(|f| fixture(f)).collect(),
        format,
        time_of,
        ..Settings::for_detection()
    };
    ingest(&settings).unwrap()
}

/// Requests per client name.
fn per_client(done: &Ingested) -> HashMap<&str, usize> {
    let mut counts = HashMap::new();
    for &client in &done.table.client {
        *counts.entry(done.table.clients.name(client)).or_default() += 1;
    }
    counts
}

fn busiest_second(done: &Ingested) -> usize {
    let mut counts: HashMap<(u32, i64), usize> = HashMap::new();
    for (&client, &ts) in done.table.client.iter().zip(&done.table.ts) {
        *counts.entry((client, ts.div_euclid(1000))).or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

fn check(e: &Expected) {
    let done = read(&[e.file], FormatChoice::Auto, TimeOf::Arrival);
    let report = &done.report;
    let format = &report.files[0].format;
    assert!(
        format.starts_with(&format!("{} (detected", e.format)),
        "{}: {format}",
        e.file
    );
    assert_eq!(
        (report.lines, report.parsed),
        (e.lines, e.parsed),
        "{}",
        e.file
    );
    assert_eq!(report.lines, report.parsed + report.skipped, "{}", e.file);
    let clients = per_client(&done);
    assert_eq!(clients.len(), e.clients, "{}: {clients:?}", e.file);
    let top = clients.iter().max_by_key(|(_, n)| **n).unwrap();
    assert_eq!(
        (*top.0, *top.1),
        (e.top_client, e.top_requests),
        "{}",
        e.file
    );
    assert!(
        clients.values().filter(|n| **n == e.top_requests).count() == 1,
        "{}: the top client is not unique",
        e.file
    );
    assert_eq!(busiest_second(&done), e.busiest_second, "{}", e.file);
    assert_eq!(done.table.ts.first(), Some(&e.first_ms), "{}", e.file);
}

/// 2026-01-05T00:00:00Z.
const T0: i64 = 1_767_571_200_000;

#[test]
fn ingress_nginx_upstreaminfo() {
    check(&Expected {
        file: "ingress-nginx.log",
        format: "ingress-nginx",
        lines: 6,
        parsed: 6,
        // 192.0.2.10: lines 1-3; 198.51.100.7: 4, 5 (TLS noise is a request); 2001:db8::5: 6.
        clients: 3,
        top_client: "192.0.2.10",
        top_requests: 3,
        // Arrival = $time_local + 0.5 s − $request_time, in whole seconds:
        // lines 1 and 2 arrive in second 0, line 3 (2.503 s, ended in second 1) in second −2.
        busiest_second: 2,
        first_ms: T0 - 2_000,
    });
}

#[test]
fn envoy_default_format() {
    check(&Expected {
        file: "envoy.log",
        format: "envoy",
        lines: 7,
        // Lines 6 and 7 have no X-Forwarded-For: no client (the format logs no address).
        parsed: 5,
        clients: 2,
        top_client: "203.0.113.9",
        top_requests: 3,
        // 203.0.113.9 at 0.310, 0.800 and 0.950 (START_TIME).
        busiest_second: 3,
        first_ms: T0 + 310,
    });
}

#[test]
fn istio_default_format() {
    check(&Expected {
        file: "istio.log",
        format: "istio",
        lines: 6,
        parsed: 6,
        // DOWNSTREAM_REMOTE_ADDRESS without its port: 10.44.1.23 (lines 1-3),
        // 192.168.0.24 (4, 5; status 0 counts), [2001:db8::7]:51000 (6).
        clients: 3,
        top_client: "10.44.1.23",
        top_requests: 3,
        busiest_second: 3,
        first_ms: T0 + 409,
    });
}

#[test]
fn traefik_common_log_format() {
    check(&Expected {
        file: "traefik.log",
        format: "traefik",
        lines: 6,
        // Status 0 (line 2) and unescaped quotes (line 5) are requests.
        parsed: 6,
        clients: 3,
        top_client: "192.0.2.20",
        top_requests: 3,
        // 192.0.2.20 twice in second 0; 198.51.100.30 twice in second 1.
        busiest_second: 2,
        first_ms: T0,
    });
}

#[test]
fn time_of_logged_reads_the_time_as_written_or_the_end() {
    // ingress-nginx: $time_local as logged (line 1 at second 0).
    let done = read(&["ingress-nginx.log"], FormatChoice::Auto, TimeOf::Logged);
    assert_eq!(done.table.ts.first(), Some(&T0));
    assert!(
        done.report.files[0]
            .format
            .contains("time: $time_local (when")
    );
    // Envoy: START_TIME + DURATION: line 1 ends at 0.310 + 0.226.
    let done = read(&["envoy.log"], FormatChoice::Auto, TimeOf::Logged);
    assert_eq!(done.table.ts.first(), Some(&(T0 + 536)));
    // Traefik: the start plus the duration: line 2 (60012 ms) ends last.
    let done = read(&["traefik.log"], FormatChoice::Auto, TimeOf::Logged);
    assert_eq!(done.table.ts.last(), Some(&(T0 + 60_012)));
}

#[test]
fn the_envoy_output_says_where_the_client_comes_from() {
    let done = read(
        &["envoy.log"],
        FormatChoice::named("envoy").unwrap(),
        TimeOf::Arrival,
    );
    let format = &done.report.files[0].format;
    assert!(
        format.starts_with("envoy (client: the first X-Forwarded-For address"),
        "{format}"
    );
    assert_eq!(
        done.report.skipped_by_reason["no value for the client key"],
        2
    );
}

#[test]
fn aws_application_load_balancer() {
    check(&Expected {
        file: "alb.log",
        format: "alb",
        lines: 6,
        parsed: 6,
        // client:port without the port; IPv6 is written without brackets.
        // 192.0.2.1: lines 1-3; 198.51.100.2 (460, the client closed), 2001:db8::1
        // (a websocket logged when it closed, 30 s later), 203.0.113.50 (`"- - - "`).
        clients: 4,
        top_client: "192.0.2.1",
        top_requests: 3,
        // request_creation_time: 0.086, 0.500, 0.900.
        busiest_second: 3,
        first_ms: T0 + 86,
    });
}

#[test]
fn aws_cloudfront_standard_log() {
    check(&Expected {
        file: "cloudfront.log",
        format: "cloudfront",
        // Two header lines (skipped as directives) and six requests.
        lines: 8,
        parsed: 6,
        // 192.0.2.100: lines 1-3; 2001:db8::2a; 198.51.100.77 (status 000); 10.0.0.1
        // (c-ip; the viewer's address is in x-forwarded-for).
        clients: 4,
        top_client: "192.0.2.100",
        top_requests: 3,
        // Arrival = time + 0.5 s − time-taken, in whole seconds: lines 1 and 2
        // in second 1; line 3 (1.600 s, ended in second 2) in second 0.
        busiest_second: 2,
        first_ms: T0,
    });
}

#[test]
fn w3c_extended_from_iis() {
    check(&Expected {
        file: "iis.log",
        format: "w3c",
        // CRLF; the headers written again after a restart: 8 directives, 5 requests.
        lines: 13,
        parsed: 5,
        clients: 3,
        top_client: "192.0.2.60",
        top_requests: 3,
        // time-taken in ms: line 3 (31.25 s, ended in second 1) arrived in second −30.
        busiest_second: 2,
        first_ms: T0 - 30_000,
    });
}

#[test]
fn w3c_fields_can_be_keys() {
    let mut settings = Settings {
        inputs: vec![fixture("cloudfront.log")],
        ..Settings::for_detection()
    };
    settings.keys = crate::ingest::key::KeySet::new(
        crate::ingest::key::KeySpec::parse("field:x-edge-location+xff", None, None).unwrap(),
    );
    let done = ingest(&settings).unwrap();
    let names: Vec<&str> = done.table.clients.names().collect();
    assert!(names.contains(&"SEA19-C1+203.0.113.9"), "{names:?}");
}

#[test]
fn haproxy_behind_syslog() {
    check(&Expected {
        file: "haproxy.log",
        format: "haproxy",
        // Line 6 is a HAProxy event, not a request.
        lines: 7,
        parsed: 6,
        // 192.0.2.71: lines 1-3 (a 504 after 63 s); 198.51.100.71: 4 (429), 5
        // (<BADREQ>); [2001:db8::44]:60112 behind an RFC 5424 prefix.
        clients: 3,
        top_client: "192.0.2.71",
        top_requests: 3,
        // The request dates 0.120, 0.480, 0.900.
        busiest_second: 3,
        first_ms: T0 + 120,
    });
    // Logged: the date plus Ta: line 3 ends 63.387 s after 0.900.
    let done = read(&["haproxy.log"], FormatChoice::Auto, TimeOf::Logged);
    assert_eq!(done.table.ts.last(), Some(&(T0 + 64_287)));
}

#[test]
fn several_sources_in_one_run_are_each_detected() {
    let files = [
        ("alb.log", "alb"),
        ("cloudfront.log", "cloudfront"),
        ("iis.log", "w3c"),
        ("haproxy.log", "haproxy"),
        ("ingress-nginx.log", "ingress-nginx"),
        ("traefik.log", "traefik"),
        ("istio.log", "istio"),
        ("envoy.log", "envoy"),
        ("gcp.log", "gcp"),
        ("azure-frontdoor.log", "azure-frontdoor"),
        ("azure-appgw.log", "azure-appgw"),
        ("cloudflare.log", "cloudflare"),
        ("envoy-json.log", "envoy-json"),
        ("caddy.log", "caddy"),
        ("traefik-json.log", "traefik-json"),
        ("vhost_combined.log", "vhost_combined"),
    ];
    let names: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
    let done = read(&names, FormatChoice::Auto, TimeOf::Arrival);
    let report = &done.report;
    for ((file, source), got) in files.iter().zip(&report.files) {
        assert!(got.name.ends_with(file), "{}", got.name);
        assert!(
            got.format.starts_with(&format!("{source} (detected")),
            "{file}: {}",
            got.format
        );
        // Each file alone gives the same counts.
        let alone = read(&[file], FormatChoice::Auto, TimeOf::Arrival).report;
        assert_eq!(
            (got.lines, got.parsed),
            (alone.lines, alone.parsed),
            "{file}"
        );
    }
    let lines: u64 = report.files.iter().map(|f| f.lines).sum();
    assert_eq!(
        (report.lines, report.parsed + report.skipped),
        (lines, lines)
    );
    assert_eq!(done.table.len() as u64, report.parsed);
    assert!(done.table.ts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn apache_vhost_combined() {
    check(&Expected {
        file: "vhost_combined.log",
        format: "vhost_combined",
        lines: 5,
        parsed: 5,
        // 192.0.2.1 on two virtual hosts; 198.51.100.3; ::1 (Apache's internal dummy connection).
        clients: 3,
        top_client: "192.0.2.1",
        top_requests: 3,
        busiest_second: 2,
        first_ms: T0,
    });
}

#[test]
fn alb_logs_are_read_gzipped_as_s3_holds_them() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let path = dir
        .path()
        .join("123456789012_elasticloadbalancing_us-east-2_app.my-lb.log.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::default(),
    );
    gz.write_all(&std::fs::read(fixture("alb.log")).unwrap())
        .unwrap();
    gz.finish().unwrap();
    let settings = Settings {
        inputs: vec![path],
        ..Settings::for_detection()
    };
    let done = ingest(&settings).unwrap();
    let file = &done.report.files[0];
    assert_eq!(
        (file.compression.as_str(), file.lines, file.parsed),
        ("gzip", 6, 6)
    );
    assert!(file.format.starts_with("alb (detected"), "{}", file.format);
}
