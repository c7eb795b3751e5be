//! Settings of `rlctl analyze`.

use std::path::PathBuf;

use super::{ingest_settings, output_format, use_colour};
use crate::cli::{AnalyzeArgs, OutputFormat};
use crate::discover::{DiscoverChoice, TemplateSet, routes_file};
use crate::ingest::key::KeySpec;
use crate::ingest::{self, IngestError};
use crate::profile::ProfileColumns;
use crate::recommend::BaselineChoice;
use crate::simulate::{AlgorithmKind, SpecError};
use crate::stats::StatsSettings;
use crate::units::Window;

/// Validated settings of `rlctl analyze`.
#[derive(Debug, Clone)]
pub struct AnalyzeSettings {
    pub ingest: ingest::Settings,
    pub stats: StatsSettings,
    pub multiplier: f64,
    /// How many endpoints to report.
    pub endpoints: usize,
    /// Algorithm written into the policy.
    pub algorithm: AlgorithmKind,
    pub write_policy: Option<PathBuf>,
    pub export_counts: Option<PathBuf>,
    /// Baseline, endpoint discovery and client profiles.
    pub recommend: RecommendOptions,
    pub format: OutputFormat,
    pub output: Option<PathBuf>,
    pub colour: bool,
    pub quiet: bool,
}

/// How the recommendation is formed beyond the figures.
#[derive(Debug, Clone, Default)]
pub struct RecommendOptions {
    pub baseline: BaselineChoice,
    pub discover: DiscoverChoice,
    /// Templates read with `--routes` (they replace discovery).
    pub routes: Option<TemplateSet>,
    pub write_routes: Option<PathBuf>,
    /// The extra key columns holding the user agent and the user, when ingested.
    pub profile_columns: ProfileColumns,
}

/// Reads a routes file.
pub fn read_routes(path: &std::path::Path) -> Result<TemplateSet, IngestError> {
    let text = std::fs::read_to_string(path).map_err(|source| IngestError::Open {
        file: path.display().to_string(),
        source,
    })?;
    let templates = routes_file::parse(&text, &path.display().to_string())
        .map_err(|e| IngestError::Usage(format!("--routes {e}")))?;
    Ok(TemplateSet::new(templates))
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
    let mut ingest = ingest::Settings {
        paths: false, // nothing in an analysis routes on paths
        ..ingest_settings(&args.ingest)?
    };
    // Client profiles read the user agent and the user of each request.
    let profile_columns = ProfileColumns {
        user_agent: Some(ingest.keys.add(KeySpec::user_agent())),
        user: Some(
            ingest
                .keys
                .add(KeySpec::parse("user", None, None).expect("`user` is a key")),
        ),
    };
    let recommend = RecommendOptions {
        baseline: args
            .baseline
            .parse()
            .map_err(|e: String| IngestError::Usage(format!("--baseline: {e}")))?,
        discover: args
            .discover
            .parse()
            .map_err(|e: String| IngestError::Usage(format!("--discover: {e}")))?,
        routes: args.routes.as_deref().map(read_routes).transpose()?,
        write_routes: args.write_routes.clone(),
        profile_columns,
    };
    Ok(AnalyzeSettings {
        ingest,
        stats: StatsSettings {
            window,
            top: args.top,
            exclude: args.exclude.clone(),
            keep_counts: args.export_counts.is_some(),
        },
        multiplier: args.multiplier,
        endpoints: args.endpoints,
        algorithm,
        write_policy: args.write_policy.clone(),
        export_counts: args.export_counts.clone(),
        recommend,
        format: output_format(&args.output),
        output: args.output.output.clone(),
        colour: use_colour(&args.output),
        quiet: args.ingest.quiet,
    })
}
