//! Flags of `rlctl analyze`.

use std::path::PathBuf;

use clap::Args;

use super::{
    DiscoverArg, ExcludeArg, IngestArgs, MultiplierArg, OutputArgs, RoutesArg, TopArg, WindowArg,
};
use crate::simulate::AlgorithmKind;

/// `rlctl analyze`.
#[derive(Debug, Clone, Args)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    #[command(flatten)]
    pub window: WindowArg,

    #[command(flatten)]
    pub top: TopArg,

    #[command(flatten)]
    pub multiplier: MultiplierArg,

    #[command(flatten)]
    pub exclude: ExcludeArg,

    /// How many endpoints to report (by requests, most first).
    #[arg(
        long,
        value_name = "N",
        default_value_t = super::flags::REPORTED_ENDPOINTS,
        help_heading = "Analysis"
    )]
    pub endpoints: usize,

    /// Which client-windows the limit rests on: `robust` leaves out clients whose
    /// traffic is a population of its own (runaway loops, batch jobs) and lists
    /// them; `all` keeps every client-window (the literal definition).
    #[arg(
        long,
        value_name = "robust|all",
        default_value = "robust",
        help_heading = "Analysis"
    )]
    pub baseline: String,

    #[command(flatten)]
    pub discover: DiscoverArg,

    #[command(flatten)]
    pub routes: RoutesArg,

    /// Write the endpoint templates used (discovered or read) as a routes file.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub write_routes: Option<PathBuf>,

    /// Algorithm named in the written policy.
    #[arg(
        long,
        value_name = "ALGO",
        default_value = "token-bucket",
        help_heading = "Analysis"
    )]
    pub algo: AlgorithmKind,

    /// Write the recommendation as a TOML policy (read by simulate, report, export).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub write_policy: Option<PathBuf>,

    /// Write per-(client, endpoint, window) counts as Parquet or CSV (by extension).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub export_counts: Option<PathBuf>,

    /// Read the results of the queries `rlctl sql` prints (a directory of
    /// Parquet or CSV tables, or the one file of `rlctl sql --combined`) instead
    /// of logs: the same report, counted elsewhere (endpoints as the query
    /// named them: give `--routes` to `rlctl sql`).
    #[arg(
        long,
        value_name = "DIR|FILE",
        help_heading = "Input",
        conflicts_with_all = [
            "export_counts", "exclude", "files", "routes", "write_routes",
            // Applied when the events were read, not to a result (found by review).
            "cidr4", "cidr6", "route", "strict", "log_format",
        ]
    )]
    pub from_sql_result: Option<PathBuf>,

    #[command(flatten)]
    pub output: OutputArgs,
}
