//! The event table as a file: what `rlctl convert` writes and what `rlctl
//! simulate --events` reads back (also the sample `rlctl sql --sample-keys`
//! selects, which has the same columns).
//!
//! Columns: `ts_ms` (Int64, ms since the epoch; engines turn it into a timestamp
//! with e.g. `timestamp_millis(ts_ms)`: polars' Datetime needs a feature rlctl
//! does not build), `client` (the client key of `--key`), `endpoint` (method + normalised path, or the `--route` name),
//! `method`, `path` (without its query string: what policy routes match),
//! `status` (Int32; 0 where the log had none) and `protocol` (`HTTP/1.1`,
//! `HTTP/1.0`...; empty where the log had none). This module owns that layout; it
//! neither parses logs nor decides anything.

use std::path::Path;

use polars::prelude::*;

use super::{FrameError, TableFormat, read_frame, text_column, u64_column};
use crate::events::{Event, EventTable, Logged, Protocol};
use crate::ingest::endpoint::split_replayed_path;
use crate::text::escape;

/// The columns of an event table, in the order written.
pub const EVENT_COLUMNS: [&str; 7] = [
    "ts_ms", "client", "endpoint", "method", "path", "status", "protocol",
];

/// The events of `table` as a DataFrame (for CSV, names a spreadsheet would run
/// as formulas are neutralised, as in every CSV rlctl writes).
pub fn events_frame(table: &EventTable, format: TableFormat) -> PolarsResult<DataFrame> {
    let text = |name: &str| match format {
        TableFormat::Csv => escape::csv_cell(name).into_owned(),
        TableFormat::Parquet => name.to_string(),
    };
    // Each name written once per id, then cloned per row.
    let column = |names: Vec<&str>, ids: &[u32]| -> Vec<String> {
        let cached: Vec<String> = names.into_iter().map(text).collect();
        ids.iter().map(|&i| cached[i as usize].clone()).collect()
    };
    let status: Vec<i32> = table.status.iter().map(|&s| i32::from(s)).collect();
    let paths: Vec<u32> = (0..table.len()).map(|i| table.path_at(i)).collect();
    // Paths without the query a replay may keep with them (what routes match).
    let paths_only = table.paths.names().map(|kept| split_replayed_path(kept).0);
    DataFrame::new(
        table.len(),
        vec![
            Column::new("ts_ms".into(), table.ts.clone()),
            Column::new(
                "client".into(),
                column(table.clients.names().collect(), &table.client),
            ),
            Column::new(
                "endpoint".into(),
                column(table.endpoints.names().collect(), &table.endpoint),
            ),
            Column::new(
                "method".into(),
                column(table.methods.names().collect(), &table.method),
            ),
            Column::new("path".into(), column(paths_only.collect(), &paths)),
            Column::new("status".into(), status),
            Column::new(
                "protocol".into(),
                (table.protocol.iter())
                    .map(|p| p.version())
                    .collect::<Vec<&str>>(),
            ),
        ],
    )
}

/// An event table read back, with the clients a key sample took with certainty.
#[derive(Debug, Clone)]
pub struct EventsFile {
    pub table: EventTable,
    /// Per client id: taken whatever its hash (`certain` = 1 in a sample of
    /// `rlctl sql --sample-keys`); all false without that column.
    pub certain: Vec<bool>,
}

