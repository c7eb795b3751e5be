//! Settings of `rlctl analyze`.

use std::path::PathBuf;

use super::{ingest_settings, output_format, use_colour};
use crate::analysis::AnalysisSettings;
use crate::cli::AnalyzeArgs;
use crate::ingest::{self, IngestError};
use crate::output;
use crate::simulate::{AlgorithmKind, SpecError};
use crate::stats::StatsSettings;
use crate::units::Window;

/// Validated settings of `rlctl analyze`.
#[derive(Debug, Clone)]
pub struct AnalyzeSettings {
    /// What the analysis runs on.
    pub analysis: AnalysisSettings,
    pub write_policy: Option<PathBuf>,
    pub export_counts: Option<PathBuf>,
    pub format: output::Format,
    pub output: Option<PathBuf>,
    pub colour: bool,
    pub quiet: bool,
}

/// Checks the flags of `rlctl analyze`.
pub fn analyze_settings(args: &AnalyzeArgs) -> Result<AnalyzeSettings, IngestError> {
    let window: Window = args
        .window
        .parse()
        .map_err(|e: crate::units::UnitError| IngestError::Usage(format!("--window: {e}")))?;
    if !(args.multiplier.is_finite() && args.multiplier > 0.0) {
        return Err(IngestError::Usage(format!(
            "--multiplier {}: must be a positive number (3 to 5 is usual)",
            args.multiplier
        )));
    }
    let algorithm: AlgorithmKind = args
        .algo
        .parse()
        .map_err(|e: SpecError| IngestError::Usage(format!("--algo: {e}")))?;
    if let Some(path) = &args.export_counts {
        crate::frames::TableFormat::of(path)
            .map_err(|e| IngestError::Usage(format!("--export-counts {e}")))?;
    }
    Ok(AnalyzeSettings {
        analysis: AnalysisSettings {
            ingest: ingest::Settings {
                paths: false, // nothing in an analysis routes on paths
                ..ingest_settings(&args.ingest)?
            },
            stats: StatsSettings {
                window,
                top: args.top,
                exclude: args.exclude.clone(),
                keep_counts: args.export_counts.is_some(),
            },
            multiplier: args.multiplier,
            endpoints: args.endpoints,
            algorithm,
        },
        write_policy: args.write_policy.clone(),
        export_counts: args.export_counts.clone(),
        format: output_format(&args.output),
        output: args.output.output.clone(),
        colour: use_colour(&args.output),
        quiet: args.ingest.quiet,
    })
}
