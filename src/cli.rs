//! Command-line flags, declared with clap's derive API. No logic lives here:
//! [`crate::options`] validates these raw values and turns them into settings.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::units::Window;

/// Turn web access logs into rate limits people can trust.
#[derive(Debug, Parser)]
#[command(name = "rlctl", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure per-client traffic and recommend a limit.
    #[command(mut_arg("files", |a| a.required(false).required_unless_present("from_sql_result")))]
    Analyze(Box<AnalyzeArgs>),
    /// Replay logs through rate-limiting algorithms and report who is rejected.
    #[command(mut_arg("files", |a| a.required(false).required_unless_present("events")))]
    Simulate(Box<SimulateArgs>),
    /// Analyze and simulate in one pass; a report for people and a pass/fail for CI.
    Report(Box<ReportArgs>),
    /// Write a seeded synthetic access log (fixtures, demos, benchmarks).
    Generate(GenerateArgs),
    /// Print a policy as gateway configuration: nginx, Envoy, Traefik, Kong,
    /// HAProxy or AWS WAF.
    Export(ExportArgs),
    /// Write the parsed, normalised events of access logs as a Parquet (or CSV)
    /// table, to load into a data lake or replay with `simulate --events`.
    Convert(Box<ConvertArgs>),
    /// Print the SQL that computes what `rlctl analyze` needs inside Spark, Trino,
    /// ClickHouse, BigQuery or DuckDB (read back with `analyze --from-sql-result`).
    Sql(Box<SqlArgs>),
}

/// Flags shared by every command that reads access logs.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Input")]
pub struct IngestArgs {
    /// Access logs to read (plain, gzip or zstd; `-` for stdin), in any order.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Log format: auto, combined, common, json, or a literal nginx `log_format`
    /// string such as '$msec $remote_addr "$request" $status'.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub log_format: String,

    /// Read the `log_format` named by --log-format-name from this nginx config.
    #[arg(long, value_name = "FILE", requires = "log_format_name")]
    pub nginx_conf: Option<PathBuf>,

    /// Name of the `log_format` to take from --nginx-conf (e.g. main).
    #[arg(long, value_name = "NAME", requires = "nginx_conf")]
    pub log_format_name: Option<String>,

    /// JSON field mapping, e.g. time=ts,client=request.remote_ip,path=request.uri
    /// (roles: time, client, method, path, status, user, xff, limit_req_status).
    #[arg(long, value_name = "ROLE=PATH,...", value_delimiter = ',')]
    pub field: Vec<String>,

    /// Client key: ip, xff, user, field:NAME, or several joined with + (ip+user).
    #[arg(long, value_name = "KEY", default_value = "ip")]
    pub key: String,

    /// Aggregate IPv4 client addresses into /N prefixes (e.g. 24).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=32))]
    pub cidr4: Option<u8>,

    /// Aggregate IPv6 client addresses into /N prefixes (e.g. 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=128))]
    pub cidr6: Option<u8>,

    /// Name paths matching REGEX as endpoint NAME (repeatable; first match wins;
    /// applied before the automatic :id normalisation).
    #[arg(long, value_name = "REGEX=NAME")]
    pub route: Vec<String>,

    /// Treat any malformed line as an error (exit 2) instead of skipping it.
    #[arg(long)]
    pub strict: bool,

    /// No progress bar, no notes on stderr (errors are still printed).
    #[arg(long, short)]
    pub quiet: bool,
}

/// Output formats of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text for a terminal (the default when stdout is a terminal).
    Table,
    /// The stable JSON contract (the default when stdout is not a terminal).
    Json,
    /// Comma-separated rows.
    Csv,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page with inline SVG charts.
    Html,
}

/// Where and how to write a report.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// Output format [default: table on a terminal, json otherwise].
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,

    /// Write the report to FILE instead of stdout (replaced atomically).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `rlctl analyze`.
