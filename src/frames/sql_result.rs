//! Reading the results of the queries `rlctl sql` prints: a directory holding one
//! table per query, each saved as `NAME.parquet` or `NAME.csv`, or as a
//! directory of part files (`NAME/`, `NAME.parquet/`: what Spark writes); or the
//! one table of `rlctl sql --combined`, whose `result` column names each row's
//! table (a file, or a directory of part files).
//!
//! The names and columns are the contract between `rlctl sql` and `rlctl
//! analyze --from-sql-result` ([`RESULT_TABLES`]); this module only turns the
//! tables into [`HistogramInput`] rows and never computes a figure.

use std::path::{Path, PathBuf};

use polars::prelude::{BooleanChunked, DataFrame};

use super::{FrameError, i64_column, read_frame, text_column, u64_column};
use crate::stats::histograms::{
    ClientRow, EndpointClientRow, EndpointRow, HistogramInput, HistogramRow, Metric, SummaryRow,
};

/// The result tables, in the order `rlctl sql` prints their queries, with their columns.
pub const RESULT_TABLES: [(&str, &[&str]); 5] = [
    (
        "summary",
        &[
            "requests",
            "clients",
            "endpoints",
            "first_ts_ms",
            "last_ts_ms",
            "window_s",
            "subsecond",
            "detail_endpoints",
        ],
    ),
    ("histograms", &["endpoint", "metric", "requests", "samples"]),
    (
        "clients",
        &[
            "client",
            "requests",
            "peak_window",
            "peak_second",
            "first_ts_ms",
            "status_429",
            "status_503",
        ],
    ),
    ("endpoints", &["endpoint", "requests", "clients"]),
    (
        "endpoint_clients",
        &[
            "endpoint",
            "client",
            "requests",
            "peak_window",
            "peak_second",
        ],
    ),
];

/// The columns of [`RESULT_TABLES`] that hold text (the others hold integers).
pub const TEXT_COLUMNS: [&str; 3] = ["endpoint", "metric", "client"];

/// Where the table `name` is in `dir`: `name.parquet`, `name.csv`, or a
/// directory `name.parquet/`, `name.csv/` or `name/` of part files.
fn locate(dir: &Path, name: &str) -> Result<PathBuf, FrameError> {
    let candidates = [
        dir.join(format!("{name}.parquet")),
        dir.join(format!("{name}.csv")),
        dir.join(name),
    ];
    candidates
        .into_iter()
        .find(|p| p.exists())
        .ok_or_else(|| FrameError::Shape {
            path: dir.display().to_string(),
            message: format!(
                "no `{name}` table: save the result of the query marked `{name}` as {name}.parquet or {name}.csv here (see `rlctl sql --help`)"
            ),
        })
}

struct Table {
    frame: DataFrame,
    path: PathBuf,
}

impl Table {
    fn u64s(&self, column: &str) -> Result<Vec<u64>, FrameError> {
        let values = u64_column(&self.frame, column, &self.path)?;
        self.no_nulls(column, values)
    }

    fn i64s(&self, column: &str) -> Result<Vec<i64>, FrameError> {
        let values = i64_column(&self.frame, column, &self.path)?;
        self.no_nulls(column, values)
    }

    fn texts(&self, column: &str) -> Result<Vec<Option<String>>, FrameError> {
        text_column(&self.frame, column, &self.path)
    }

    fn required_texts(&self, column: &str) -> Result<Vec<String>, FrameError> {
        let values = self.texts(column)?;
        self.no_nulls(column, values)
    }

    fn no_nulls<T>(&self, column: &str, values: Vec<Option<T>>) -> Result<Vec<T>, FrameError> {
        values
            .into_iter()
            .enumerate()
            .map(|(row, v)| {
                v.ok_or_else(|| FrameError::Shape {
                    path: self.path.display().to_string(),
                    message: format!("row {}: `{column}` is empty", row + 1),
                })
            })
            .collect()
    }
}

fn open(dir: &Path, name: &str) -> Result<Table, FrameError> {
    let path = locate(dir, name)?;
    Ok(Table {
        frame: read_frame(&path)?,
        path,
    })
}

