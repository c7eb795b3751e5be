//! Columnar tables through polars: the per-(client, endpoint, window) counts of
//! `rlctl analyze --export-counts`, written as Parquet or CSV for notebooks and
//! warehouses. Polars stays off the parsing hot path; it only serializes results.

use std::path::Path;

use polars::prelude::*;

use crate::events::EventTable;
use crate::output::escape;
use crate::stats::CountRows;
use crate::units::Window;

/// Errors writing a table.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("{path}: unknown table format; use a .parquet or .csv file name")]
    UnknownExtension { path: String },
    #[error("{path}: {source}")]
    Polars { path: String, source: PolarsError },
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// The table file formats rlctl writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Parquet,
    Csv,
}

impl TableFormat {
    /// The format named by a path's extension.
    pub fn of(path: &Path) -> Result<Self, FrameError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("parquet" | "pq") => Ok(TableFormat::Parquet),
            Some("csv") => Ok(TableFormat::Csv),
            _ => Err(FrameError::UnknownExtension {
                path: path.display().to_string(),
            }),
        }
    }
}

/// The counts as a DataFrame: client, endpoint, window_start_ms, window_s, count.
/// For CSV, names a spreadsheet would run as formulas are neutralised and
/// control characters escaped (`escape::csv_cell`).
pub fn counts_frame(
    table: &EventTable,
    rows: &CountRows,
    window: Window,
    format: TableFormat,
) -> PolarsResult<DataFrame> {
    let text = |name: &str| match format {
        TableFormat::Csv => escape::csv_cell(name).into_owned(),
        TableFormat::Parquet => name.to_string(),
    };
    let client: Vec<String> = rows
        .client
        .iter()
        .map(|&c| text(table.clients.name(c)))
        .collect();
    let endpoint: Vec<String> = rows
        .endpoint
        .iter()
        .map(|&e| text(table.endpoints.name(e)))
        .collect();
    let height = client.len();
    DataFrame::new(
        height,
        vec![
            Column::new("client".into(), client),
            Column::new("endpoint".into(), endpoint),
            Column::new("window_start_ms".into(), rows.window_start.clone()),
            Column::new("window_s".into(), vec![window.secs(); height]),
            Column::new("count".into(), rows.count.clone()),
        ],
    )
}

/// Writes `frame` to `path` in the format its extension names (through a temporary file).
pub fn write_frame(frame: &mut DataFrame, path: &Path) -> Result<(), FrameError> {
    let format = TableFormat::of(path)?;
    let name = path.display().to_string();
    let mut bytes = Vec::new();
    match format {
        TableFormat::Parquet => ParquetWriter::new(&mut bytes).finish(frame).map(|_| ()),
        TableFormat::Csv => CsvWriter::new(&mut bytes).finish(frame),
    }
    .map_err(|source| FrameError::Polars {
        path: name.clone(),
        source,
    })?;
    crate::output::write_atomic(path, &bytes)
        .map_err(|source| FrameError::Io { path: name, source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Event;
    use crate::stats::{StatsSettings, analyze};

    #[test]
    fn counts_round_trip_through_parquet_and_csv() {
        let mut t = EventTable::default();
        let c = t.clients.intern("=evil");
        let e = t.endpoints.intern("GET /x");
        for ts in [0, 1, 60_000] {
            t.push(Event {
                ts,
                client: c,
                endpoint: e,
                status: 200,
                ..Event::default()
            });
        }
        let window: Window = "1m".parse().unwrap();
        let a = analyze(
            &t,
            &StatsSettings {
                window,
                top: 1,
                exclude: vec![],
                keep_counts: true,
            },
        );
        let rows = a.counts.as_ref().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let parquet = dir.path().join("c.parquet");
        let mut frame = counts_frame(&t, rows, window, TableFormat::Parquet).unwrap();
        write_frame(&mut frame, &parquet).unwrap();
        let back = ParquetReader::new(std::fs::File::open(&parquet).unwrap())
            .finish()
            .unwrap();
        assert_eq!(back.height(), 2);
        assert_eq!(
            back.column("count")
                .unwrap()
                .u64()
                .unwrap()
                .into_no_null_iter()
                .collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert_eq!(
            back.column("client").unwrap().str().unwrap().get(0),
            Some("=evil")
        );
        let csv = dir.path().join("c.csv");
        let mut frame = counts_frame(&t, rows, window, TableFormat::Csv).unwrap();
        write_frame(&mut frame, &csv).unwrap();
        let text = std::fs::read_to_string(&csv).unwrap();
        assert_eq!(
            text,
            "client,endpoint,window_start_ms,window_s,count\n'=evil,GET /x,0,60,2\n'=evil,GET /x,60000,60,1\n"
        );
        assert!(write_frame(&mut frame, &dir.path().join("c.txt")).is_err());
    }
}