#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    /// Window for per-client counts: 1s, 10s, 1m, 5m, 1h.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1m",
        help_heading = "Analysis"
    )]
    pub window: String,

    /// How many top clients to list.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        help_heading = "Analysis"
    )]
    pub top: usize,

    /// Recommended limit = MULTIPLIER x per-window p99.9 (3 to 5 is sensible).
    #[arg(
        long,
        value_name = "X",
        default_value_t = 4.0,
        help_heading = "Analysis"
    )]
    pub multiplier: f64,

    /// Leave this client out of the basis of the recommendation (repeatable).
    #[arg(long, value_name = "CLIENT", help_heading = "Analysis")]
    pub exclude: Vec<String>,

    /// How many endpoints to report (by requests, most first).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        help_heading = "Analysis"
    )]
    pub endpoints: usize,

    /// Algorithm named in the written policy.
    #[arg(
        long,
        value_name = "ALGO",
        default_value = "token-bucket",
        help_heading = "Analysis"
    )]
    pub algo: String,

    /// Write the recommendation as a TOML policy (read by simulate, report, export).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub write_policy: Option<PathBuf>,

    /// Write per-(client, endpoint, window) counts as Parquet or CSV (by extension).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_counts: Option<PathBuf>,

    /// Read the results of the queries `rlctl sql` prints (a directory of
    /// Parquet or CSV tables, or the one file of `rlctl sql --combined`) instead
    /// of logs: the same report, counted elsewhere.
    #[arg(
        long,
        value_name = "DIR|FILE",
        help_heading = "Input",
        conflicts_with_all = ["export_counts", "exclude", "files"]
    )]
    pub from_sql_result: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// `rlctl generate`.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// Number of client addresses (at least 6). The mix: steady clients, batch
    /// workers, runaway loops, one NAT office of many users, crawlers, a monitor.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub clients: u32,

    /// Length of the traffic: 10s, 1m, 1h, 1d...
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1h",
        conflicts_with = "lines"
    )]
    pub duration: Window,

    /// Write exactly N lines; the run length is then set from N and the mix's
    /// expected rate, so the mix keeps its shape (replaces --duration).
    #[arg(long, value_name = "N")]
    pub lines: Option<u64>,

    /// Random seed: the same seed and flags give byte-identical output.
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,

    /// First instant, UTC: YYYY-MM-DDTHH:MM:SSZ.
    #[arg(long, value_name = "RFC3339", default_value = "2026-01-05T00:00:00Z")]
    pub start: String,

    /// Line format: combined, json, or a literal nginx log_format string such as
    /// '$msec $remote_addr "$request" $status'.
    #[arg(long, value_name = "FORMAT", default_value = "combined")]
    pub format: String,

    /// Zone offset printed in $time_local and $time_iso8601: +HHMM or -HHMM.
    #[arg(
        long,
        value_name = "+HHMM",
        default_value = "+0000",
        allow_hyphen_values = true
    )]
    pub time_offset: String,

    /// Write to FILE instead of stdout (gzip-compressed when it ends in .gz).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `rlctl simulate`.
#[derive(Debug, Clone, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    /// Algorithm: fixed-window, sliding-log, sliding-counter, token-bucket,
    /// leaky-bucket, gcra, or all (side by side) [default: all, or the policy's].
    #[arg(long, value_name = "ALGO", help_heading = "Limits")]
    pub algo: Option<String>,

    /// Limit per client key: REQUESTS/WINDOW (600/1m, 10/s, 10r/s, 10r/m, 5000/1h).
    #[arg(long, value_name = "L/W", help_heading = "Limits", conflicts_with_all = ["policy", "recommended"])]
    pub limit: Option<String>,

    /// Burst B for token-bucket and gcra (default L) and leaky-bucket (default 0).
    #[arg(long, value_name = "B", help_heading = "Limits")]
    pub burst: Option<u64>,

    /// nginx `delay=N` for leaky-bucket: report how long admitted requests wait.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Limits",
        conflicts_with = "nodelay"
    )]
    pub delay: Option<u64>,

    /// nginx `nodelay` for leaky-bucket: admitted requests never wait.
    #[arg(long, help_heading = "Limits")]
    pub nodelay: bool,

    /// Rules from a TOML policy (written by `rlctl analyze --write-policy`).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Limits",
        conflicts_with = "recommended"
    )]
    pub policy: Option<PathBuf>,

    /// Use the policy `rlctl analyze` recommends for this log (the default when
    /// neither --limit nor --policy is given).
    #[arg(long, help_heading = "Limits")]
    pub recommended: bool,

    /// Window of the recommendation (with --recommended).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1m",
        help_heading = "Limits"
    )]
    pub window: String,

    /// Multiplier of the recommendation (with --recommended).
    #[arg(long, value_name = "X", default_value_t = 4.0, help_heading = "Limits")]
    pub multiplier: f64,

    /// Number of limiter instances, each with its own local state.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        help_heading = "Deployment"
    )]
    pub instances: u32,

    /// How the load balancer spreads requests over instances: round-robin, random, hash.
    #[arg(
        long,
        value_name = "HOW",
        default_value = "hash",
        help_heading = "Deployment"
    )]
    pub balance: String,

    /// Seed of --balance random.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        help_heading = "Deployment"
    )]
    pub seed: u64,

    /// Replay with time compressed by X (traffic X times denser).
    #[arg(long, value_name = "X", help_heading = "Deployment")]
    pub what_if_scale: Option<f64>,

    /// Write one row per request and algorithm (CSV: time, client, endpoint, algorithm, allowed).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub decisions: Option<PathBuf>,

    /// Compare simulated decisions with those in the log (429/503 statuses or
    /// nginx $limit_req_status) as a confusion matrix.
    #[arg(long, help_heading = "Output")]
    pub compare_logged: bool,

    /// How many most-rejected clients to list.
    #[arg(long, value_name = "N", default_value_t = 10, help_heading = "Output")]
    pub top: usize,

    /// Replay this event table (Parquet or CSV as `rlctl convert` writes, or the
    /// sample `rlctl sql --sample-keys` selects) instead of reading logs.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Input",
        conflicts_with = "files"
    )]
    pub events: Option<PathBuf>,

    /// The share of client keys the --events table holds (0.01 or 1%): totals
    /// and rates are then estimated for all clients, with confidence intervals.
    #[arg(long, value_name = "RATE", requires = "events", help_heading = "Input")]
    pub key_sample_rate: Option<String>,

    #[command(flatten)]
    pub output: OutputArgs,
}

