//! Flags of `rlctl generate`.

use std::path::PathBuf;

use clap::Args;

use crate::units::Window;

/// `rlctl generate`.
#[derive(Debug, Clone, Args)]
pub struct GenerateArgs {
    /// Number of client addresses (at least 6). The mix: steady clients, batch
    /// workers, runaway loops, one NAT office of many users, crawlers, a monitor.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub clients: u32,

    /// Length of the traffic: 10s, 1m, 1h, 1d...
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1h",
        conflicts_with = "lines"
    )]
    pub duration: Window,

    /// Write exactly N lines; the run length is then set from N and the mix's
    /// expected rate, so the mix keeps its shape (replaces --duration).
    #[arg(long, value_name = "N")]
    pub lines: Option<u64>,

    /// Random seed: the same seed and flags give byte-identical output.
    #[arg(long, value_name = "N", default_value_t = 42)]
    pub seed: u64,

    /// First instant, UTC: YYYY-MM-DDTHH:MM:SSZ. A log reaching outside the
    /// years 1 to 9999 (which rlctl reads) is refused.
    #[arg(long, value_name = "RFC3339", default_value = "2026-01-05T00:00:00Z")]
    pub start: String,

    /// Line format: combined, json, or a literal nginx log_format string such as
    /// '$msec $remote_addr "$request" $status'.
    #[arg(long, value_name = "FORMAT", default_value = "combined")]
    pub format: String,

    /// Zone offset printed in $time_local and $time_iso8601: +HHMM or -HHMM.
    #[arg(
        long,
        value_name = "+HHMM",
        default_value = "+0000",
        allow_hyphen_values = true
    )]
    pub time_offset: String,

    /// Add a pool of N high-cardinality raw paths (hashed assets, short hex and
    /// base62 ids, slugs) that a quarter of ordinary requests ask for; a log of
    /// 4N lines or more holds all N.
    #[arg(long, value_name = "N")]
    pub distinct_paths: Option<u32>,

    /// Add N vulnerability scanners (mostly 404s over many distinct paths).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub scanners: u32,

    /// Shuffle the lines within each minute (seeded).
    #[arg(long)]
    pub shuffle: bool,

    /// Write each request when it ends, stamped with when it began (as
    /// Apache's %t is): lines a little out of time order.
    #[arg(long, conflicts_with = "shuffle")]
    pub logged_at_end: bool,

    /// Deal the requests to K servers and write their time-sorted logs one
    /// after another, as `cat server-*.log` would.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub servers: u32,

    /// Write to FILE instead of stdout (gzip-compressed when it ends in .gz).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
