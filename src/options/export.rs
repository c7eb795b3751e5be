//! Settings of `rlctl export`: the policy file, the product and its options.

use std::path::PathBuf;

use crate::cli::{ExportArgs, ExportTarget};
use crate::export::{ExportOptions, Target};

/// Validated settings of `rlctl export`.
#[derive(Debug, Clone)]
pub struct ExportSettings {
    /// The policy file to read.
    pub policy: PathBuf,
    pub target: Target,
    pub options: ExportOptions,
    /// Where to write (`None` = stdout).
    pub output: Option<PathBuf>,
}

/// The library's product for a `--target` value.
pub fn target_of(target: ExportTarget) -> Target {
    match target {
        ExportTarget::Nginx => Target::Nginx,
        ExportTarget::Envoy => Target::Envoy,
        ExportTarget::Traefik => Target::Traefik,
        ExportTarget::Kong => Target::Kong,
        ExportTarget::Haproxy => Target::Haproxy,
        ExportTarget::AwsWaf => Target::AwsWaf,
    }
}

/// Turns the flags of `rlctl export` into settings (clap has checked them all).
pub fn export_settings(args: &ExportArgs) -> ExportSettings {
    ExportSettings {
        policy: args.policy.clone(),
        target: target_of(args.target),
        options: ExportOptions {
            dry_run: args.dry_run,
            clients: args.clients,
        },
        output: args.output.clone(),
    }
}
