//! The queries of `rlctl sql`, written once over a [`SqlDialect`].
//!
//! Every query starts from the same three CTEs: `src` reads the user's table
//! (time in ms, client key as text, method, target, status), `req` derives the
//! paths (with `--routes`, a fourth, `normed`, adds the normalised path the
//! templates are tried on), `ev` the endpoint and the epoch-aligned window and second of each
//! request. Each query then returns one small table whose name and columns are
//! those of [`crate::frames::sql_result::RESULT_TABLES`]:
//!
//! - `summary`: one row (requests, clients, endpoints, first and last time, the
//!   window, how many times are not whole seconds, how many endpoints get detail);
//! - `histograms`: for each count, how many (client, window) and (client,
//!   second) pairs had it, for all traffic and for each top endpoint;
//! - `clients`: one row per client (requests, peak window, peak second, first
//!   request, 429s, 503s);
//! - `endpoints`: every endpoint's requests and clients;
//! - `endpoint_clients`: one row per (client, endpoint) of the top endpoints.
//!
//! The sample query instead selects the events of a hash sample of clients.

use super::dialect::SqlDialect;
use super::endpoint::{self, Naming, Route};
use crate::cli::TimeUnit;
use crate::discover::Template;
use crate::frames::sql_result::{RESULT_TABLES, TEXT_COLUMNS};
use crate::units::Window;

/// The user's table and how to read it.
#[derive(Debug, Clone)]
pub struct Source {
    pub table: String,
    pub time: String,
    pub time_unit: TimeUnit,
    pub client: String,
    /// Raw path/target column (normalised in SQL unless `endpoint` is given).
    pub path: Option<String>,
    /// Already normalised endpoint column.
    pub endpoint: Option<String>,
    pub method: Option<String>,
    pub status: Option<String>,
    /// Column holding the virtual host (read by `@HOST` routes).
    pub host: Option<String>,
    pub routes: Vec<Route>,
    /// The templates of `--routes FILE`, in precedence order.
    pub templates: Vec<Template>,
    pub filter: Option<String>,
}

/// One query and the result table it makes.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Query {
    /// The result table (`summary`, ...).
    pub name: String,
    pub sql: String,
}

/// Builds the queries for one dialect.
pub struct Builder<'a> {
    pub dialect: &'a dyn SqlDialect,
    pub source: &'a Source,
    pub window: Window,
    /// How many endpoints (by requests) get per-client detail.
    pub detail_endpoints: usize,
}

