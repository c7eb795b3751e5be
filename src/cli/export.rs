//! Flags of `rlctl export`.

use std::path::PathBuf;

use clap::{ArgGroup, Args, ValueEnum};

use super::FormatArgs;

/// `rlctl export`. The log-reading flags read the --check logs, so they
/// require it (a flag left at its default does not count).
#[derive(Debug, Clone, Args)]
#[command(group(
    ArgGroup::new("check_format")
        .args(["log_format", "nginx_conf", "log_escape", "field", "time_of"])
        .multiple(true)
        .requires("check")
))]
pub struct ExportArgs {
    /// The policy file (TOML, as `rlctl analyze --write-policy` writes it).
    #[arg(long, value_name = "FILE")]
    pub policy: PathBuf,

    /// The product to configure.
    #[arg(long, value_enum)]
    pub target: ExportTarget,

    /// Count would-be rejections without rejecting (nginx, Envoy, HAProxy, AWS WAF;
    /// Traefik and Kong have no such mode).
    #[arg(long)]
    pub dry_run: bool,

    /// Expected number of distinct clients, to size per-client state (nginx zones,
    /// Envoy buckets, HAProxy tables); at most a billion.
    #[arg(long, value_name = "N", default_value_t = crate::export::DEFAULT_CLIENTS,
          value_parser = clap::value_parser!(u64).range(1..=crate::export::MAX_CLIENTS))]
    pub clients: u64,

    /// Write to FILE instead of stdout (replaced atomically).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Instead of the configuration, replay these access logs with the policy
    /// and as the target enforces the exported configuration, and list the
    /// requests where they differ, with the reason (rounding, window
    /// alignment, counted rejections).
    #[arg(long, value_name = "LOG", num_args = 1.., help_heading = "Check")]
    pub check: Vec<PathBuf>,

    /// How the --check logs are read, as for `rlctl analyze` (--log-format,
    /// --nginx-conf, --log-escape, --field, --time-of).
    #[command(flatten, next_help_heading = "Check")]
    pub format: FormatArgs,
}

/// The products `rlctl export --target` knows (the options layer maps each to
/// [`crate::export::Target`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportTarget {
    /// nginx `limit_req_zone` / `limit_req` (http {} context).
    Nginx,
    /// Envoy local rate limit HTTP filter (YAML).
    Envoy,
    /// Traefik rateLimit middleware (dynamic configuration, YAML).
    Traefik,
    /// Kong rate-limiting plugin (decK declarative YAML).
    Kong,
    /// HAProxy stick tables (frontend and backend sections).
    Haproxy,
    /// AWS WAF rate-based rules (JSON).
    AwsWaf,
}
