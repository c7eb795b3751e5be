//! Flags of `rlctl analyze`.

use std::path::PathBuf;

use clap::Args;

use super::{ExcludeArg, IngestArgs, MultiplierArg, OutputArgs, TopArg, WindowArg};
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
    pub algo: AlgorithmKind,

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