impl Builder<'_> {
    /// The CTEs every query starts with (`WITH src AS ..., req AS ..., ev AS ...`).
    pub fn prelude(&self) -> String {
        let d = self.dialect;
        let s = self.source;
        let text_or_empty = |col: &Option<String>| match col {
            Some(c) => format!("COALESCE({}, '')", d.to_text(c)),
            None => "''".to_string(),
        };
        let status = match &s.status {
            Some(c) => format!("COALESCE({}, 0)", d.try_int(c)),
            None => d.to_int("0"),
        };
        let endpoint_col = text_or_empty(&s.endpoint);
        let filter = s
            .filter
            .as_ref()
            .map(|f| format!("\n  WHERE {f}"))
            .unwrap_or_default();
        let endpoint_expr = match &s.endpoint {
            Some(_) => "given_endpoint".to_string(),
            None => {
                let method = s.method.as_ref().map(|_| "method");
                let naming = Naming {
                    routes: &s.routes,
                    templates: &s.templates,
                };
                endpoint::endpoint(d, method, "path", "route_path", naming)
            }
        };
        // With a host column (for `@HOST` routes), the host as routes compare it.
        let (host_col, host_pass) = match &s.host {
            Some(c) if s.endpoint.is_none() => (
                format!(
                    ",\n    {} AS {}",
                    endpoint::host_without_port(d, &format!("COALESCE({}, '')", d.to_text(c))),
                    endpoint::HOST
                ),
                format!(" {},", endpoint::HOST),
            ),
            _ => (String::new(), String::new()),
        };
        // With templates, the normalised path is a column their tests share
        // (computed from route_path in a CTE of its own).
        let (norm_cte, from_req) = if s.templates.is_empty() || s.endpoint.is_some() {
            (String::new(), "req")
        } else {
            (
                format!(
                    ",\nnormed AS (\n  SELECT req.*, {} AS {}\n  FROM req\n)",
                    endpoint::normalised_path(d, "route_path"),
                    endpoint::NORM_PATH
                ),
                "normed",
            )
        };
        format!(
            "WITH src AS (
  SELECT
    {ts} AS ts_ms,
    {client} AS client,
    {method} AS method,
    {target} AS target,
    {endpoint_col} AS given_endpoint,
    {status} AS status{host_col}
  FROM {table}{filter}
),
req AS (
  SELECT ts_ms, client, method, status, given_endpoint,{host_pass}
    {path} AS path,
    {route_path} AS route_path
  FROM src
  WHERE ts_ms IS NOT NULL AND client IS NOT NULL AND client <> '' AND client <> '-'
){norm_cte},
ev AS (
  SELECT ts_ms, client, method, path, status,
    {endpoint_expr} AS endpoint,
    {w} AS w,
    {sec} AS sec
  FROM {from_req}
)",
            ts = d.epoch_ms(&s.time, s.time_unit),
            host_col = host_col,
            host_pass = host_pass,
            client = d.to_text(&s.client),
            method = text_or_empty(&s.method),
            target = text_or_empty(&s.path),
            table = s.table,
            path = endpoint::path_without_query(d, "target"),
            route_path = endpoint::route_path(d, "target"),
            w = d.floor_div("ts_ms", self.window.millis()),
            sec = d.floor_div("ts_ms", 1000),
        )
    }

    fn query(&self, name: &str, ctes: &str, body: &str) -> Query {
        Query {
            name: name.to_string(),
            sql: format!("{}{ctes}\n{body}", self.prelude()),
        }
    }

    /// `top_endpoints`: the endpoints that get detail, by requests then name.
    fn top_endpoints(&self) -> String {
        format!(
            ",
top_endpoints AS (
  SELECT endpoint FROM (
    SELECT endpoint, ROW_NUMBER() OVER (ORDER BY requests DESC, endpoint) AS rank_no
    FROM (SELECT endpoint, COUNT(*) AS requests FROM ev GROUP BY endpoint) by_endpoint
  ) ranked
  WHERE rank_no <= {}
),
tev AS (SELECT * FROM ev WHERE endpoint IN (SELECT endpoint FROM top_endpoints))",
            self.detail_endpoints
        )
    }

    /// The five analysis queries, in the order of `RESULT_TABLES`.
    pub fn analysis(&self) -> Vec<Query> {
        self.parts()
            .into_iter()
            .map(|(name, top, body)| {
                let ctes = if top {
                    self.top_endpoints()
                } else {
                    String::new()
                };
                self.query(name, &ctes, &body)
            })
            .collect()
    }

    /// (result table, whether it needs `top_endpoints`, the SELECT after the CTEs).
    fn parts(&self) -> Vec<(&'static str, bool, String)> {
        vec![
            ("summary", false, self.summary()),
            ("histograms", true, self.histograms()),
            ("clients", false, self.clients()),
            ("endpoints", false, self.endpoints()),
            ("endpoint_clients", true, self.endpoint_clients()),
        ]
    }

    /// One query returning all five tables at once: a `result` column names the
    /// table of each row, and the columns are those of every table (NULL where
    /// a table has no such column). Save it as one file for
    /// `--from-sql-result FILE`.
    pub fn combined(&self) -> Query {
        let d = self.dialect;
        let mut columns: Vec<&str> = Vec::new();
        for (_, table_columns) in RESULT_TABLES {
            for c in table_columns.iter() {
                if !columns.contains(c) {
                    columns.push(c);
                }
            }
        }
        let selects: Vec<String> = self
            .parts()
            .into_iter()
            .zip(RESULT_TABLES)
            .map(|((name, _, body), (_, has))| {
                let cells: Vec<String> = columns
                    .iter()
                    .map(|c| match (has.contains(c), TEXT_COLUMNS.contains(c)) {
                        (true, _) => format!("part.{c} AS {c}"),
                        (false, true) => format!("{} AS {c}", d.null_text()),
                        (false, false) => format!("{} AS {c}", d.null_int()),
                    })
                    .collect();
                format!(
                    "SELECT '{name}' AS result, {}\nFROM (\n{body}\n) part",
                    cells.join(", ")
                )
            })
            .collect();
        self.query(
            "combined",
            &self.top_endpoints(),
            &selects.join("\nUNION ALL\n"),
        )
    }

    fn summary(&self) -> String {
        let d = self.dialect;
        let body = format!(
            "SELECT
  {requests} AS requests,
  {clients} AS clients,
  {endpoints} AS endpoints,
  COALESCE(MIN(ts_ms), 0) AS first_ts_ms,
  COALESCE(MAX(ts_ms), 0) AS last_ts_ms,
  {window} AS window_s,
  {subsecond} AS subsecond,
  {detail} AS detail_endpoints
FROM ev",
            requests = d.to_int("COUNT(*)"),
            clients = d.to_int("COUNT(DISTINCT client)"),
            endpoints = d.to_int("COUNT(DISTINCT endpoint)"),
            window = d.to_int(&self.window.secs().to_string()),
            subsecond =
                d.to_int("COALESCE(SUM(CASE WHEN ts_ms = sec * 1000 THEN 0 ELSE 1 END), 0)"),
            detail = d.to_int(&self.detail_endpoints.to_string()),
        );
        body
    }

    fn histograms(&self) -> String {
        let d = self.dialect;
        let samples = d.to_int("COUNT(*)");
        let n = d.to_int("COUNT(*)");
        let overall = |metric: &str, unit: &str| {
            format!(
                "SELECT {null} AS endpoint, '{metric}' AS metric, n AS requests, {samples} AS samples
FROM (SELECT client, {unit}, {n} AS n FROM ev GROUP BY client, {unit}) counts
GROUP BY n",
                null = d.null_text()
            )
        };
        let per_endpoint = |metric: &str, unit: &str| {
            format!(
                "SELECT endpoint, '{metric}' AS metric, n AS requests, {samples} AS samples
FROM (SELECT endpoint, client, {unit}, {n} AS n FROM tev GROUP BY endpoint, client, {unit}) counts
GROUP BY endpoint, n"
            )
        };
        [
            overall("per_window", "w"),
            overall("per_second", "sec"),
            per_endpoint("per_window", "w"),
            per_endpoint("per_second", "sec"),
        ]
        .join("\nUNION ALL\n")
    }

    /// Per-key totals and peaks over `from`, keyed by `keys` (`client`, or `endpoint, client`).
    fn peaks(&self, from: &str, keys: &[&str], extra: &str) -> String {
        let d = self.dialect;
        let list = keys.join(", ");
        let join = |alias: &str| {
            keys.iter()
                .map(|k| format!("{alias}.{k} = t.{k}"))
                .collect::<Vec<_>>()
                .join(" AND ")
        };
        let peak = |unit: &str| {
            format!(
                "(SELECT {list}, MAX(n) AS peak FROM (SELECT {list}, {unit}, COUNT(*) AS n FROM {from} GROUP BY {list}, {unit}) counts GROUP BY {list})"
            )
        };
        let columns: Vec<String> = keys.iter().map(|k| format!("t.{k} AS {k}")).collect();
        format!(
            "SELECT {columns}, {requests} AS requests, {pw} AS peak_window, {ps} AS peak_second{extra_cols}
FROM (SELECT {list}, COUNT(*) AS requests{extra} FROM {from} GROUP BY {list}) t
JOIN {by_window} pw ON {join_w}
JOIN {by_second} ps ON {join_s}",
            columns = columns.join(", "),
            requests = d.to_int("t.requests"),
            pw = d.to_int("pw.peak"),
            ps = d.to_int("ps.peak"),
            extra_cols = if extra.is_empty() {
                String::new()
            } else {
                format!(
                    ", t.first_ts_ms AS first_ts_ms, {} AS status_429, {} AS status_503",
                    d.to_int("t.s429"),
                    d.to_int("t.s503")
                )
            },
            by_window = peak("w"),
            by_second = peak("sec"),
            join_w = join("pw"),
            join_s = join("ps"),
        )
    }

    fn clients(&self) -> String {
        let extra = ", MIN(ts_ms) AS first_ts_ms, SUM(CASE WHEN status = 429 THEN 1 ELSE 0 END) AS s429, SUM(CASE WHEN status = 503 THEN 1 ELSE 0 END) AS s503";
        self.peaks("ev", &["client"], extra)
    }

    fn endpoints(&self) -> String {
        let d = self.dialect;
        format!(
            "SELECT endpoint, {} AS requests, {} AS clients FROM ev GROUP BY endpoint",
            d.to_int("COUNT(*)"),
            d.to_int("COUNT(DISTINCT client)")
        )
    }

    fn endpoint_clients(&self) -> String {
        self.peaks("tev", &["endpoint", "client"], "")
    }

    /// The events of the clients whose hash bucket (of 10,000) is below
    /// `buckets`, plus those of the `top` clients with the highest peak window
    /// and the `top` with the highest peak second (taken whatever their hash,
    /// `certain` = 1): an event table as `rlctl convert` writes it, with that
    /// column added. Heavy clients make most rejections; taking them all keeps
    /// a small sample's estimates honest.
    pub fn sample(&self, buckets: u32, top: usize) -> Query {
        let d = self.dialect;
        let ranked = |peaks: &str| {
            format!(
                "SELECT client FROM (SELECT client, ROW_NUMBER() OVER (ORDER BY peak DESC, client) AS rank_no FROM {peaks}) ranked WHERE rank_no <= {top}"
            )
        };
        let ctes = format!(
            ",
window_peaks AS (SELECT client, MAX(n) AS peak FROM (SELECT client, w, COUNT(*) AS n FROM ev GROUP BY client, w) counts GROUP BY client),
second_peaks AS (SELECT client, MAX(n) AS peak FROM (SELECT client, sec, COUNT(*) AS n FROM ev GROUP BY client, sec) counts GROUP BY client),
top_clients AS (
  SELECT DISTINCT client FROM ({} UNION ALL {}) tops
)",
            ranked("window_peaks"),
            ranked("second_peaks")
        );
        let body = format!(
            "SELECT e.ts_ms AS ts_ms, e.client AS client, e.endpoint AS endpoint, e.method AS method, e.path AS path, e.status AS status,
  {certain} AS certain
FROM ev e
LEFT JOIN top_clients t ON t.client = e.client
WHERE t.client IS NOT NULL OR {bucket} < {buckets}",
            certain = d.to_int("CASE WHEN t.client IS NULL THEN 0 ELSE 1 END"),
            bucket = d.hash_bucket("e.client", SAMPLE_BUCKETS),
        );
        self.query("sample", &ctes, &body)
    }
}

/// Hash buckets of a key sample: rates are multiples of 0.01%.
pub const SAMPLE_BUCKETS: u32 = 10_000;
