//! The options layer: raw command-line values ([`crate::cli`]) validated and
//! turned into settings the library runs on. Every check a user can fail lives
//! here, with a message that says what to type instead.

mod analyze;
mod convert;
mod export;
mod generate;
mod outputs;
mod report;
mod simulate;
mod sql;
mod watch;

use std::io::IsTerminal;
use std::sync::Arc;

pub use analyze::{AnalyzeSettings, analyze_settings};
pub use convert::{ConvertSettings, convert_settings};
pub use export::{ExportSettings, export_settings, gateway_of};
pub use generate::{GenerateSettings, generate_settings};
pub use outputs::{Sink, check_outputs};
pub use report::{ReportSettings, parse_share, report_settings};
pub use simulate::{LimitSource, SimulateSettings, simulate_settings};
pub use sql::{SqlSettings, sql_settings};
pub use watch::{WatchOutput, WatchRun, watch_settings};

use crate::cli::{ExcludeArg, IngestArgs, OutputArgs, OutputFormat, RoutesArg};
use crate::discover::{TemplateSet, routes_file};
use crate::ingest::endpoint::RouteRule;
use crate::ingest::key::{KeySet, KeySpec};
use crate::ingest::{self, FormatChoice, IngestError, KeptPaths, nginx_conf};
use crate::output;
use crate::policy::PolicyError;
use crate::simulate::deploy::DeployError;

/// Why the flags of a command do not make a run: the one usage-error type of
/// every command's settings (clap has already rejected values of the wrong
/// type; these are the checks that need more than one flag or a file).
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(transparent)]
    Deploy(#[from] DeployError),
    #[error("{0}")]
    Usage(String),
}

/// Turns the shared ingestion flags into [`ingest::Settings`].
/// The `--exclude` clients, named as ingestion writes keys (an IPv6 address
/// in canonical form: [`KeySpec::as_keyed`]).
fn excluded_clients(args: &ExcludeArg, key: &KeySpec) -> Vec<String> {
    args.exclude.iter().map(|c| key.as_keyed(c)).collect()
}

