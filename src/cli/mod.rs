//! Command-line flags, declared with clap's derive API. No logic lives here:
//! [`crate::options`] validates these raw values and turns them into settings.
//! This file holds the command list and the flags several commands share; each
//! command's own flags live in a file of its own.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod analyze;
mod convert;
mod export;
mod flags;
mod generate;
mod report;
mod simulate;
mod sql;
mod watch;

pub use analyze::AnalyzeArgs;
pub use convert::ConvertArgs;
pub use export::{ExportArgs, ExportTarget};
pub use flags::{
    DiscoverArg, ExcludeArg, MultiplierArg, REPORTED_ENDPOINTS, RoutesArg, TopArg, WindowArg,
    positive_multiplier,
};
pub use generate::GenerateArgs;
pub use report::{ReportArgs, ReportFormat};
pub use simulate::SimulateArgs;
pub use sql::{Dialect, SqlArgs, SqlFormat, TimeUnit};
pub use watch::{WatchArgs, WatchFormat};

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
    /// Dry-run a policy on live access logs: follow them across rotations,
    /// replay every request in shadow, serve Prometheus metrics.
    Watch(Box<WatchArgs>),
}

/// Flags shared by every command that reads access logs.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Input")]
pub struct IngestArgs {
    /// Access logs to read (plain, gzip or zstd; `-` for stdin), in any order.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    #[command(flatten)]
    pub format: FormatArgs,

    /// Client key: ip, xff, user, field:NAME, or several joined with + (ip+user).
    #[arg(long, value_name = "KEY", default_value = "ip")]
    pub key: String,

    /// Aggregate IPv4 client addresses (IPv4-mapped IPv6 ones too) into /N
    /// prefixes (e.g. 24); the key needs an ip or xff part.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=32))]
    pub cidr4: Option<u8>,

    /// Aggregate IPv6 client addresses into /N prefixes (e.g. 64); the key
    /// needs an ip or xff part.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=128))]
    pub cidr6: Option<u8>,

    /// Name paths matching REGEX as endpoint NAME (repeatable; first match wins;
    /// applied before the automatic :id normalisation). `@HOST REGEX=NAME`
    /// applies only to requests for virtual host HOST (see --host-field).
    #[arg(long, value_name = "REGEX=NAME")]
    pub route: Vec<String>,

    /// The field holding the virtual host that `--route '@HOST ...'` rules
    /// read: `vhost` of Apache vhost_combined, or any field as `--key
    /// field:NAME` names it (`domain_name` for ALB, `cs(Host)` for W3C,
    /// `authority` for Envoy, `request.host` for Caddy JSON).
    #[arg(long, value_name = "NAME", default_value = "vhost")]
    pub host_field: String,

    /// Treat any malformed line as an error (exit 2) instead of skipping it.
    #[arg(long)]
    pub strict: bool,

    /// No progress bar, no notes on stderr (errors are still printed).
    #[arg(long, short)]
    pub quiet: bool,
}

/// How the lines of access logs are read: their format and times (part of
/// [`IngestArgs`], and of `rlctl export --check`).
#[derive(Debug, Clone, Args)]
pub struct FormatArgs {
    /// Log format: auto, combined, common, json, a source (alb, cloudfront, w3c,
    /// haproxy, ingress-nginx, traefik, envoy, istio, caddy, gcp, cloudflare, …;
    /// see docs/sources.md), or a literal nginx `log_format` string such as
    /// '$msec $remote_addr "$request" $status'.
    #[arg(long, value_name = "FORMAT", default_value = "auto")]
    pub log_format: String,

    /// Read the `log_format` named by --log-format-name from this nginx config.
    #[arg(
        long,
        value_name = "FILE",
        requires = "log_format_name",
        conflicts_with = "log_format"
    )]
    pub nginx_conf: Option<PathBuf>,

    /// Name of the `log_format` to take from --nginx-conf (e.g. main).
    #[arg(long, value_name = "NAME", requires = "nginx_conf")]
    pub log_format_name: Option<String>,

    /// How a literal --log-format string's values were escaped: default
    /// (`\xHH`), json or none, as its `log_format ... escape=` says
    /// (--nginx-conf reads it from the config).
    #[arg(long, value_name = "ESCAPE", conflicts_with = "nginx_conf",
          value_parser = crate::ingest::log_escapes::LogEscape::parse)]
    pub log_escape: Option<crate::ingest::log_escapes::LogEscape>,

    /// JSON field mapping, e.g. time=ts,client=request.remote_ip,path=request.uri
    /// (roles: time, client, method, path, status, user, xff, limit_req_status).
    #[arg(long, value_name = "ROLE=PATH,...", value_delimiter = ',')]
    pub field: Vec<String>,

    /// Stamp each request with when it arrived, where the log format tells it
    /// (a start time, or the end time minus the duration), or with the time as
    /// logged. stderr names the time used per input.
    #[arg(long, value_name = "WHEN", default_value = "arrival",
          value_parser = crate::ingest::arrival::TimeOf::parse)]
    pub time_of: crate::ingest::arrival::TimeOf,
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