/// Reads the five result tables: a directory of them, or one combined table.
pub fn read_sql_result(path: &Path) -> Result<HistogramInput, FrameError> {
    if path.is_file()
        || (path.is_dir() && locate(path, "summary").is_err() && read_frame(path).is_ok())
    {
        let frame = read_frame(path)?;
        let results = text_column(&frame, "result", path)?;
        return read_tables(|name| {
            let mask: BooleanChunked = results.iter().map(|r| r.as_deref() == Some(name)).collect();
            let part = frame.filter(&mask).map_err(|source| FrameError::Polars {
                path: path.display().to_string(),
                source,
            })?;
            Ok(Table {
                frame: part,
                path: path.to_path_buf(),
            })
        });
    }
    if !path.is_dir() {
        return Err(FrameError::Shape {
            path: path.display().to_string(),
            message: "no such file or directory: --from-sql-result takes the directory the query results were saved in, or the file of rlctl sql --combined".into(),
        });
    }
    read_tables(|name| open(path, name))
}

/// The rows of the five tables, each opened by `open`.
fn read_tables(
    open: impl Fn(&str) -> Result<Table, FrameError>,
) -> Result<HistogramInput, FrameError> {
    let summary = open("summary")?;
    if summary.frame.height() != 1 {
        return Err(FrameError::Shape {
            path: summary.path.display().to_string(),
            message: format!("expected one row, found {}", summary.frame.height()),
        });
    }
    let first = |column: &str| -> Result<u64, FrameError> { Ok(summary.u64s(column)?[0]) };
    let summary_row = SummaryRow {
        requests: first("requests")?,
        clients: first("clients")?,
        endpoints: first("endpoints")?,
        first_ts_ms: summary.i64s("first_ts_ms")?[0],
        last_ts_ms: summary.i64s("last_ts_ms")?[0],
        window_s: u32::try_from(first("window_s")?).unwrap_or(0),
        subsecond: first("subsecond")?,
        detail_endpoints: first("detail_endpoints")?,
    };

    let h = open("histograms")?;
    let metrics = h.required_texts("metric")?;
    let metric = |row: usize, text: &str| match text {
        "per_window" => Ok(Metric::PerWindow),
        "per_second" => Ok(Metric::PerSecond),
        other => Err(FrameError::Shape {
            path: h.path.display().to_string(),
            message: format!(
                "row {}: metric `{other}` (per_window or per_second)",
                row + 1
            ),
        }),
    };
    let histograms = h
        .texts("endpoint")?
        .into_iter()
        .zip(h.u64s("requests")?)
        .zip(h.u64s("samples")?)
        .enumerate()
        .map(|(row, ((endpoint, requests), samples))| {
            Ok(HistogramRow {
                endpoint: endpoint.filter(|e| !e.is_empty()),
                metric: metric(row, &metrics[row])?,
                requests,
                samples,
            })
        })
        .collect::<Result<Vec<_>, FrameError>>()?;

    let c = open("clients")?;
    let clients = client_rows(
        c.required_texts("client")?,
        c.u64s("requests")?,
        c.u64s("peak_window")?,
        c.u64s("peak_second")?,
        c.i64s("first_ts_ms")?,
        c.u64s("status_429")?,
        c.u64s("status_503")?,
    );

    let e = open("endpoints")?;
    let endpoints = e
        .required_texts("endpoint")?
        .into_iter()
        .zip(e.u64s("requests")?)
        .zip(e.u64s("clients")?)
        .map(|((endpoint, requests), clients)| EndpointRow {
            endpoint,
            requests,
            clients,
        })
        .collect();

    let p = open("endpoint_clients")?;
    let endpoint_clients = p
        .required_texts("endpoint")?
        .into_iter()
        .zip(p.required_texts("client")?)
        .zip(p.u64s("requests")?)
        .zip(p.u64s("peak_window")?)
        .zip(p.u64s("peak_second")?)
        .map(
            |((((endpoint, client), requests), peak_window), peak_second)| EndpointClientRow {
                endpoint,
                client,
                requests,
                peak_window,
                peak_second,
            },
        )
        .collect();

    Ok(HistogramInput {
        summary: summary_row,
        histograms,
        clients,
        endpoints,
        endpoint_clients,
    })
}

