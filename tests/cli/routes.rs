//! One routes file, the same endpoint names in every command: `rlctl analyze
//! --write-routes` saves the templates it discovered, and `--routes FILE`
//! names endpoints by them in analyze, report, simulate and convert (and, in
//! tests/cli/scale, in the SQL of rlctl sql); applying them to an event table
//! that was already named by them changes nothing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::{json_of_success, rlctl};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A generated log with many parameterised paths, and the routes analyze
/// discovered in it.
fn log_and_routes(dir: &Path) -> (PathBuf, PathBuf) {
    let log = dir.join("access.log");
    let routes = dir.join("routes.txt");
    rlctl()
        .args(["generate", "--clients", "60", "--duration", "5m"])
        .args(["--distinct-paths", "300", "--seed", "9", "-o", s(&log)])
        .assert()
        .success();
    rlctl()
        .args(["analyze", "-q", "--format", "json", s(&log)])
        .args(["--write-routes", s(&routes)])
        .assert()
        .success();
    (log, routes)
}

/// The `endpoint` column of a CSV file with a header.
fn endpoint_column(csv: &Path) -> Vec<String> {
    let mut reader = csv::Reader::from_path(csv).unwrap();
    let column = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "endpoint")
        .unwrap();
    reader
        .records()
        .map(|r| r.unwrap()[column].to_string())
        .collect()
}

fn names(report: &serde_json::Value) -> BTreeSet<String> {
    report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn one_routes_file_names_endpoints_alike_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (log, routes) = log_and_routes(d);
    let with_routes = ["--routes", s(&routes)];
    let analyzed = json_of_success(
        rlctl()
            .args(["analyze", "-q", "--format", "json", "--endpoints", "100000"])
            .args(with_routes)
            .arg(&log),
    );
    let endpoints = names(&analyzed);
    assert!(endpoints.contains("GET /api/orders/:id"), "{endpoints:?}");
    // report analyses the endpoints analyze reports by default.
    let busiest = json_of_success(
        rlctl()
            .args(["analyze", "-q", "--format", "json"])
            .args(with_routes)
            .arg(&log),
    );
    let reported = json_of_success(
        rlctl()
            .args(["report", "--format", "json", "--top", "100000"])
            .args(with_routes)
            .arg(&log),
    );
    assert_eq!(names(&reported["analysis"]), names(&busiest));
    assert!(names(&busiest).is_subset(&endpoints));

    // convert and simulate: the same name for every request, row for row.
    let events = d.join("events.csv");
    rlctl()
        .args(["convert", "-q", "-o", s(&events)])
        .args(with_routes)
        .arg(&log)
        .assert()
        .success();
    let converted = endpoint_column(&events);
    let decisions = d.join("decisions.csv");
    rlctl()
        .args(["simulate", "-q", "--limit", "60/1m", "--algo", "gcra"])
        .args(["--format", "json", "--decisions", s(&decisions)])
        .args(with_routes)
        .arg(&log)
        .assert()
        .success();
    let simulated = endpoint_column(&decisions);
    assert_eq!(converted.len(), simulated.len());
    assert_eq!(converted, simulated);
    let distinct: BTreeSet<String> = converted.iter().cloned().collect();
    assert_eq!(distinct, endpoints);

    // The recommended policy's simulation names them alike too.
    let recommended = d.join("recommended.csv");
    rlctl()
        .args(["simulate", "-q", "--algo", "gcra", "--format", "json"])
        .args(["--decisions", s(&recommended)])
        .args(with_routes)
        .arg(&log)
        .assert()
        .success();
    assert_eq!(endpoint_column(&recommended), simulated);

    // The routes again over events they already named: nothing changes.
    let again = d.join("again.csv");
    rlctl()
        .args(["simulate", "-q", "--limit", "60/1m", "--algo", "gcra"])
        .args(["--format", "json", "--decisions", s(&again)])
        .args(["--events", s(&events)])
        .args(with_routes)
        .assert()
        .success();
    assert_eq!(endpoint_column(&again), simulated);
}

#[test]
fn a_bad_routes_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let routes = dir.path().join("routes.txt");
    std::fs::write(&routes, "/ok\nnot-a-path\n").unwrap();
    let log = dir.path().join("a.log");
    std::fs::write(
        &log,
        "1.2.3.4 - - [05/Jan/2026:00:00:00 +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n",
    )
    .unwrap();
    for command in ["analyze", "simulate", "convert", "report"] {
        let mut cmd = rlctl();
        cmd.args([command, "--routes", s(&routes), s(&log)]);
        if command == "convert" {
            cmd.args(["-o", s(&dir.path().join("e.csv"))]);
        }
        cmd.assert()
            .code(2)
            .stderr(predicates::str::contains("routes.txt:2: "));
    }
    rlctl()
        .args(["sql", "--dialect", "duckdb", "--table", "t", "--time", "ts"])
        .args(["--client", "ip", "--path", "p", "--routes", s(&routes)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("routes.txt:2: "));
}

