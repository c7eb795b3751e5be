//! `rlctl generate`.
use crate::Outcome;
use crate::cli::GenerateArgs;

/// Runs `rlctl generate`.
pub fn run(_args: GenerateArgs) -> anyhow::Result<Outcome> {
    anyhow::bail!("generate is being built")
}
