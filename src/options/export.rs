//! Settings of `rlctl export`: the policy file, the product and its options.

use std::path::PathBuf;

use crate::cli::{ExportArgs, ExportTarget, IngestArgs};
use crate::export::{ExportOptions, Target};
use crate::ingest::{self, IngestError};
use crate::simulate::gateway::Gateway;

/// Validated settings of `rlctl export`.
#[derive(Debug, Clone)]
pub struct ExportSettings {
    /// The policy file to read.
    pub policy: PathBuf,
    pub target: Target,
    pub options: ExportOptions,
    /// Where to write (`None` = stdout).
    pub output: Option<PathBuf>,
    /// `--check LOG...`: the logs to replay (`None`: write the configuration).
    pub check: Option<ingest::Settings>,
}

/// The gateway model that replays the configuration `--target` writes.
pub fn gateway_of(target: Target) -> Gateway {
    match target {
        Target::Nginx => Gateway::Nginx,
        Target::Envoy => Gateway::Envoy,
        Target::Traefik => Gateway::Traefik,
        Target::Kong => Gateway::Kong,
        Target::Haproxy => Gateway::Haproxy,
        Target::AwsWaf => Gateway::AwsWaf,
    }
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

/// Turns the flags of `rlctl export` into settings; the `--check` logs are
/// read as its format flags say, with the ingestion defaults of `rlctl simulate`
/// otherwise (client key `ip`).
pub fn export_settings(args: &ExportArgs) -> Result<ExportSettings, IngestError> {
    let check = if args.check.is_empty() {
        None
    } else {
        let ingest = IngestArgs {
            files: args.check.clone(),
            format: args.format.clone(),
            key: "ip".into(),
            cidr4: None,
            cidr6: None,
            route: Vec::new(),
            host_field: "vhost".into(),
            strict: false,
            quiet: true,
        };
        Some(super::ingest_settings(&ingest)?)
    };
    Ok(ExportSettings {
        policy: args.policy.clone(),
        target: target_of(args.target),
        options: ExportOptions {
            dry_run: args.dry_run,
            clients: args.clients,
        },
        output: args.output.clone(),
        check,
    })
}
