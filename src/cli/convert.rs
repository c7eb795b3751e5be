//! Flags of `rlctl convert`.

use std::path::PathBuf;

use clap::Args;

use super::{IngestArgs, RoutesArg};

/// `rlctl convert`.
#[derive(Debug, Clone, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    #[command(flatten)]
    pub routes: RoutesArg,

    /// The table to write: Parquet (`.parquet`) or CSV (`.csv`), by extension.
    #[arg(long, short, value_name = "FILE", help_heading = "Output")]
    pub output: PathBuf,
}
