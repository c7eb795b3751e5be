//! `rlctl export`: reads a policy, renders it for the chosen gateway product
//! ([`crate::export`]) and writes the configuration to stdout or a file.

use anyhow::Context;

use crate::Outcome;
use crate::cli::ExportArgs;
use crate::export::ExportOptions;
use crate::output;
use crate::policy::Policy;

/// Runs `rlctl export`.
pub fn run(args: ExportArgs) -> anyhow::Result<Outcome> {
    let policy = Policy::load_policy(&args.policy)?;
    let opts = ExportOptions {
        dry_run: args.dry_run,
        clients: args.clients,
    };
    let exporter = args.target.exporter();
    let text = exporter.render_policy(&policy, &opts).with_context(|| {
        format!(
            "cannot export {} for {}",
            args.policy.display(),
            exporter.target()
        )
    })?;
    output::write_output(args.output.as_deref(), text.as_bytes()).with_context(|| {
        match &args.output {
            Some(path) => format!("cannot write {}", path.display()),
            None => "cannot write to stdout".to_string(),
        }
    })?;
    Ok(Outcome::Success)
}
