//! Flags of `rlctl watch`.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::IngestArgs;
use crate::simulate::gateway::Gateway;
use crate::units::Window;

/// What `rlctl watch` writes on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WatchFormat {
    /// A live view refreshed every second (the default on a terminal).
    View,
    /// One JSON summary per --interval (the default in a pipe or file).
    Jsonl,
    /// Nothing: metrics only.
    None,
}

/// `rlctl watch`.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("files", |a| a.help("Plain access logs to follow as they grow (not compressed, not `-`), in any order")),
    mut_arg("strict", |a| a.hide(true)),
)]
pub struct WatchArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    /// The policy to dry-run (TOML, as `rlctl analyze --write-policy` writes it).
    #[arg(long, value_name = "FILE", required = true, help_heading = "Limits")]
    pub policy: PathBuf,

    /// Dry-run each rule as a gateway enforces the config `rlctl export`
    /// writes (as `rlctl simulate --gateway`): nginx, haproxy,
    /// haproxy-req-rate, envoy, envoy-timer, envoy-ratelimit, traefik, kong,
    /// kong-redis, aws-waf and cloudflare (documented models), redis-swc.
    #[arg(long, value_name = "NAME", help_heading = "Limits")]
    pub gateway: Option<Gateway>,

    /// Serve Prometheus metrics at http://ADDR/metrics.
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1:9464",
        help_heading = "Watch"
    )]
    pub listen: SocketAddr,

    /// Serve no metrics.
    #[arg(long, conflicts_with = "listen", help_heading = "Watch")]
    pub no_listen: bool,

    /// Read each file from its start, not only the lines appended after start.
    #[arg(long, help_heading = "Watch")]
    pub from_start: bool,

    /// How long to wait for lines that arrive out of time order across files
    /// (lines later than that are counted as late, see --max-lateness).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "5s",
        help_heading = "Watch"
    )]
    pub max_delay: Window,

    /// How far behind the newest log time a late line can still be decided
    /// in its client's own time (limiter states are kept so long; at least
    /// 1s); a late line a rule's state cannot place is counted as unplaced.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "15m",
        help_heading = "Watch"
    )]
    pub max_lateness: Window,

    /// What to write on stdout [default: view on a terminal, jsonl otherwise].
    #[arg(long, value_enum, help_heading = "Watch")]
    pub format: Option<WatchFormat>,

    /// How often a JSON summary is written (--format jsonl).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        help_heading = "Watch"
    )]
    pub interval: Window,

    /// Exit 0 once the share of clients hit by each rule (last hour), judged
    /// every minute of log time, was at or below SHARE (1% or 0.01) for
    /// --for; exit 1 at the first judgement above it.
    #[arg(long, value_name = "SHARE", help_heading = "Verdict")]
    pub until_clients_hit: Option<String>,

    /// How long (log time) the share must hold for --until-clients-hit.
    #[arg(
        long = "for",
        value_name = "DURATION",
        default_value = "24h",
        requires = "until_clients_hit",
        help_heading = "Verdict"
    )]
    pub hold: Window,
}
