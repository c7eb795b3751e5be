//! Every combination of `rlctl sql`'s optional columns (`--method`,
//! `--route`, `--status`, `--endpoint`, `--combined`, `--sample-keys`,
//! `--routes FILE`) run on
//! the real engines over converted events: DuckDB and ClickHouse run all of
//! them; Trino and BigQuery (parsed by sqlglot, run by DuckDB) every
//! one-query form but the sample, whose hash functions DuckDB does not have;
//! Spark, slow to start, nine in one session. Each result must give `rlctl
//! analyze`'s figures over the log the events came from (with `--routes`, the
//! same routes file given to both), and a sample of every key must replay
//! like that log in `rlctl simulate`.
//!
//! Which log: with both `--method` and `--status`, the tricky log of
//! [`super::raw_log`] (every normalisation rule, several methods, invalid
//! request lines, any status); otherwise the same requests made plain (every
//! method GET, every status 200), so that a query which cannot see the method
//! or the status has lost nothing `rlctl analyze` counts. Without `--method`
//! and `--endpoint` the endpoints are paths alone: `rlctl analyze`'s without
//! their `GET ` prefix (which keeps their order: `(`, `/`, `G` and the route
//! names sort alike either way).

use super::raw_log::{ROUTES, SHAPE, routes_file, tricky_log};
use super::*;

/// One set of `rlctl sql`'s optional flags.
#[derive(Clone, Copy, Debug)]
struct Combo {
    method: bool,
    route: bool,
    status: bool,
    endpoint: bool,
    combined: bool,
    sample: bool,
    /// `--routes FILE` (to rlctl sql and to rlctl analyze).
    templates: bool,
}

impl Combo {
    /// Every combination `rlctl sql` accepts (`--route` and `--routes`
    /// exclude `--endpoint`; `--combined` and `--sample-keys` each other).
    fn all() -> Vec<Combo> {
        (0..128u32)
            .map(|bits| Combo {
                method: bits & 1 != 0,
                route: bits & 2 != 0,
                status: bits & 4 != 0,
                endpoint: bits & 8 != 0,
                combined: bits & 16 != 0,
                sample: bits & 32 != 0,
                templates: bits & 64 != 0,
            })
            .filter(|c| !((c.route || c.templates) && c.endpoint || c.combined && c.sample))
            .collect()
    }

    /// A file-name-safe name: the initials of the flags given.
    fn name(self) -> String {
        let flags = [
            (self.method, "m"),
            (self.route, "r"),
            (self.status, "s"),
            (self.endpoint, "e"),
            (self.combined, "c"),
            (self.sample, "k"),
            (self.templates, "t"),
        ];
        let name: String = flags.iter().filter(|f| f.0).map(|f| f.1).collect();
        if name.is_empty() { "none".into() } else { name }
    }

    /// Whether the query reads the tricky log's events (else the plain log's).
    fn tricky(self) -> bool {
        self.method && self.status
    }

    /// The `rlctl sql` arguments after `sql --format json` (`routes`: the
    /// routes file).
    fn sql_args<'a>(self, dialect: &'a str, routes: &'a str) -> Vec<&'a str> {
        let table = if self.tricky() {
            "events_tricky"
        } else {
            "events_plain"
        };
        let mut args = vec![
            "--dialect",
            dialect,
            "--table",
            table,
            "--time",
            "ts_ms",
            "--time-unit",
            "ms",
            "--client",
            "client",
            "--path",
            "path",
        ];
        if self.method {
            args.extend(["--method", "method"]);
        }
        if self.status {
            args.extend(["--status", "status"]);
        }
        if self.endpoint {
            args.extend(["--endpoint", "endpoint"]);
        }
        if self.route {
            args.extend(ROUTES);
        }
        if self.templates {
            args.extend(["--routes", routes]);
        }
        if self.combined {
            args.push("--combined");
        }
        if self.sample {
            args.extend(["--sample-keys", "100%", "--sample-top", "3"]);
        }
        args.extend(SHAPE);
        args
    }
}

/// The two logs and their converted events, in one temporary directory.
struct Logs {
    dir: tempfile::TempDir,
    tricky: PathBuf,
    plain: PathBuf,
    /// The routes file of [`super::raw_log::TEMPLATES`].
    routes: PathBuf,
    /// `--view NAME=FILE` values for run_queries.py.
    views: Vec<String>,
}

