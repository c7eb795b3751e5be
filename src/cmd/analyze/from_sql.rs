//! `rlctl analyze --from-sql-result DIR|FILE`: the analysis built from the tables
//! the queries of `rlctl sql` returned (or the one table of `--combined`), with the same figures, recommendation and
//! report as from the logs ([`crate::stats::histograms`] says what is exact).
//!
//! The window and the endpoints with detail were fixed when the queries ran:
//! the window is taken from the result (with a note when `--window` differs),
//! and at most as many endpoints are reported as the result details.

use std::path::Path;

use anyhow::Context;

use crate::analysis::{AnalyzeRun, recommendations};
use crate::events::{EventTable, Resolution};
use crate::frames::sql_result::read_sql_result;
use crate::ingest::{IngestReport, Ingested};
use crate::options::AnalyzeSettings;
use crate::recommend::BaselineChoice;
use crate::stats::histograms::from_histograms;
use crate::text::escape;

/// Reads the result tables in `dir` (or the combined file) and analyzes them; `settings` takes the
/// result's window and endpoint count.
pub fn compute(dir: &Path, settings: &mut AnalyzeSettings) -> anyhow::Result<AnalyzeRun> {
    let input = read_sql_result(dir)?;
    let name = dir.display().to_string();
    if input.summary.requests == 0 {
        anyhow::bail!(
            "{name}: the SQL result counts no requests; check the table, the columns and --filter given to rlctl sql"
        );
    }
    let built = from_histograms(&input)
        .with_context(|| format!("{name}: the result tables do not fit together"))?;
    if settings.analysis.recommend.baseline != BaselineChoice::All && !settings.quiet {
        eprintln!(
            "rlctl: note: an SQL result holds no per-client windows, so the recommendation rests on every client-window (--baseline all), and client profiles need the events"
        );
    }
    settings.analysis.recommend.baseline = BaselineChoice::All;
    if !settings.quiet {
        // Found by review: a result counted per user wrote a policy keyed `ip`.
        eprintln!(
            "rlctl: note: an SQL result does not say which client key its client column holds; the report and --write-policy name --key's, {}: give the --key the events were read with (rlctl convert --key)",
            escape::terminal(&settings.analysis.ingest.keys.primary.text)
        );
    }
    let window = built.analysis.window;
    if window != settings.analysis.stats.window && !settings.quiet {
        eprintln!(
            "rlctl: note: the SQL result counts {window} windows (set by rlctl sql --window); --window {} does not apply",
            settings.analysis.stats.window
        );
    }
    settings.analysis.stats.window = window;
    if built.detailed_endpoints < settings.analysis.endpoints
        && built.analysis.endpoints.len() > built.detailed_endpoints
    {
        if !settings.quiet {
            eprintln!(
                "rlctl: note: the SQL result details {} endpoints; rlctl sql --endpoints {} gives more",
                built.detailed_endpoints, settings.analysis.endpoints
            );
        }
        settings.analysis.endpoints = built.detailed_endpoints;
    }
    let requests = input.summary.requests;
    let resolution = match input.summary.subsecond > 0 {
        true => Resolution::Millisecond,
        false => Resolution::Second,
    };
    let report = IngestReport::of_rows(
        escape::terminal(&name).into_owned(),
        "sql result",
        requests,
        resolution,
    );
    // Only the client names: the events stayed in the engine.
    let table = EventTable {
        clients: built.clients,
        ..EventTable::default()
    };
    let (recommendation, endpoint_recommendations) =
        recommendations(&table, &built.analysis, &settings.analysis);
    Ok(AnalyzeRun {
        ingested: Ingested { table, report },
        analysis: built.analysis,
        recommendation,
        endpoint_recommendations,
        span: Some((input.summary.first_ts_ms, input.summary.last_ts_ms)),
        templates: None,
        template_uses: Vec::new(),
        profiles: Vec::new(),
    })
}
