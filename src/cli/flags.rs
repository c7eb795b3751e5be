//! Flags several commands share, each declared once as a small clap group that
//! a command flattens where the flag sits in its help. Values arrive typed:
//! `--window` is a [`Window`] (clap rejects `7x` with the unit's message),
//! `--multiplier` a positive number.
//!
//! The wording below is `rlctl analyze`'s; a command that words a flag for its
//! own use (`simulate --window` is the recommendation's) overrides the help
//! text, heading or default with `mut_arg` on its own struct, never the type or
//! the parser.

use std::path::PathBuf;

use clap::Args;

use crate::discover::DiscoverChoice;
use crate::units::Window;

/// `--window`.
#[derive(Debug, Clone, Args)]
pub struct WindowArg {
    /// Window for per-client counts: whole seconds, minutes, hours or days (1s, 10s, 1m, 5m, 1h, 1d).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1m",
        help_heading = "Analysis"
    )]
    pub window: Window,
}

/// `--multiplier`.
#[derive(Debug, Clone, Args)]
pub struct MultiplierArg {
    /// Recommended limit = MULTIPLIER x per-window p99.9 (3 to 5 is sensible).
    #[arg(
        long,
        value_name = "X",
        default_value_t = 4.0,
        value_parser = positive_multiplier,
        help_heading = "Analysis"
    )]
    pub multiplier: f64,
}

/// `--exclude`.
#[derive(Debug, Clone, Args)]
pub struct ExcludeArg {
    /// Leave this client out of the analysis (repeatable): its requests count
    /// in none of its figures, so the recommendation is worked out, and
    /// clients are flagged, without it (report's replay of the policy still
    /// counts them).
    #[arg(long, value_name = "CLIENT", help_heading = "Analysis")]
    pub exclude: Vec<String>,
}

/// How many endpoints (by requests) analyze reports by default: also the
/// endpoints whose rules the recommended policy holds wherever a command
/// recommends one (simulate, report), so that each gives the policy
/// `analyze --write-policy` writes.
pub const REPORTED_ENDPOINTS: usize = 20;

/// `--top`.
#[derive(Debug, Clone, Args)]
pub struct TopArg {
    /// How many top clients to list.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 20,
        help_heading = "Analysis"
    )]
    pub top: usize,
}

/// `--routes`.
#[derive(Debug, Clone, Args)]
pub struct RoutesArg {
    /// Name endpoints by the path templates of this routes file (one per line,
    /// as `rlctl analyze --write-routes` writes them; `analyze` then discovers
    /// none): a path gets the same endpoint in analyze, simulate, report,
    /// convert and sql. `--route` rules still win.
    #[arg(long, value_name = "FILE", help_heading = "Analysis")]
    pub routes: Option<PathBuf>,
}

/// `--discover`.
#[derive(Debug, Clone, Args)]
pub struct DiscoverArg {
    /// Discover endpoint templates from the paths (`/api/orders/:id`,
    /// `/static/app.:hash.js`) and name endpoints by them; `off` keeps the
    /// shape rules only.
    #[arg(
        long,
        value_name = "on|off",
        default_value = "on",
        help_heading = "Analysis"
    )]
    pub discover: DiscoverChoice,
}

/// The largest `--multiplier`: a limit a million times the normal peak is
/// no limit, and far larger ones overflow what every gateway can count.
const MAX_MULTIPLIER: f64 = 1e6;

/// A `--multiplier`: a finite number above 0, at most [`MAX_MULTIPLIER`].
pub fn positive_multiplier(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x <= MAX_MULTIPLIER => Ok(x),
        _ => Err(format!(
            "must be a positive number up to {MAX_MULTIPLIER} (3 to 5 is usual)"
        )),
    }
}