impl Logs {
    fn new() -> Logs {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (tricky, _) = tricky_log(d);
        let plain = d.join("plain.log");
        std::fs::write(
            &plain,
            plain_requests(&std::fs::read_to_string(&tricky).unwrap()),
        )
        .unwrap();
        let mut views = Vec::new();
        for (name, log) in [("events_tricky", &tricky), ("events_plain", &plain)] {
            let events = d.join(format!("{name}.parquet"));
            run(&["convert", "-q", s(log), "-o", s(&events)]);
            views.push(format!("{name}={}", s(&events)));
        }
        Logs {
            routes: routes_file(d),
            dir,
            tricky,
            plain,
            views,
        }
    }

    fn log(&self, combo: Combo) -> &Path {
        if combo.tricky() {
            &self.tricky
        } else {
            &self.plain
        }
    }

    /// What `rlctl analyze` says of the log of `combo`, as the query should see it.
    fn expected(&self, combo: Combo) -> Value {
        // The literal baseline, and the shape rules or the routes file: what
        // SQL results can give.
        let mut args = vec![
            "analyze",
            "-q",
            "--format",
            "json",
            "--baseline",
            "all",
            s(self.log(combo)),
        ];
        if combo.templates {
            args.extend(["--routes", s(&self.routes)]);
        } else {
            args.extend(["--discover", "off"]);
        }
        args.extend(SHAPE);
        if combo.route {
            args.extend(ROUTES);
        }
        let mut report = json(&args);
        if !combo.method && !combo.endpoint {
            strip_get(&mut report);
        }
        report
    }

    /// Runs the queries of every combo in `dialect` on `engine` in one
    /// run_queries.py session (`extra`: its other flags), then checks each.
    fn run_and_check(
        &self,
        py: &Path,
        engine: &str,
        dialect: &str,
        combos: &[Combo],
        extra: &[&str],
    ) {
        let d = self.dir.path();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/engines/run_queries.py");
        let mut cmd = Process::new(py);
        cmd.args([script, "--engine", engine])
            .args(extra)
            .current_dir(d);
        for view in &self.views {
            cmd.args(["--view", view]);
        }
        for &combo in combos {
            let name = format!("{dialect}-{}", combo.name());
            let queries = d.join(format!("{name}.json"));
            let args = [
                &["sql", "--format", "json"][..],
                &combo.sql_args(dialect, s(&self.routes)),
            ]
            .concat();
            std::fs::write(&queries, run(&args)).unwrap();
            cmd.arg("--job")
                .arg(format!("{}={}", s(&queries), s(&d.join(&name))));
        }
        let result = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&result.stdout);
        assert!(
            result.status.success(),
            "{engine} ({dialect}) failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&result.stderr)
        );
        print!("{stdout}");
        for &combo in combos {
            let out = d.join(format!("{dialect}-{}", combo.name()));
            // Captured, shown with the failure: which combination it was.
            println!("checking {dialect} {combo:?}");
            if combo.sample {
                self.check_sample(combo, &table_of(&out, "sample"));
            } else {
                let result = if combo.combined {
                    table_of(&out, "combined")
                } else {
                    out
                };
                assert_same_figures(&self.expected(combo), &from_sql_result(&result, &SHAPE));
            }
        }
    }

    /// A sample of every key (100%) replays like the whole log. Its rows come
    /// in the engine's order, so of a client's requests in the same second
    /// another may be the one rejected: every figure must agree but which
    /// endpoints the rejections fell on.
    fn check_sample(&self, combo: Combo, sample: &Path) {
        let limits = ["simulate", "-q", "--format", "json", "--limit", "60/1m"];
        let scenarios = |args: &[&str]| {
            let mut report = json(&[&limits[..], args].concat());
            let mut scenarios = report["scenarios"].take();
            for scenario in scenarios.as_array_mut().unwrap() {
                scenario
                    .as_object_mut()
                    .unwrap()
                    .remove("rejected_by_endpoint");
            }
            scenarios
        };
        let whole = scenarios(&[s(self.log(combo))]);
        let sampled = scenarios(&["--events", s(sample)]);
        assert_eq!(whole, sampled, "{combo:?}");
        assert_eq!(whole.as_array().unwrap().len(), 6);
        assert!(whole[0]["requests"].as_u64().unwrap() > 1000);
        assert!(whole[0]["rejected"].as_u64().unwrap() > 0);
    }
}

