//! Columnar tables through polars: the per-(client, endpoint, window) counts of
//! `rlctl analyze --export-counts`, the event table of `rlctl convert` /
//! `simulate --events` ([`events`]), and the results of the queries `rlctl sql`
//! prints ([`sql_result`]), as Parquet or CSV for notebooks, warehouses and
//! engines. Polars stays off the parsing hot path; it only moves tables.

pub mod events;
pub mod sql_result;

use std::path::Path;

use polars::prelude::*;

use crate::events::EventTable;
use crate::stats::CountRows;
use crate::text::escape;
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
    #[error("{path}: {message}")]
    Shape { path: String, message: String },
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
    crate::text::atomic::write_atomic(path, &bytes)
        .map_err(|source| FrameError::Io { path: name, source })
}

/// Reads a Parquet or CSV table (by extension). A directory is read as the
/// part files inside it (`part-*.parquet`, `*.csv`, as Spark and Hive write a
/// table), in name order, stacked.
pub fn read_frame(path: &Path) -> Result<DataFrame, FrameError> {
    let name = path.display().to_string();
    let polars = |source| FrameError::Polars {
        path: name.clone(),
        source,
    };
    if path.is_dir() {
        let mut parts: Vec<std::path::PathBuf> = std::fs::read_dir(path)
            .map_err(|source| FrameError::Io {
                path: name.clone(),
                source,
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                let file = p.file_name().and_then(|f| f.to_str()).unwrap_or("");
                !file.starts_with(['.', '_']) && TableFormat::of(p).is_ok()
            })
            .collect();
        parts.sort();
        let mut frames = parts.iter().map(|p| read_frame(p));
        let Some(first) = frames.next() else {
            return Err(FrameError::Shape {
                path: name,
                message: "a directory without .parquet or .csv part files".into(),
            });
        };
        let mut frame = first?;
        for next in frames {
            frame.vstack_mut(&next?).map_err(polars)?;
        }
        return Ok(frame);
    }
    let file = std::fs::File::open(path).map_err(|source| FrameError::Io {
        path: name.clone(),
        source,
    })?;
    match TableFormat::of(path)? {
        TableFormat::Parquet => ParquetReader::new(file).finish().map_err(polars),
        TableFormat::Csv => CsvReadOptions::default()
            .with_has_header(true)
            .with_infer_schema_length(None)
            .into_reader_with_file_handle(file)
            .finish()
            .map_err(|source| FrameError::Shape {
                path: name.clone(),
                message: csv_error(path, &source),
            }),
    }
}

/// What is wrong in a CSV file polars could not read: the first row whose
/// values the header does not match, by its line, where one is found; else
/// what polars found, without the advice it writes for its Python API
/// (options rlctl does not have).
fn csv_error(path: &Path, source: &PolarsError) -> String {
    let text = source.to_string();
    // Its first paragraph (a value it quotes may hold a line break).
    let polars_found = text.split("\n\n").next().unwrap_or_default().trim();
    // Polars may quote the rest of the file: the first 300 characters.
    let polars_found = match polars_found.char_indices().nth(300) {
        Some((end, _)) => format!("{} …", &polars_found[..end]),
        None => polars_found.to_string(),
    };
    let found = first_uneven_row(path).unwrap_or(polars_found);
    format!(
        "not a table rlctl can read: {found}; a CSV table has a header row naming its columns \
         and one value per column in every row, quoted where it holds a comma or a quote"
    )
}

/// The first row of a CSV file with more values than its header, or the
/// last row when a quote opened there never closes (it runs on to the end
/// of the file), as `line N: ...`. Polars fills a row with fewer values, so
/// that alone does not make it fail. The line is counted from the bytes, as the
/// csv crate miscounts CRLF and blank lines.
fn first_uneven_row(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(bytes.as_slice());
    let expected = reader.byte_headers().ok()?.len();
    // The csv crate may place a row at the line break before it.
    let line_at = |byte: u64| {
        let at = usize::try_from(byte).map_or(bytes.len(), |b| b.min(bytes.len()));
        let start = bytes[at..]
            .iter()
            .position(|&b| b != b'\r' && b != b'\n')
            .map_or(bytes.len(), |i| at + i);
        memchr::memchr_iter(b'\n', &bytes[..start]).count() + 1
    };
    let mut record = csv::ByteRecord::new();
    let mut last = None;
    while reader.read_byte_record(&mut record).ok()? {
        let (at, len) = (record.position()?.byte(), record.len());
        if len > expected {
            return Some(format!(
                "line {}: {len} values where the header names {expected}",
                line_at(at)
            ));
        }
        last = Some((at, len));
    }
    // A quote that never closes runs to the end: the last row holds it.
    let (at, len) = last?;
    let quotes = memchr::memchr_iter(b'"', &bytes[usize::try_from(at).ok()?..]).count();
    (quotes % 2 == 1).then(|| {
        format!(
            "line {}: {len} values where the header names {expected}, as a quote opened there \
             never closes",
            line_at(at)
        )
    })
}

fn column_as(
    frame: &DataFrame,
    column: &str,
    to: &DataType,
    path: &Path,
) -> Result<Column, FrameError> {
    let shape = |message: String| FrameError::Shape {
        path: path.display().to_string(),
        message,
    };
    let found = frame
        .column(column)
        .map_err(|_| shape(format!("no `{column}` column")))?;
    found.cast(to).map_err(|e| {
        shape(format!(
            "column `{column}` ({}) is not {to}: {e}",
            found.dtype()
        ))
    })
}

/// A whole-number column as i64 values (None where null).
pub fn i64_column(
    frame: &DataFrame,
    column: &str,
    path: &Path,
) -> Result<Vec<Option<i64>>, FrameError> {
    let c = column_as(frame, column, &DataType::Int64, path)?;
    Ok(c.i64().expect("cast to Int64").iter().collect())
}

/// A non-negative whole-number column as u64 values (None where null).
pub fn u64_column(
    frame: &DataFrame,
    column: &str,
    path: &Path,
) -> Result<Vec<Option<u64>>, FrameError> {
    let c = column_as(frame, column, &DataType::UInt64, path)?;
    Ok(c.u64().expect("cast to UInt64").iter().collect())
}

/// A text column (numbers are turned into their text; None where null).
pub fn text_column(
    frame: &DataFrame,
    column: &str,
    path: &Path,
) -> Result<Vec<Option<String>>, FrameError> {
    let c = column_as(frame, column, &DataType::String, path)?;
    Ok(c.str()
        .expect("cast to String")
        .iter()
        .map(|v| v.map(str::to_string))
        .collect())
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
