//! Flags of `rlctl sql`.

use clap::{Args, ValueEnum};

use super::{RoutesArg, WindowArg};

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
#[command(
    mut_arg("routes", |a| a.help_heading("Table")),
    group(clap::ArgGroup::new("endpoints_from").required(true).multiple(true)),
)]
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
        group = "endpoints_from"
    )]
    pub path: Option<String>,

    /// Column holding an already normalised endpoint (`endpoint` of `rlctl
    /// convert`), used as it is instead of normalising --path.
    #[arg(
        long,
        value_name = "COL",
        help_heading = "Table",
        group = "endpoints_from"
    )]
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
    /// `@HOST REGEX=NAME` rules need --host.
    #[arg(long, value_name = "REGEX=NAME", help_heading = "Table")]
    pub route: Vec<String>,

    /// Column holding the virtual host that `--route '@HOST ...'` rules read
    /// (as `rlctl analyze --host-field`; compared without case and port).
    #[arg(long, value_name = "COL", help_heading = "Table")]
    pub host: Option<String>,

    #[command(flatten)]
    pub routes: RoutesArg,

    /// Only rows matching this SQL condition (e.g. a partition filter).
    #[arg(long, value_name = "SQL", help_heading = "Table")]
    pub filter: Option<String>,

    #[command(flatten)]
    pub window: WindowArg,

    /// How many endpoints (by requests) get per-client detail in the results.
    #[arg(
        long,
        value_name = "N",
        default_value_t = super::flags::REPORTED_ENDPOINTS,
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