/// Reads an event table written by `rlctl convert` (or selected by `rlctl sql
/// --sample-keys`) into a time-ordered [`EventTable`]. `ts_ms`, `client` and
/// `endpoint` are required; `method`, `path`, `status`, `protocol` and
/// `certain` may be absent (empty, empty, 0, unknown, 0). Rows without a time or client are refused,
/// naming the row.
pub fn read_events(path: &Path) -> Result<EventsFile, FrameError> {
    let frame = read_frame(path)?;
    let name = path.display().to_string();
    let required = |column: &str| {
        if frame.column(column).is_err() {
            return Err(FrameError::Shape {
                path: name.clone(),
                message: format!(
                    "no `{column}` column (an event table has {})",
                    EVENT_COLUMNS.join(", ")
                ),
            });
        }
        Ok(())
    };
    for column in ["ts_ms", "client", "endpoint"] {
        required(column)?;
    }
    let ts = super::i64_column(&frame, "ts_ms", path)?;
    let clients = text_column(&frame, "client", path)?;
    let endpoints = text_column(&frame, "endpoint", path)?;
    let optional_text = |column: &str| -> Result<Vec<Option<String>>, FrameError> {
        if frame.column(column).is_ok() {
            text_column(&frame, column, path)
        } else {
            Ok(vec![None; frame.height()])
        }
    };
    let methods = optional_text("method")?;
    let paths = optional_text("path")?;
    let protocols = optional_text("protocol")?;
    let status = if frame.column("status").is_ok() {
        u64_column(&frame, "status", path)?
    } else {
        vec![Some(0); frame.height()]
    };
    let certain_rows = if frame.column("certain").is_ok() {
        u64_column(&frame, "certain", path)?
    } else {
        vec![Some(0); frame.height()]
    };
    if frame.height() == 0 {
        return Err(FrameError::Shape {
            path: name,
            message: "the event table has no rows: no requests to replay".into(),
        });
    }
    let mut table = EventTable::default();
    let mut certain = Vec::new();
    for row in 0..frame.height() {
        let (Some(t), Some(client)) = (ts[row], clients[row].as_deref()) else {
            return Err(FrameError::Shape {
                path: name,
                message: format!("row {}: no ts_ms or no client", row + 1),
            });
        };
        if !crate::units::in_range(t) {
            return Err(FrameError::Shape {
                path: name,
                message: format!(
                    "row {}: ts_ms {t} is outside the years 1 to 9999 that rlctl handles \
                     (milliseconds since 1970-01-01T00:00:00Z)",
                    row + 1
                ),
            });
        }
        let event = Event {
            ts: t,
            client: table.clients.intern(client),
            endpoint: table
                .endpoints
                .intern(endpoints[row].as_deref().unwrap_or_default()),
            path: table
                .paths
                .intern(paths[row].as_deref().unwrap_or_default()),
            method: table
                .methods
                .intern(methods[row].as_deref().unwrap_or_default()),
            status: status[row].map_or(0, |s| u16::try_from(s).unwrap_or(0)),
            protocol: Protocol::from_events_file(
                protocols[row].as_deref().unwrap_or_default().as_bytes(),
            ),
            ..Event::default()
        };
        let event = Event {
            logged: logged_from_status(event.status),
            ..event
        };
        certain.resize(table.clients.len(), false);
        certain[event.client as usize] |= certain_rows[row].is_some_and(|c| c > 0);
        table.push(event);
    }
    table.sort_by_time();
    Ok(EventsFile { table, certain })
}

