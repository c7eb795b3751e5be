//! Settings of `rlctl convert`: the ingestion and the table to write.

use std::path::PathBuf;

use super::{OptionsError, ingest_settings, routes_settings};
use crate::cli::ConvertArgs;
use crate::discover::TemplateSet;
use crate::frames::TableFormat;
use crate::ingest;

/// Validated settings of `rlctl convert`.
#[derive(Debug, Clone)]
pub struct ConvertSettings {
    pub ingest: ingest::Settings,
    /// `--routes`: the templates endpoints are named by.
    pub routes: Option<TemplateSet>,
    /// The table to write, and its format (by extension).
    pub output: PathBuf,
    pub format: TableFormat,
    pub quiet: bool,
}

/// Checks the flags of `rlctl convert`.
pub fn convert_settings(args: &ConvertArgs) -> Result<ConvertSettings, OptionsError> {
    let format =
        TableFormat::of(&args.output).map_err(|e| OptionsError::Usage(format!("--output {e}")))?;
    let output = Some(super::Sink::File(&args.output));
    super::check_outputs(&args.ingest.files, &[("--output", output)])?;
    Ok(ConvertSettings {
        ingest: ingest_settings(&args.ingest)?,
        routes: routes_settings(&args.routes)?,
        output: args.output.clone(),
        format,
        quiet: args.ingest.quiet,
    })
}
