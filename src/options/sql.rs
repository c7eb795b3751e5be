//! Settings of `rlctl sql`: the checks on its flags that need more than one
//! flag (routes and templates apply to --path, not to an --endpoint column)
//! or a parse (routes, the routes file, the key sample's share). The queries themselves are built by the
//! command from these and the table's column names.

use super::{OptionsError, parse_share, routes_settings};
use crate::cli::SqlArgs;
use crate::discover::TemplateSet;
use crate::ingest::endpoint::RouteRule;

/// Validated settings of `rlctl sql` beyond the raw column names.
#[derive(Debug, Clone)]
pub struct SqlSettings {
    /// `--route REGEX=NAME`, in order.
    pub routes: Vec<RouteRule>,
    /// `--routes FILE`: the templates endpoints are named by.
    pub templates: Option<TemplateSet>,
    /// `--sample-keys`: the share of client keys to sample.
    pub sample_keys: Option<f64>,
}

/// Checks the flags of `rlctl sql`.
pub fn sql_settings(args: &SqlArgs) -> Result<SqlSettings, OptionsError> {
    let usage = OptionsError::Usage;
    let routes = args
        .route
        .iter()
        .map(|text| RouteRule::parse(text))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(host) = routes.iter().find_map(|r| r.host.as_ref())
        && args.host.is_none()
    {
        return Err(usage(format!(
            "--route `@{} ...`: give --host COL, the column holding the virtual host",
            host.host
        )));
    }
    if args.endpoint.is_some() && !routes.is_empty() {
        return Err(usage(
            "--route applies to --path; an --endpoint column is used as it is".into(),
        ));
    }
    let templates = routes_settings(&args.routes)?;
    if args.endpoint.is_some() && templates.is_some() {
        return Err(usage(
            "--routes applies to --path; an --endpoint column is used as it is (give the routes file to `rlctl convert --routes` instead)".into(),
        ));
    }
    if args.endpoints == 0 {
        return Err(usage("--endpoints must be at least 1".into()));
    }
    let sample_keys = args
        .sample_keys
        .as_deref()
        .map(|text| parse_share("--sample-keys", text))
        .transpose()?;
    Ok(SqlSettings {
        routes,
        templates,
        sample_keys,
    })
}
