//! `rlctl convert`: read access logs with the same parsing, keys and endpoint
//! normalisation as `rlctl analyze` (with `--routes`, its templates), and write the events as one Parquet (or
//! CSV) table, to load into a data lake or replay with `simulate --events`.
//! The columns are those of [`crate::frames::events`].

use anyhow::Context;

use crate::Outcome;
use crate::analysis::notes::notes;
use crate::cli::ConvertArgs;
use crate::discover;
use crate::frames::{self, events};
use crate::ingest;
use crate::options;
use crate::text::counted;
use crate::text::escape;

/// Runs `rlctl convert`.
pub fn run(args: ConvertArgs) -> anyhow::Result<Outcome> {
    let settings = options::convert_settings(&args)?;
    let mut ingested = ingest::ingest(&settings.ingest)?;
    // An empty table written with success would hide a wrong --log-format.
    anyhow::ensure!(!ingested.table.is_empty(), ingested.report.nothing_parsed());
    if let Some(templates) = &settings.routes {
        discover::apply_routes(&mut ingested.table, templates, &settings.ingest.routes);
    }
    if !settings.quiet {
        for line in notes(&ingested.report, None) {
            eprintln!("{line}");
        }
    }
    let mut frame = events::events_frame(&ingested.table, settings.format)
        .context("cannot build the event table")?;
    frames::write_frame(&mut frame, &settings.output)?;
    if !settings.quiet {
        let bytes = std::fs::metadata(&settings.output).map_or(0, |m| m.len());
        eprintln!(
            "rlctl convert: {} from {} ({}) written to {} ({bytes} bytes)",
            counted(ingested.table.len(), "event"),
            counted(ingested.table.clients.len(), "client"),
            counted(ingested.table.endpoints.len(), "endpoint"),
            escape::terminal(&settings.output.display().to_string()),
        );
    }
    Ok(Outcome::Success)
}
