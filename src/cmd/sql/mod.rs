//! `rlctl sql`: print the queries that compute, inside the user's SQL engine
//! (Spark, Trino/Athena, ClickHouse, BigQuery, DuckDB), everything `rlctl
//! analyze` needs, as five small tables that `rlctl analyze --from-sql-result`
//! turns into the same report; or, with `--sample-keys`, one query selecting
//! the events of a hash sample of clients for `rlctl simulate --events`.
//!
//! The heavy counting runs in the engine; the definitions (quantiles,
//! recommendation) stay in rlctl. One file per dialect behind
//! [`dialect::SqlDialect`]; the queries are written once in [`query`].

pub mod bigquery;
pub mod clickhouse;
pub mod dialect;
pub mod duckdb;
pub mod endpoint;
pub mod query;
pub mod spark;
pub mod templates;
pub mod trino;

use anyhow::Context;
use serde::Serialize;

use crate::Outcome;
use crate::cli::{SqlArgs, SqlFormat};
use crate::options::{self, OptionsError};
use endpoint::Route;
use query::{Builder, Query, SAMPLE_BUCKETS, Source};

/// What `--format json` prints.
#[derive(Debug, Serialize)]
pub struct SqlJson<'a> {
    pub dialect: &'a str,
    pub window_s: u32,
    /// The key sample rate to pass to `simulate --key-sample-rate` (sample query only).
    pub key_sample_rate: Option<f64>,
    pub queries: Vec<QueryJson<'a>>,
}

/// One query in the JSON form.
#[derive(Debug, Serialize)]
pub struct QueryJson<'a> {
    pub name: &'a str,
    /// The file name `--from-sql-result DIR` looks for (or the sample's).
    pub file: String,
    pub sql: &'a str,
}

/// Checks the flags and builds the queries: (queries, sample rate if sampling).
pub fn queries(args: &SqlArgs) -> Result<(Vec<Query>, Option<f64>), OptionsError> {
    let usage = OptionsError::Usage;
    let settings = options::sql_settings(args)?;
    let window = args.window.window;
    let routes = settings
        .routes
        .into_iter()
        .map(|rule| Route {
            pattern: rule.pattern.as_str().to_string(),
            name: rule.name,
            host: rule.host.map(|h| h.host),
        })
        .collect();
    let source = Source {
        table: args.table.clone(),
        time: args.time.clone(),
        time_unit: args.time_unit,
        client: args.client.clone(),
        path: args.path.clone(),
        endpoint: args.endpoint.clone(),
        method: args.method.clone(),
        status: args.status.clone(),
        host: args.host.clone(),
        routes,
        templates: settings
            .templates
            .map(|set| set.templates().to_vec())
            .unwrap_or_default(),
        filter: args.filter.clone(),
    };
    let d = dialect::dialect(args.dialect);
    let builder = Builder {
        dialect: d.as_ref(),
        source: &source,
        window,
        detail_endpoints: args.endpoints,
    };
    match settings.sample_keys {
        None if args.combined => Ok((vec![builder.combined()], None)),
        None => Ok((builder.analysis(), None)),
        Some(rate) => {
            let text = args.sample_keys.as_deref().unwrap_or_default();
            let buckets = (rate * f64::from(SAMPLE_BUCKETS)).round();
            if buckets < 1.0 || (buckets / f64::from(SAMPLE_BUCKETS) - rate).abs() > 1e-12 {
                return Err(usage(format!(
                    "--sample-keys {text}: the rate must be a multiple of 0.01% (1%, 0.5%, 0.01%), above 0"
                )));
            }
            let buckets = buckets as u32;
            Ok((
                vec![builder.sample(buckets, args.sample_top)],
                Some(f64::from(buckets) / f64::from(SAMPLE_BUCKETS)),
            ))
        }
    }
}

fn file_of(q: &Query) -> String {
    format!("{}.parquet", q.name)
}

/// The queries as commented SQL.
pub fn sql_text(args: &SqlArgs, queries: &[Query], rate: Option<f64>) -> String {
    let d = dialect::dialect(args.dialect);
    let mut out = String::new();
    match rate {
        Some(rate) => {
            out.push_str(&format!(
                "-- rlctl sql: the events of a {}% sample of client keys ({}, bucket < {} of {SAMPLE_BUCKETS}), {} dialect,\n\
                 -- plus the {} clients with the highest peak window and peak second, all their events\n\
                 -- (certain = 1). Save the result as sample.parquet, then run\n\
                 --   rlctl simulate --events sample.parquet --key-sample-rate {rate} --policy policy.toml\n\
                 -- (the `client` column is the client key; --key names it as the policy does, ip by default)\n\n",
                rate * 100.0,
                d.hash_name(),
                (rate * f64::from(SAMPLE_BUCKETS)).round(),
                d.name(),
                args.sample_top,
            ));
        }
        None if args.combined => out.push_str(&format!(
            "-- rlctl sql: one query for {} over {}, window {}, detail for the top {} endpoints.\n\
             -- It returns the five result tables as one (the `result` column names each row's table).\n\
             -- Save its result as one Parquet or CSV file, then run\n\
             --   rlctl analyze --from-sql-result FILE\n\n",
            d.name(),
            args.table,
            args.window.window,
            args.endpoints
        )),
        None => out.push_str(&format!(
            "-- rlctl sql: {} queries for {} over {}, window {}, detail for the top {} endpoints.\n\
             -- Save the result of each query as DIR/NAME.parquet (or DIR/NAME.csv, or a directory\n\
             -- DIR/NAME/ of part files, as Spark's df.write.parquet writes), then run\n\
             --   rlctl analyze --from-sql-result DIR\n\n",
            queries.len(),
            d.name(),
            args.table,
            args.window.window,
            args.endpoints
        )),
    }
    for q in queries {
        out.push_str(&format!(
            "-- result: {} -> save as {}\n{};\n\n",
            q.name,
            file_of(q),
            q.sql
        ));
    }
    out
}

/// Runs `rlctl sql`.
pub fn run(args: SqlArgs) -> anyhow::Result<Outcome> {
    let (queries, rate) = queries(&args)?;
    let text = match args.format {
        SqlFormat::Sql => sql_text(&args, &queries, rate),
        SqlFormat::Json => {
            let window = args.window.window;
            let json = SqlJson {
                dialect: dialect::dialect(args.dialect).name(),
                window_s: window.secs(),
                key_sample_rate: rate,
                queries: queries
                    .iter()
                    .map(|q| QueryJson {
                        name: &q.name,
                        file: file_of(q),
                        sql: &q.sql,
                    })
                    .collect(),
            };
            serde_json::to_string_pretty(&json)? + "\n"
        }
    };
    crate::output::write_output(None, text.as_bytes()).context("cannot write the queries")?;
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests;