pub fn ingest_settings(args: &IngestArgs) -> Result<ingest::Settings, IngestError> {
    let format = match (&args.format.nginx_conf, &args.format.log_format_name) {
        (Some(conf), Some(name)) => {
            let text = std::fs::read_to_string(conf).map_err(|source| IngestError::Open {
                file: conf.display().to_string(),
                source,
            })?;
            let found = nginx_conf::find_log_format(&text, name)?;
            FormatChoice::LogFormat {
                format: found.format,
                escape: found.escape,
            }
        }
        _ => match (
            format_choice(&args.format.log_format)?,
            args.format.log_escape,
        ) {
            (FormatChoice::LogFormat { format, .. }, Some(escape)) => {
                FormatChoice::LogFormat { format, escape }
            }
            (_, Some(_)) => {
                return Err(IngestError::Usage(
                    "--log-escape tells how a literal log_format string's values are escaped; \
                     it needs --log-format '$...'"
                        .into(),
                ));
            }
            (format, None) => format,
        },
    };
    let json_fields = args
        .format
        .field
        .iter()
        .map(|pair| {
            pair.split_once('=')
                .map(|(r, p)| (r.trim().to_string(), p.trim().to_string()))
                .filter(|(r, p)| !r.is_empty() && !p.is_empty())
                .ok_or_else(|| {
                    IngestError::Usage(format!(
                        "--field `{pair}`: expected ROLE=PATH, e.g. time=ts"
                    ))
                })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !json_fields.is_empty() && !matches!(format, FormatChoice::Json | FormatChoice::Auto) {
        return Err(IngestError::Usage(
            "--field maps JSON fields; it needs --log-format json (or auto)".into(),
        ));
    }
    let format = if json_fields.is_empty() {
        format
    } else {
        FormatChoice::Json
    };
    let mut keys = KeySet::new(KeySpec::parse(&args.key, args.cidr4, args.cidr6)?);
    let mut routes: Vec<RouteRule> = args
        .route
        .iter()
        .map(|r| RouteRule::parse(r))
        .collect::<Result<_, _>>()?;
    if routes.iter().any(|r| r.host.is_some()) {
        let field = keys.field_index(&args.host_field);
        for host in routes.iter_mut().filter_map(|r| r.host.as_mut()) {
            host.field = field;
        }
    }
    Ok(ingest::Settings {
        inputs: args.files.clone(),
        format,
        json_fields,
        keys,
        routes,
        strict: args.strict,
        progress: (!args.quiet && std::io::stderr().is_terminal())
            .then(|| Arc::new(output::progress::Bar::default()) as Arc<dyn ingest::Progress>),
        paths: KeptPaths::All,
        time_of: args.format.time_of,
    })
}

/// Reads a routes file.
pub fn read_routes(path: &std::path::Path) -> Result<TemplateSet, IngestError> {
    let text = std::fs::read_to_string(path).map_err(|source| IngestError::Open {
        file: path.display().to_string(),
        source,
    })?;
    let templates = routes_file::parse(&text, &path.display().to_string())
        .map_err(|e| IngestError::Usage(format!("--routes {e}")))?;
    Ok(TemplateSet::new(templates))
}

/// The templates of `--routes FILE`, if given.
pub fn routes_settings(arg: &RoutesArg) -> Result<Option<TemplateSet>, IngestError> {
    arg.routes.as_deref().map(read_routes).transpose()
}

/// The names `--log-format` takes besides the named sources.
const FORMAT_NAMES: [(&str, FormatChoice); 7] = [
    ("auto", FormatChoice::Auto),
    ("combined", FormatChoice::Combined),
    ("main", FormatChoice::Combined),
    ("common", FormatChoice::Common),
    ("clf", FormatChoice::Common),
    ("json", FormatChoice::Json),
    ("jsonl", FormatChoice::Json),
];

/// `--log-format` text to a format choice: a literal nginx `log_format` when
/// it names a `$variable`, else a known name (in any case); an unknown name
/// is an error that lists the names.
pub fn format_choice(text: &str) -> Result<FormatChoice, IngestError> {
    let text = text.trim();
    if text.contains('$') {
        return Ok(FormatChoice::log_format(text));
    }
    let name = text.to_ascii_lowercase();
    let generic = FORMAT_NAMES.iter().find(|(known, _)| *known == name);
    generic
        .map(|(_, choice)| choice.clone())
        .or_else(|| FormatChoice::named(&name))
        .ok_or_else(|| unknown_format(text, &name))
}

/// The error for `--log-format NAME` naming no format, with the nearest name.
fn unknown_format(text: &str, lowered: &str) -> IngestError {
    let names: Vec<&str> = (FORMAT_NAMES.iter().map(|(name, _)| *name))
        .chain(ingest::formats::SOURCES.iter().map(|s| s.name))
        .collect();
    let nearest = names
        .iter()
        .map(|name| (edit_distance(lowered, name), *name))
        .min()
        .filter(|&(distance, _)| distance <= 2)
        .map(|(_, name)| format!(" (did you mean `{name}`?)"))
        .unwrap_or_default();
    IngestError::Usage(format!(
        "--log-format `{}`: no format has that name{nearest}. Give one of {} (docs/sources.md), \
         or an nginx log_format string, whose $variables name the fields: \
         '$msec $remote_addr \"$request\" $status'",
        crate::text::escape::terminal(text),
        names.join(", ")
    ))
}

/// The edit distance of two short ASCII names (insertions, deletions and
/// substitutions of one byte).
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.as_bytes().iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(x != y));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The output format: as asked, else a table on a terminal and JSON in a pipe or file.
pub fn output_format(args: &OutputArgs) -> output::Format {
    match args.format {
        Some(format) => format_of(format),
        None if args.output.is_none() && std::io::stdout().is_terminal() => output::Format::Table,
        None => output::Format::Json,
    }
}

/// The library's name for a `--format` value.
fn format_of(format: OutputFormat) -> output::Format {
    match format {
        OutputFormat::Table => output::Format::Table,
        OutputFormat::Json => output::Format::Json,
        OutputFormat::Csv => output::Format::Csv,
        OutputFormat::Markdown => output::Format::Markdown,
        OutputFormat::Html => output::Format::Html,
    }
}

/// Whether terminal output may use colour (a terminal, and `NO_COLOR` unset).
pub fn use_colour(args: &OutputArgs) -> bool {
    args.output.is_none()
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// The settings, or the error of clap (a value of the wrong type) or of
    /// the options layer.
    fn settings(extra: &[&str]) -> Result<ingest::Settings, OptionsError> {
        let mut argv = vec!["rlctl", "analyze", "x.log"];
        argv.extend(extra);
        let cli = crate::cli::Cli::try_parse_from(argv)
            .map_err(|e| OptionsError::Usage(e.to_string()))?;
        match cli.command {
            crate::cli::Command::Analyze(a) => analyze_settings(&a).map(|s| s.analysis.ingest),
            _ => unreachable!(),
        }
    }

    #[test]
    fn format_names_and_literals() {
        let choice = |text| format_choice(text).unwrap();
        assert_eq!(choice("combined"), FormatChoice::Combined);
        assert_eq!(choice(" JSON "), FormatChoice::Json);
        assert_eq!(
            choice("CloudFront"),
            FormatChoice::named("cloudfront").unwrap()
        );
        assert_eq!(
            choice("$msec $remote_addr"),
            FormatChoice::log_format("$msec $remote_addr")
        );
        let unknown = |text| format_choice(text).unwrap_err().to_string();
        assert!(unknown("combine").contains("no format has that name (did you mean `combined`?)"));
        assert!(unknown("Traefk").contains("(did you mean `traefik`?)"));
        let far = unknown("nothing-like-it");
        assert!(
            !far.contains("did you mean") && far.contains("azure-frontdoor"),
            "{far}"
        );
        assert_eq!(
            (edit_distance("", "ab"), edit_distance("kitten", "sitting")),
            (2, 3)
        );
    }

    #[test]
    fn field_mapping_implies_json_and_is_validated() {
        assert_eq!(
            settings(&["--field", "time=ts,client=who"]).unwrap().format,
            FormatChoice::Json
        );
        assert!(settings(&["--field", "time"]).is_err());
        assert!(settings(&["--log-format", "combined", "--field", "time=ts"]).is_err());
    }

    #[test]
    fn bad_keys_and_routes_are_usage_errors() {
        assert!(settings(&["--key", "ip+nope"]).is_err());
        assert!(settings(&["--route", "([=x"]).is_err());
        assert!(
            settings(&[
                "--nginx-conf",
                "/nonexistent/nginx.conf",
                "--log-format-name",
                "main"
            ])
            .is_err()
        );
        assert!(settings(&["--window", "7x"]).is_err());
        assert!(settings(&["--multiplier", "0"]).is_err());
        // Found by review: 1e308 saturated the limit at 2^64 - 1.
        assert!(settings(&["--multiplier", "1e308"]).is_err());
        assert!(settings(&["--multiplier", "1000001"]).is_err());
        assert!(settings(&["--multiplier", "1e6"]).is_ok());
        assert!(settings(&["--algo", "magic"]).is_err());
        assert!(settings(&["--export-counts", "out.xlsx"]).is_err());
    }
}
