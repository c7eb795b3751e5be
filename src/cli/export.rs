//! Flags of `rlctl export`.

use std::path::PathBuf;

use clap::Args;

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
