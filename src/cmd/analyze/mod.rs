//! `rlctl analyze`: read logs, measure per-client traffic, recommend a limit.
//!
//! The analysis itself is [`crate::analysis`]; [`run`] adds the command's notes
//! and outputs; [`from_sql`] builds the same run from the results of `rlctl sql`.

pub mod from_sql;

use anyhow::Context;

use crate::Outcome;
use crate::analysis::{self, notes::notes};
use crate::cli::AnalyzeArgs;
use crate::frames;
use crate::options;
use crate::output;
use crate::policy::routes;
use crate::render;

/// Runs `rlctl analyze`.
pub fn run(args: AnalyzeArgs) -> anyhow::Result<Outcome> {
    let mut settings = options::analyze_settings(&args)?;
    let run = match &args.from_sql_result {
        Some(dir) => from_sql::compute(dir, &mut settings)?,
        None => analysis::compute(&settings.analysis)?,
    };
    if !settings.quiet {
        for line in notes(&run.ingested.report, Some(&run.analysis)) {
            eprintln!("{line}");
        }
    }
    let doc = render::analysis::document(&run, &settings.analysis);
    let json = render::analysis::json(&run, &settings.analysis);
    let bytes = output::render(settings.format, &doc, &json, settings.colour)?;
    output::write_output(settings.output.as_deref(), &bytes).with_context(|| {
        format!(
            "cannot write the report to {}",
            settings
                .output
                .as_ref()
                .map_or("stdout".into(), |p| p.display().to_string())
        )
    })?;
    if let (Some(path), Some(set)) = (&settings.write_routes, &run.templates) {
        let text = analysis::routes_text(&run, set);
        crate::text::atomic::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write the routes to {}", path.display()))?;
    }
    if let Some(path) = &settings.write_policy {
        // The policy names the routes file the run wrote or read, if any.
        let routes_file = settings
            .write_routes
            .as_ref()
            .filter(|_| run.templates.is_some())
            .or(args.routes.routes.as_ref());
        let reference = routes_file.map(|r| routes::routes_reference(path, r));
        let text = analysis::policy_text(&run, &settings.analysis, reference.as_deref())
            .context("no traffic to base a policy on")?;
        crate::text::atomic::write_atomic(path, text.as_bytes())
            .with_context(|| format!("cannot write the policy to {}", path.display()))?;
    }
    if let (Some(path), Some(rows)) = (&settings.export_counts, &run.analysis.counts) {
        let format = frames::TableFormat::of(path)?;
        let mut frame = frames::counts_frame(
            &run.ingested.table,
            rows,
            settings.analysis.stats.window,
            format,
        )?;
        frames::write_frame(&mut frame, path)?;
    }
    Ok(Outcome::Success)
}