/// Formats of `rlctl report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// GitHub-flavoured Markdown (a pull-request comment, `$GITHUB_STEP_SUMMARY`).
    Markdown,
    /// One self-contained HTML page with inline SVG charts.
    Html,
    /// Everything, as the stable JSON contract.
    Json,
    /// JUnit XML: one test case per policy rule.
    Junit,
}

/// `rlctl report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    /// Rules from a TOML policy [default: the recommendation for this log].
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Limits",
        conflicts_with = "recommended"
    )]
    pub policy: Option<PathBuf>,

    /// Use the policy `rlctl analyze` recommends for this log (the default).
    #[arg(long, help_heading = "Limits")]
    pub recommended: bool,

    /// Window for per-client counts: 1s, 10s, 1m, 5m, 1h.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1m",
        help_heading = "Analysis"
    )]
    pub window: String,

    /// Recommended limit = MULTIPLIER x per-window p99.9.
    #[arg(
        long,
        value_name = "X",
        default_value_t = 4.0,
        help_heading = "Analysis"
    )]
    pub multiplier: f64,

    /// Leave this client out of the basis of the recommendation (repeatable).
    #[arg(long, value_name = "CLIENT", help_heading = "Analysis")]
    pub exclude: Vec<String>,

    /// How many top clients and endpoints to list.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        help_heading = "Analysis"
    )]
    pub top: usize,

    /// Fail when a rule rejects more than this share of its requests (1% or 0.01).
    #[arg(long, value_name = "PCT", help_heading = "Gates")]
    pub max_reject_rate: Option<String>,

    /// Fail when a rule rejects at least one request of more than this share of its clients.
    #[arg(long, value_name = "PCT", help_heading = "Gates")]
    pub max_clients_rejected: Option<String>,

    /// Fail when the analysis flags clients (peak window above the recommended limit).
    #[arg(long, help_heading = "Gates")]
    pub fail_on_flagged: bool,

    /// Format of the report on stdout (or -o).
    #[arg(long, value_enum, default_value = "markdown", help_heading = "Output")]
    pub format: ReportFormat,

    /// Write the report to FILE instead of stdout.
    #[arg(long, short, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,

    /// Also write the Markdown report to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_markdown: Option<PathBuf>,

    /// Also write the HTML report to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_html: Option<PathBuf>,

    /// Also write the JSON report to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_json: Option<PathBuf>,

    /// Also write JUnit XML to FILE (`-` = stdout).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_junit: Option<PathBuf>,

    /// Put the time of the run into the report (reports are byte-identical for
    /// the same input without it).
    #[arg(long, help_heading = "Output")]
    pub stamp: bool,
}

/// `rlctl export`.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// The policy file (TOML, as `rlctl analyze --write-policy` writes it).
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,

    /// The product to configure.
    #[arg(long, value_enum)]
    pub target: crate::export::Target,

    /// Count would-be rejections without rejecting (nginx, Envoy, HAProxy, AWS WAF;
    /// Traefik and Kong have no such mode).
    #[arg(long)]
    pub dry_run: bool,

    /// Expected number of distinct clients, to size per-client state (nginx zones,
    /// Envoy buckets, HAProxy tables).
    #[arg(long, value_name = "N", default_value_t = crate::export::DEFAULT_CLIENTS,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub clients: u64,

    /// Write to FILE instead of stdout (replaced atomically).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `rlctl convert`.
