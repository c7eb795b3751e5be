//! `--decisions FILE`: one CSV row per request and scenario, so a user can diff
//! rlctl against their real limiter. Written through a temporary file and a
//! rename; names a spreadsheet would run as formulas are neutralised and
//! control characters escaped (`escape::csv_cell`).

use std::io::Write;
use std::path::Path;

use crate::events::EventTable;
use crate::scenario::ScenarioResult;
use crate::text::atomic::AtomicFile;
use crate::text::escape;
use crate::text::time::format_rfc3339;

/// Writes the decisions of every scenario.
pub fn write(
    path: &Path,
    table: &EventTable,
    ts: &[i64],
    results: &[ScenarioResult],
) -> std::io::Result<()> {
    let file = AtomicFile::create(path)?;
    let mut csv = csv::Writer::from_writer(file);
    let io = |e: csv::Error| std::io::Error::other(e.to_string());
    csv.write_record([
        "timestamp_ms",
        "time",
        "client",
        "endpoint",
        "algorithm",
        "allowed",
    ])
    .map_err(io)?;
    for result in results {
        for (i, &allowed) in result.allowed.iter().enumerate() {
            csv.write_record([
                ts[i].to_string().as_str(),
                &format_rfc3339(ts[i]),
                &escape::csv_cell(table.clients.name(table.client[i])),
                &escape::csv_cell(table.endpoints.name(table.endpoint[i])),
                &result.scenario,
                if allowed { "true" } else { "false" },
            ])
            .map_err(io)?;
        }
    }
    let mut file = csv
        .into_inner()
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    file.flush()?;
    file.commit()
}
