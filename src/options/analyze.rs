//! Settings of `rlctl analyze`.

use std::path::PathBuf;

use super::{
    OptionsError, Sink, excluded_clients, ingest_settings, output_format, routes_settings,
    use_colour,
};
use crate::analysis::{AnalysisSettings, RecommendOptions};
use crate::cli::AnalyzeArgs;
use crate::ingest::KeptPaths;
use crate::output;
use crate::profile::ProfileColumns;
use crate::stats::StatsSettings;

/// Validated settings of `rlctl analyze`.
#[derive(Debug, Clone)]
pub struct AnalyzeSettings {
    /// What the analysis runs on.
    pub analysis: AnalysisSettings,
    pub write_policy: Option<PathBuf>,
    /// `--write-routes`: where the endpoint templates go.
    pub write_routes: Option<PathBuf>,
    pub export_counts: Option<PathBuf>,
    pub format: output::Format,
    pub output: Option<PathBuf>,
    pub colour: bool,
    pub quiet: bool,
}

/// Checks the flags of `rlctl analyze`.
pub fn analyze_settings(args: &AnalyzeArgs) -> Result<AnalyzeSettings, OptionsError> {
    if let Some(path) = &args.export_counts {
        crate::frames::TableFormat::of(path)
            .map_err(|e| OptionsError::Usage(format!("--export-counts {e}")))?;
    }
    // Only the report goes to stdout (`-o -`); the others write a file `-`.
    super::check_outputs(
        args.ingest.files.iter().chain(&args.from_sql_result),
        &[
            (
                "--output",
                Some(Sink::report(args.output.output.as_deref())),
            ),
            (
                "--write-policy",
                args.write_policy.as_deref().map(Sink::File),
            ),
            (
                "--write-routes",
                args.write_routes.as_deref().map(Sink::File),
            ),
            (
                "--export-counts",
                args.export_counts.as_deref().map(Sink::File),
            ),
        ],
    )?;
    let mut ingest = ingest_settings(&args.ingest)?;
    // Only a rule's wider scope reads paths: those of the endpoints a
    // --route rule named (see `analysis::rule_scope`).
    ingest.paths = match ingest.routes.is_empty() {
        true => KeptPaths::None,
        false => KeptPaths::Routed,
    };
    // Client profiles read the user agent and the user of each request.
    let profile_columns = ProfileColumns::request(&mut ingest.keys);
    let recommend = RecommendOptions {
        baseline: args
            .baseline
            .parse()
            .map_err(|e: String| OptionsError::Usage(format!("--baseline: {e}")))?,
        discover: args.discover.discover,
        routes: routes_settings(&args.routes)?,
        profile_columns,
    };
    let exclude = excluded_clients(&args.exclude, &ingest.keys.primary);
    Ok(AnalyzeSettings {
        analysis: AnalysisSettings {
            ingest,
            stats: StatsSettings {
                window: args.window.window,
                top: args.top.top,
                exclude,
                keep_counts: args.export_counts.is_some(),
            },
            multiplier: args.multiplier.multiplier,
            endpoints: args.endpoints,
            algorithm: args.algo,
            recommend,
        },
        write_policy: args.write_policy.clone(),
        write_routes: args.write_routes.clone(),
        export_counts: args.export_counts.clone(),
        format: output_format(&args.output),
        output: args.output.output.clone(),
        colour: use_colour(&args.output),
        quiet: args.ingest.quiet,
    })
}