/// The limiter decision a status shows, as ingestion reads it from a log
/// without `$limit_req_status`: 429/503 rejected, another status passed, none unknown.
fn logged_from_status(status: u16) -> Logged {
    match status {
        0 => Logged::Unknown,
        429 | 503 => Logged::Rejected,
        _ => Logged::Passed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::write_frame;

    fn table() -> EventTable {
        let mut t = EventTable::default();
        let rows = [
            (1_500, "10.0.0.1", "GET /a/:id", "GET", "/a/1", 200),
            (2_000, "=evil", "POST /b", "POST", "/b", 429),
            (2_000, "10.0.0.1", "GET /a/:id", "GET", "/a/2", 503),
        ];
        for (i, (ts, client, endpoint, method, path, status)) in rows.into_iter().enumerate() {
            let event = Event {
                protocol: Protocol::ALL[i % Protocol::ALL.len()],
                ts,
                client: t.clients.intern(client),
                endpoint: t.endpoints.intern(endpoint),
                method: t.methods.intern(method),
                path: t.paths.intern(path),
                status,
                ..Event::default()
            };
            t.push(event);
        }
        t
    }

    #[test]
    fn events_round_trip_through_parquet() {
        let t = table();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("e.parquet");
        let mut frame = events_frame(&t, TableFormat::Parquet).unwrap();
        assert_eq!(
            frame
                .get_column_names()
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>(),
            EVENT_COLUMNS.to_vec(),
            "column order is the contract"
        );
        write_frame(&mut frame, &file).unwrap();
        let back = read_events(&file).unwrap().table;
        assert_eq!(back.ts, t.ts);
        for i in 0..t.len() {
            let (a, b) = (t.get(i), back.get(i));
            assert_eq!(t.clients.name(a.client), back.clients.name(b.client));
            assert_eq!(
                t.endpoints.name(a.endpoint),
                back.endpoints.name(b.endpoint)
            );
            assert_eq!(t.paths.name(a.path), back.paths.name(b.path));
            assert_eq!(t.methods.name(a.method), back.methods.name(b.method));
            assert_eq!(a.status, b.status);
            assert_eq!(a.protocol, b.protocol);
        }
    }

    #[test]
    fn a_query_kept_for_a_replay_is_not_written() {
        let mut t = table();
        let path = t.paths.intern("/a/1?q=x y");
        t.push(Event {
            ts: 2_500,
            path,
            ..t.get(0)
        });
        let frame = events_frame(&t, TableFormat::Parquet).unwrap();
        let paths: Vec<&str> = (frame.column("path").unwrap().str().unwrap().iter())
            .map(Option::unwrap)
            .collect();
        assert_eq!(paths, ["/a/1", "/b", "/a/2", "/a/1"]);
    }

    #[test]
    fn csv_events_neutralise_formulas_and_read_back() {
        let t = table();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("e.csv");
        let mut frame = events_frame(&t, TableFormat::Csv).unwrap();
        write_frame(&mut frame, &file).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.starts_with("ts_ms,client,endpoint,method,path,status,protocol\n"));
        assert!(
            text.contains("'=evil") && text.contains(",HTTP/0.9\n"),
            "{text}"
        );
        let back = read_events(&file).unwrap().table;
        assert_eq!(back.len(), 3);
        assert_eq!(back.status, vec![200, 429, 503]);
        assert_eq!(back.protocol, &Protocol::ALL[..3]);
    }

    #[test]
    fn certain_clients_of_a_sample_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.csv");
        std::fs::write(
            &file,
            "ts_ms,client,endpoint,certain\n5,b,GET /,0\n1,a,GET /,1\n2,b,GET /,0\n",
        )
        .unwrap();
        let read = read_events(&file).unwrap();
        let a = read.table.clients.get("a").unwrap() as usize;
        let b = read.table.clients.get("b").unwrap() as usize;
        assert!(read.certain[a] && !read.certain[b]);
        assert_eq!(read.table.ts, vec![1, 2, 5]);
    }

    #[test]
    fn times_outside_the_years_rlctl_handles_are_refused_by_row() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("far.csv");
        for (ts, ok) in [
            (crate::units::EARLIEST_MS, true),
            (crate::units::LATEST_MS, true),
            (crate::units::EARLIEST_MS - 1, false),
            (i64::MIN, false),
            (i64::MAX, false),
        ] {
            std::fs::write(&file, format!("ts_ms,client,endpoint\n1,a,e\n{ts},a,e\n")).unwrap();
            match read_events(&file) {
                Ok(events) => assert!(ok && events.table.len() == 2, "{ts}"),
                Err(e) => {
                    assert!(!ok, "{ts}: {e}");
                    let message = e.to_string();
                    assert!(
                        message.contains("row 2: ts_ms") && message.contains("years 1 to 9999")
                    );
                }
            }
        }
    }

    #[test]
    fn unreadable_and_empty_tables_say_what_is_wrong_without_polars_advice() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.csv");
        for (text, says) in [
            ("ts_ms,client,endpoint\n", "the event table has no rows"),
            (
                "ts_ms,client,endpoint\n99999999999999999999,a,e\n",
                "could not parse `99999999999999999999`",
            ),
            (
                "ts_ms,client,endpoint\n1,a,e,x\n",
                "line 2: 4 values where the header names 3;",
            ),
            // Lines counted as a text editor does: CRLF, a blank line, and
            // a row with fewer values (which polars fills) passed over.
            (
                "ts_ms,client,endpoint\r\n1,a,e\r\n\r\n2,a\r\n3,a,e,x\r\n",
                "line 5: 4 values where the header names 3;",
            ),
            // A quote that never closes in the last column: as many values.
            (
                "ts_ms,client,endpoint\n1,a,\"e\n2,a,e\n",
                "line 2: 3 values where the header names 3, as a quote opened there never closes;",
            ),
        ] {
            std::fs::write(&file, text).unwrap();
            let message = read_events(&file).err().unwrap().to_string();
            assert!(message.contains(says), "{message}");
            assert!(!message.contains('\n') && !message.contains("infer_schema_length"));
        }
    }

    #[test]
    fn a_table_without_the_required_columns_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("x.csv");
        std::fs::write(&file, "ts_ms,who\n1,a\n").unwrap();
        let err = read_events(&file).unwrap_err().to_string();
        assert!(err.contains("no `client` column"), "{err}");
    }
}