#[test]
fn a_written_policy_names_its_routes_file_and_reads_back_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/access.log.gz"
    ));
    let sub = d.join("out");
    std::fs::create_dir(&sub).unwrap();
    let policy = sub.join("policy.toml");
    let routes = sub.join("routes.txt");
    rlctl()
        .args(["analyze", "-q", "--format", "json", s(&log)])
        .args(["--write-routes", s(&routes), "--write-policy", s(&policy)])
        .assert()
        .success();
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains("\nroutes = \"routes.txt\"\n"), "{text}");
    assert!(text.contains("template = \"/api/orders/:id\""), "{text}");
    // Read from another directory: the routes file is found beside the policy.
    let simulated = json_of_success(
        rlctl()
            .current_dir(d)
            .args(["simulate", "-q", "--format", "json", "--policy"])
            .arg(&policy)
            .arg(&log),
    );
    let endpoints: Vec<&str> = simulated["scenarios"][0]["rejected_by_endpoint"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(endpoints.contains(&"GET /api/orders/:id"), "{endpoints:?}");
    assert!(
        endpoints
            .iter()
            .all(|e| !e.starts_with("GET /api/orders/") || *e == "GET /api/orders/:id"),
        "the policy's routes name the endpoints: {endpoints:?}"
    );
    rlctl()
        .args(["export", "--target", "nginx", "--policy", s(&policy)])
        .assert()
        .success()
        .stdout(predicates::str::contains("/api/orders/[^/]+$"));
    // Without the routes file the policy says what is missing.
    std::fs::remove_file(&routes).unwrap();
    rlctl()
        .args(["simulate", "-q", "--policy", s(&policy), s(&log)])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("routes.txt"));
}

/// Apache `vhost_combined` lines for two virtual hosts with the same paths.
const TWO_HOSTS: &str = r#"www.example.com:443 192.0.2.1 - - [05/Jan/2026:00:00:00 +0000] "GET /v1/orders HTTP/1.1" 200 10 "-" "a"
api.example.com:443 192.0.2.1 - - [05/Jan/2026:00:00:01 +0000] "GET /v1/orders HTTP/1.1" 200 10 "-" "a"
API.Example.com:8443 192.0.2.2 - - [05/Jan/2026:00:00:02 +0000] "POST /v1/orders/7 HTTP/1.1" 201 10 "-" "a"
api.example.com:443 192.0.2.2 - - [05/Jan/2026:00:00:03 +0000] "GET /health HTTP/1.1" 200 2 "-" "a"
www.example.com:443 192.0.2.3 - - [05/Jan/2026:00:00:04 +0000] "GET /v1/orders HTTP/1.1" 200 10 "-" "a"
"#;

fn requests_by_endpoint(report: &serde_json::Value) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = report["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["endpoint"].as_str().unwrap().to_string(),
                e["requests"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_route_limited_to_a_virtual_host_names_only_its_requests() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("other_vhosts_access.log");
    std::fs::write(&log, TWO_HOSTS).unwrap();
    let rule = ["--route", "@api.example.com ^/v1/=api-v1"];
    let report = json_of_success(
        rlctl()
            .args(["analyze", "-q", "--format", "json"])
            .args(rule)
            .arg(&log),
    );
    assert_eq!(
        requests_by_endpoint(&report),
        [
            ("GET /health".to_string(), 1),
            ("GET /v1/orders".to_string(), 2),
            ("api-v1".to_string(), 2),
        ]
    );
    // convert names each request alike, row for row.
    let events = dir.path().join("events.csv");
    rlctl()
        .args(["convert", "-q", "-o", s(&events)])
        .args(rule)
        .arg(&log)
        .assert()
        .success();
    assert_eq!(
        endpoint_column(&events),
        [
            "GET /v1/orders",
            "api-v1",
            "api-v1",
            "GET /health",
            "GET /v1/orders"
        ]
    );
    // rlctl sql needs the column holding the host (tests/cli/scale runs it).
    rlctl()
        .args(["sql", "--dialect", "duckdb", "--table", "t", "--time", "ts"])
        .args(["--client", "ip", "--path", "p"])
        .args(rule)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("give --host COL"));
}

#[test]
fn the_host_field_names_where_other_sources_keep_the_host() {
    let sources = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/sources/");
    // Hand-counted: Caddy's four requests are for example.com; the ALB's six
    // for www.example.com, one of them without a request line (`- - -`, an
    // invalid request).
    type Case<'a> = (&'a str, &'a str, &'a [(&'a str, u64)]);
    let cases: [Case; 2] = [
        ("caddy.log", "request.host", &[("apex", 4)]),
        (
            "alb.log",
            "domain_name",
            &[("(invalid request)", 1), ("www", 5)],
        ),
    ];
    for (file, field, expected) in cases {
        let report = json_of_success(
            rlctl()
                .args(["analyze", "-q", "--format", "json", "--discover", "off"])
                .args(["--host-field", field])
                .args(["--route", "@www.example.com ^/=www"])
                .args(["--route", "@example.com ^/=apex"])
                .arg(format!("{sources}{file}")),
        );
        let expected: Vec<(String, u64)> =
            expected.iter().map(|(e, n)| (e.to_string(), *n)).collect();
        assert_eq!(requests_by_endpoint(&report), expected, "{file}");
    }
}
