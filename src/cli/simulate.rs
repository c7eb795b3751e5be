//! Flags of `rlctl simulate`.

use std::path::PathBuf;

use clap::Args;

use super::{DiscoverArg, IngestArgs, MultiplierArg, OutputArgs, RoutesArg, TopArg, WindowArg};
use crate::scenario::{AlgoChoice, GatewayChoice};
use crate::simulate::Balance;
use crate::units::Limit;

/// `rlctl simulate`.
#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("window", |a| a.help("Window of the recommendation (with --recommended)").help_heading("Limits").conflicts_with_all(["limit", "policy"])),
    mut_arg("multiplier", |a| a.help("Multiplier of the recommendation (with --recommended)").help_heading("Limits").conflicts_with_all(["limit", "policy"])),
    mut_arg("top", |a| a.help("How many most-rejected clients to list").default_value("10").help_heading("Output")),
)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub ingest: IngestArgs,

    #[command(flatten)]
    pub routes: RoutesArg,

    #[command(flatten)]
    pub discover: DiscoverArg,

    /// Algorithm: fixed-window, sliding-log, sliding-counter, token-bucket,
    /// leaky-bucket, gcra, or all (side by side) [default: all, or the policy's].
    #[arg(long, value_name = "ALGO", help_heading = "Limits")]
    pub algo: Option<AlgoChoice>,

    /// Limit per client key: REQUESTS/WINDOW (600/1m, 10/s, 10r/s, 10r/m, 5000/1h).
    #[arg(long, value_name = "L/W", help_heading = "Limits", conflicts_with_all = ["policy", "recommended"])]
    pub limit: Option<Limit>,

    /// Burst B for token-bucket and gcra (default L) and leaky-bucket (default 0);
    /// not with --policy, whose rules give their own.
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

    /// Replay as a gateway enforces the config `rlctl export` writes: nginx,
    /// haproxy, haproxy-req-rate, envoy, envoy-timer, envoy-ratelimit, traefik,
    /// kong, kong-redis, aws-waf and cloudflare (documented models), redis-swc,
    /// or all (side by side, after the policy itself).
    #[arg(long, value_name = "NAME", help_heading = "Limits")]
    pub gateway: Option<GatewayChoice>,

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

    #[command(flatten)]
    pub window: WindowArg,

    #[command(flatten)]
    pub multiplier: MultiplierArg,

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
    pub balance: Balance,

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

    /// Write one row per request and algorithm (CSV: timestamp_ms, time, client, endpoint,
    /// algorithm, allowed).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub decisions: Option<PathBuf>,

    /// Compare simulated decisions with those in the log (429/503 statuses or
    /// nginx $limit_req_status) as a confusion matrix.
    #[arg(long, help_heading = "Output")]
    pub compare_logged: bool,

    #[command(flatten)]
    pub top: TopArg,

    /// Replay this event table (Parquet or CSV as `rlctl convert` writes, or the
    /// sample `rlctl sql --sample-keys` selects) instead of reading logs.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Input",
        // Address prefixes are made when events are read (found by review:
        // they were taken and ignored).
        conflicts_with_all = ["files", "cidr4", "cidr6"]
    )]
    pub events: Option<PathBuf>,

    /// The share of client keys the --events table holds (0.01 or 1%): totals
    /// and rates are then estimated for all clients, with confidence intervals.
    #[arg(long, value_name = "RATE", requires = "events", help_heading = "Input")]
    pub key_sample_rate: Option<String>,

    #[command(flatten)]
    pub output: OutputArgs,
}