fn client_rows(
    client: Vec<String>,
    requests: Vec<u64>,
    peak_window: Vec<u64>,
    peak_second: Vec<u64>,
    first_ts_ms: Vec<i64>,
    status_429: Vec<u64>,
    status_503: Vec<u64>,
) -> Vec<ClientRow> {
    (0..client.len())
        .map(|i| ClientRow {
            client: client[i].clone(),
            requests: requests[i],
            peak_window: peak_window[i],
            peak_second: peak_second[i],
            first_ts_ms: first_ts_ms[i],
            status_429: status_429[i],
            status_503: status_503[i],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn csv_tables_and_spark_part_directories_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        write(
            d,
            "summary.csv",
            "requests,clients,endpoints,first_ts_ms,last_ts_ms,window_s,subsecond,detail_endpoints\n3,2,1,0,61000,60,0,20\n",
        );
        std::fs::create_dir(d.join("histograms")).unwrap();
        write(
            &d.join("histograms"),
            "part-00000.csv",
            "endpoint,metric,requests,samples\n,per_window,1,1\n",
        );
        write(
            &d.join("histograms"),
            "part-00001.csv",
            "endpoint,metric,requests,samples\nGET /a,per_second,1,3\n",
        );
        write(&d.join("histograms"), "_SUCCESS", "");
        write(
            d,
            "clients.csv",
            "client,requests,peak_window,peak_second,first_ts_ms,status_429,status_503\n10.0.0.1,2,2,1,0,1,0\n42,1,1,1,61000,0,0\n",
        );
        write(
            d,
            "endpoints.csv",
            "endpoint,requests,clients\nGET /a,3,2\n",
        );
        write(
            d,
            "endpoint_clients.csv",
            "endpoint,client,requests,peak_window,peak_second\nGET /a,42,1,1,1\n",
        );
        let input = read_sql_result(d).unwrap();
        assert_eq!(input.summary.requests, 3);
        assert_eq!(input.histograms.len(), 2);
        assert_eq!(input.histograms[0].endpoint, None);
        assert_eq!(input.histograms[1].metric, Metric::PerSecond);
        assert_eq!(input.clients[1].client, "42", "numeric keys stay text");
        assert_eq!(input.endpoint_clients[0].client, "42");
    }

    #[test]
    fn a_combined_table_is_split_by_its_result_column() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("all.csv");
        let header = "result,requests,clients,endpoints,first_ts_ms,last_ts_ms,window_s,subsecond,detail_endpoints,endpoint,metric,samples,client,peak_window,peak_second,status_429,status_503\n";
        let rows = [
            "summary,2,1,1,0,1000,60,0,20,,,,,,,,",
            "histograms,2,,,,,,,,,per_window,1,,,,,",
            "histograms,1,,,,,,,,GET /a,per_second,2,,,,,",
            "clients,2,,,0,,,,,,,,10.0.0.1,2,1,0,1",
            "endpoints,2,1,,,,,,,GET /a,,,,,,,",
            "endpoint_clients,2,,,,,,,,GET /a,,,10.0.0.1,2,1,,",
        ];
        std::fs::write(&file, format!("{header}{}\n", rows.join("\n"))).unwrap();
        let input = read_sql_result(&file).unwrap();
        assert_eq!(input.summary.requests, 2);
        assert_eq!(input.histograms.len(), 2);
        assert_eq!(input.histograms[1].endpoint.as_deref(), Some("GET /a"));
        assert_eq!(input.clients[0].status_503, 1);
        assert_eq!(input.endpoints.len(), 1);
        assert_eq!(input.endpoint_clients[0].peak_window, 2);
    }

    #[test]
    fn a_missing_table_says_what_to_save() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_sql_result(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no `summary` table"), "{err}");
        let err = read_sql_result(&dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("no such file or directory"), "{err}");
    }
}
