//! `rlctl analyze`.
use crate::Outcome;
use crate::cli::AnalyzeArgs;

/// Runs `rlctl analyze`.
pub fn run(_args: AnalyzeArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("analyze is being built")
}
