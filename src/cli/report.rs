//! Flags of `rlctl report`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{DiscoverArg, ExcludeArg, IngestArgs, MultiplierArg, RoutesArg, TopArg, WindowArg};
use crate::scenario::GatewayChoice;

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
#[command(
    mut_arg("multiplier", |a| a.help("Recommended limit = MULTIPLIER x per-window p99.9")),
    mut_arg("top", |a| a
        .help("How many top clients to list, and endpoints up to the 20 the traffic analysis covers (those `analyze` reports, so that the recommended policy is the one `analyze --write-policy` writes)")
        .default_value("10")),
)]
pub struct ReportArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    #[command(flatten)]
    pub routes: RoutesArg,

    #[command(flatten)]
    pub discover: DiscoverArg,

    /// Rules from a TOML policy [default: the recommendation for this log].
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Limits",
        conflicts_with = "recommended"
    )]
    pub policy: Option<PathBuf>,

    /// Add the section "the policy as your gateway enforces it": the policy
    /// replayed as this gateway (or all of them) enforces the exported config
    /// (names as `rlctl simulate --gateway`; aws-waf and cloudflare are models).
    #[arg(long, value_name = "NAME", help_heading = "Limits")]
    pub gateway: Option<GatewayChoice>,

    /// Use the policy `rlctl analyze` recommends for this log (the default).
    #[arg(long, help_heading = "Limits")]
    pub recommended: bool,

    #[command(flatten)]
    pub window: WindowArg,

    #[command(flatten)]
    pub multiplier: MultiplierArg,

    #[command(flatten)]
    pub exclude: ExcludeArg,

    #[command(flatten)]
    pub top: TopArg,

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