#[derive(Debug, Clone, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    /// The table to write: Parquet (`.parquet`) or CSV (`.csv`), by extension.
    #[arg(long, short, value_name = "FILE", help_heading = "Output")]
    pub output: PathBuf,
}

/// SQL dialects `rlctl sql` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dialect {
    /// Apache Spark SQL (Databricks, EMR, spark-sql).
    Spark,
    /// Trino and Presto (Athena).
    Trino,
    /// ClickHouse.
    Clickhouse,
    /// Google BigQuery (GoogleSQL).
    Bigquery,
    /// DuckDB.
    Duckdb,
}

/// How the time column holds time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeUnit {
    /// Integer milliseconds since the Unix epoch (`ts_ms` of `rlctl convert`).
    Ms,
    /// Seconds since the Unix epoch, integer or fractional (nginx `$msec`).
    S,
    /// A TIMESTAMP (or DateTime) column.
    Timestamp,
}

/// What `rlctl sql` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SqlFormat {
    /// The queries with comments saying where to save each result.
    Sql,
    /// `{"dialect", "queries": [{"name", "file", "sql"}]}` for scripts.
    Json,
}

/// `rlctl sql`.
#[derive(Debug, Clone, Args)]
pub struct SqlArgs {
    /// The SQL dialect of the engine that runs the queries.
    #[arg(long, value_enum)]
    pub dialect: Dialect,

    /// The table (or view) holding one row per request, as the engine names it.
    #[arg(long, value_name = "NAME", help_heading = "Table")]
    pub table: String,

    /// Column (or SQL expression) holding the request time.
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub time: String,

    /// How --time holds time.
    #[arg(long, value_enum, default_value = "ms", help_heading = "Table")]
    pub time_unit: TimeUnit,

    /// Column (or expression) holding the client key (`client` of `rlctl convert`).
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub client: String,

    /// Column holding the request path or target: the query string is dropped and
    /// ids become `:id` in SQL, as `rlctl analyze` does (with --method and --route);
    /// with --endpoint, only the sample's `path` column.
    #[arg(
        long,
        value_name = "COL",
        help_heading = "Table",
        required_unless_present = "endpoint"
    )]
    pub path: Option<String>,

    /// Column holding an already normalised endpoint (`endpoint` of `rlctl
    /// convert`), used as it is instead of normalising --path.
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub endpoint: Option<String>,

    /// Column holding the request method (with --path; without it endpoints are
    /// paths alone).
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub method: Option<String>,

    /// Column holding the HTTP status (for the 429/503 counts; without it they are 0).
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub status: Option<String>,

    /// Name paths matching REGEX as endpoint NAME (repeatable; first match wins),
    /// as `rlctl analyze --route`; the regex is passed to the engine as it is.
    #[arg(long, value_name = "REGEX=NAME", help_heading = "Table")]
    pub route: Vec<String>,

    /// Only rows matching this SQL condition (e.g. a partition filter).
    #[arg(long, value_name = "SQL", help_heading = "Table")]
    pub filter: Option<String>,

    /// Window for per-client counts: 1s, 10s, 1m, 5m, 1h.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1m",
        help_heading = "Analysis"
    )]
    pub window: String,

    /// How many endpoints (by requests) get per-client detail in the results.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        help_heading = "Analysis"
    )]
    pub endpoints: usize,

    /// Instead of the analysis queries, one query selecting the events of a
    /// deterministic hash sample of client keys (1%, 0.5%, or 0.01), for
    /// `rlctl simulate --events FILE --key-sample-rate RATE`.
    #[arg(long, value_name = "PCT", help_heading = "Simulation")]
    pub sample_keys: Option<String>,

    /// With --sample-keys: also take every event of the N clients with the
    /// highest peak window and of the N with the highest peak second (heavy
    /// clients make most rejections; their figures are then exact, not estimated).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 100,
        requires = "sample_keys",
        help_heading = "Simulation"
    )]
    pub sample_top: usize,

    /// One query returning all five result tables as one (a `result` column
    /// names each row's table): save it as one file for --from-sql-result FILE.
    #[arg(long, conflicts_with = "sample_keys", help_heading = "Output")]
    pub combined: bool,

    /// Print the queries as SQL (with comments) or as JSON for scripts.
    #[arg(long, value_enum, default_value = "sql", help_heading = "Output")]
    pub format: SqlFormat,
}