/// `out/NAME.parquet` (DuckDB, ClickHouse), else the directory `out/NAME` (Spark).
fn table_of(out: &Path, name: &str) -> PathBuf {
    let file = out.join(format!("{name}.parquet"));
    if file.is_file() { file } else { out.join(name) }
}

/// The requests of a combined-format `log` with every method GET and every
/// status 200; lines without a method (`"-"`) are left out.
fn plain_requests(log: &str) -> String {
    let mut out = String::new();
    for line in log.lines() {
        let (head, rest) = line.split_once('"').unwrap();
        let (request, tail) = rest.split_once('"').unwrap();
        let Some((_, target)) = request.split_once(' ') else {
            continue;
        };
        let status = tail.get(1..4).unwrap();
        assert!(status.bytes().all(|b| b.is_ascii_digit()), "{line}");
        out.push_str(&format!("{head}\"GET {target}\" 200{}\n", &tail[4..]));
    }
    out
}

/// Every string of `report` that starts with `GET ` without it: the endpoints
/// of a query that has no method column.
fn strip_get(report: &mut Value) {
    match report {
        Value::String(text) => {
            if let Some(path) = text.strip_prefix("GET ") {
                *text = path.to_string();
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_get),
        Value::Object(fields) => fields.values_mut().for_each(strip_get),
        _ => {}
    }
}

#[test]
fn the_plain_log_is_the_same_requests_with_get_and_200() {
    let dir = tempfile::tempdir().unwrap();
    let (tricky, _) = tricky_log(dir.path());
    let text = std::fs::read_to_string(tricky).unwrap();
    let plain = plain_requests(&text);
    assert_eq!(
        plain.lines().count(),
        text.lines().count() - 1,
        "one `\"-\"` line"
    );
    assert!(
        plain.contains("\"GET /lower HTTP/1.1\" 200 0 \"-\" \"-\""),
        "{plain}"
    );
    assert!(plain.contains("\"GET /api/search/x?q=1 HTTP/1.1\" 200 0"));
    assert!(
        plain
            .lines()
            .all(|l| l.contains("\"GET ") && l.contains("\" 200 "))
    );
    let mut report =
        serde_json::json!({"endpoints": [{"endpoint": "GET /a/:id"}, {"endpoint": "search"}]});
    strip_get(&mut report);
    assert_eq!(report["endpoints"][0]["endpoint"], "/a/:id");
    assert_eq!(report["endpoints"][1]["endpoint"], "search");
    assert_eq!(Combo::all().len(), 36 + 24);
}

#[test]
fn duckdb_runs_every_combination_of_optional_columns() {
    let Some(py) = require(Engine::DuckDb) else {
        return;
    };
    Logs::new().run_and_check(&py, "duckdb", "duckdb", &Combo::all(), &[]);
}

#[test]
fn clickhouse_runs_every_combination_of_optional_columns() {
    let Some(py) = require(Engine::ClickHouse) else {
        return;
    };
    Logs::new().run_and_check(&py, "clickhouse", "clickhouse", &Combo::all(), &[]);
}

#[test]
fn trino_and_bigquery_run_every_one_query_combination_through_sqlglot() {
    let (Some(py), Some(_)) = (require(Engine::DuckDb), require(Engine::Sqlglot)) else {
        return;
    };
    let combined: Vec<Combo> = Combo::all().into_iter().filter(|c| c.combined).collect();
    let logs = Logs::new();
    for dialect in ["trino", "bigquery"] {
        logs.run_and_check(
            &py,
            "duckdb",
            dialect,
            &combined,
            &["--from-dialect", dialect],
        );
    }
}

/// Spark starts slowly: one session, the combined query with and without a
/// method (and a status), each with no route, a route or an endpoint column,
/// and with a method and the routes file, with and without a route; and a
/// sample with none of them.
#[test]
fn spark_runs_the_combinations_in_one_session() {
    let Some(py) = require(Engine::Spark) else {
        return;
    };
    let combos: Vec<Combo> = Combo::all()
        .into_iter()
        .filter(|c| {
            let bare = !(c.method || c.route || c.status || c.endpoint || c.templates);
            let combined = c.combined && c.method == c.status;
            (combined && (!c.templates || c.method)) || (c.sample && bare)
        })
        .collect();
    assert_eq!(combos.len(), 9);
    Logs::new().run_and_check(&py, "spark", "spark", &combos, &[]);
}
