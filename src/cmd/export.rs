//! `rlctl export`: reads a policy, renders it for the chosen gateway product
//! ([`crate::export`]) and writes the configuration to stdout or a file.

use anyhow::Context;

use crate::Outcome;
use crate::cli::ExportArgs;
use crate::options;
use crate::output;
use crate::policy::Policy;

/// Runs `rlctl export`.
pub fn run(args: ExportArgs) -> anyhow::Result<Outcome> {
    let settings = options::export_settings(&args);
    let policy = Policy::load_policy(&settings.policy)?;
    let exporter = settings.target.exporter();
    let text = exporter
        .render_policy(&policy, &settings.options)
        .with_context(|| {
            format!(
                "cannot export {} for {}",
                settings.policy.display(),
                exporter.target()
            )
        })?;
    output::write_output(settings.output.as_deref(), text.as_bytes()).with_context(|| {
        match &settings.output {
            Some(path) => format!("cannot write {}", path.display()),
            None => "cannot write to stdout".to_string(),
        }
    })?;
    Ok(Outcome::Success)
}
