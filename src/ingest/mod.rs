//! Ingestion: access logs in, one time-ordered [`EventTable`] out.
//!
//! Inputs are opened and decompressed ([`source`]), split into chunks of whole
//! lines ([`lines`]) on a reader thread, parsed in parallel ([`chunk`]) by the
//! parser of their format ([`combined`], [`log_format`], [`json`], chosen by
//! [`detect`] for `auto`), and merged in input order. Every line is accounted
//! for: `lines = parsed + skipped`, with the reasons of the skipped ones, and
//! `lines + glued = parsed + skipped` when a line holds entries glued on
//! (see `combined::glue`).

pub mod arrival;
pub mod chunk;
pub mod columns;
pub mod combined;
pub mod container;
pub mod detect;
pub mod endpoint;
pub mod formats;
pub mod haproxy;
pub mod json;
pub mod json_doc;
pub mod json_tape;
pub mod key;
pub mod lines;
pub mod log_escapes;
pub mod log_format;
pub mod nginx_conf;
pub mod pipeline;
pub mod progress;
pub mod record;
pub mod requests;
pub mod source;
pub mod time;

mod kept_paths;
mod merge;
#[cfg(test)]
mod proptests;
pub mod report;

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

pub use kept_paths::KeptPaths;
pub use merge::return_freed_memory_promptly;
pub use progress::Progress;
pub use report::{FileReport, ForwardedUnknown, IngestReport};

use crate::events::EventTable;
use endpoint::RouteRule;
use key::KeySet;
use record::LineParser;

/// Errors that stop ingestion.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("cannot open {file}: {source}")]
    Open { file: String, source: io::Error },
    #[error("cannot read {file} after line {line}{hint}: {source}")]
    Read {
        file: String,
        line: u64,
        source: io::Error,
        hint: &'static str,
    },
    #[error("{0}")]
    Format(String),
    #[error("{0}")]
    Usage(String),
    #[error("unknown field `{field}` for the {format} format (known: {known})")]
    UnknownField {
        field: String,
        format: String,
        known: String,
    },
    #[error(
        "cannot detect the log format of {file} (first line: {first_line}); {hint}pass --log-format combined, common, json, a source name ({sources}), or the nginx log_format string"
    )]
    Detect {
        file: String,
        first_line: String,
        /// What the file looks like, when that says what to do (ends with `; `).
        hint: &'static str,
        /// The named sources, for the message.
        sources: String,
    },
    #[error(
        "{file}:{line}: {reason} (--strict stops at the first bad line; drop --strict to skip and count such lines)"
    )]
    Strict {
        file: String,
        line: u64,
        reason: record::SkipReason,
    },
    #[error(
        "{file} ends its lines with a carriage return alone, which no access log writes, so it would read as one line: convert its line ends first (mac2unix, from dos2unix, does)"
    )]
    CrLineEnds { file: String },
    #[error(
        "{file}:{line}: this #Fields: directive names other columns than the file's first one, and rlctl reads a file in one set of columns: split the file so that this line starts a part of its own (its first {before} lines in one file, the rest in another) and give both parts",
        before = .line - 1
    )]
    ColumnsChanged { file: String, line: u64 },
}

/// The log format asked for with `--log-format`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatChoice {
    /// Detect per input from its first lines.
    Auto,
    Combined,
    Common,
    /// JSON lines with `ROLE=PATH` overrides.
    Json,
    /// A literal nginx `log_format` string, and how its values are escaped.
    LogFormat {
        format: String,
        escape: log_escapes::LogEscape,
    },
    /// A named source (`--log-format alb`, `traefik`, …; see [`formats`]).
    Source(&'static formats::Source),
}

impl FormatChoice {
    /// The literal nginx `log_format` string `format`, escaped as nginx's
    /// default (`escape=default`).
    pub fn log_format(format: impl Into<String>) -> Self {
        FormatChoice::LogFormat {
            format: format.into(),
            escape: log_escapes::LogEscape::Default,
        }
    }

    /// The named source called `name`, as a choice.
    pub fn named(name: &str) -> Option<Self> {
        formats::named(name).map(FormatChoice::Source)
    }
}

/// Everything ingestion needs, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    pub inputs: Vec<PathBuf>,
    pub format: FormatChoice,
    /// `--field ROLE=PATH` pairs for JSON.
    pub json_fields: Vec<(String, String)>,
    /// The client key (`--key`) and any extra keys to record per event.
    pub keys: KeySet,
    pub routes: Vec<RouteRule>,
    pub strict: bool,
    /// Where to report progress (`None`: nowhere).
    pub progress: Option<Arc<dyn Progress>>,
    /// Which events keep their path (what policy routes match).
    pub paths: KeptPaths,
    /// Stamp events with the arrival time where the format tells it (`--time-of`).
    pub time_of: arrival::TimeOf,
}

impl Settings {
    /// Settings for trying parsers on sample lines: no inputs, the key `ip`.
    pub fn for_detection() -> Self {
        Settings {
            inputs: Vec::new(),
            format: FormatChoice::Auto,
            json_fields: Vec::new(),
            keys: KeySet::new(key::KeySpec::parse("ip", None, None).expect("a valid key")),
            routes: Vec::new(),
            strict: false,
            progress: None,
            paths: KeptPaths::All,
            time_of: arrival::TimeOf::Arrival,
        }
    }
}

/// The result of ingestion.
#[derive(Debug)]
pub struct Ingested {
    pub table: EventTable,
    pub report: IngestReport,
}

/// Builds the parser for a known format.
pub fn parser_for(
    format: &FormatChoice,
    settings: &Settings,
) -> Result<Box<dyn LineParser>, IngestError> {
    parser_for_input(format, settings, &[])
}

/// Builds the parser for a known format, for an input whose first bytes are
/// `head` (header-driven formats read their column names there).
pub fn parser_for_input(
    format: &FormatChoice,
    settings: &Settings,
    head: &[u8],
) -> Result<Box<dyn LineParser>, IngestError> {
    let extra = &settings.keys.fields;
    Ok(match format {
        FormatChoice::Combined | FormatChoice::Common | FormatChoice::Auto => Box::new(
            combined::CombinedParser::new(extra)?
                .with_xff(settings.keys.uses_xff() || settings.keys.uses_user_agent()),
        ),
        FormatChoice::Json => Box::new(
            json::JsonParser::new(&settings.json_fields, extra)?
                .with_nginx_times(settings.time_of, head),
        ),
        FormatChoice::LogFormat { format, escape } => Box::new(
            log_format::LogFormatParser::new(format, extra)?
                .with_time_of(settings.time_of)
                .with_escape(*escape),
        ),
        FormatChoice::Source(source) => formats::parser(source, settings, head)?,
    })
}

/// Reads every input of `settings` into one time-ordered table.
pub fn ingest(settings: &Settings) -> Result<Ingested, IngestError> {
    if let FormatChoice::LogFormat { .. } | FormatChoice::Json = settings.format {
        parser_for(&settings.format, settings)?; // report format errors before opening files
    }
    let mut merger = merge::Merger::new(settings);
    for path in &settings.inputs {
        merger.read_input(path)?;
    }
    let ingested = merger.finish();
    match ingested.report.an_input_parsed_nothing() {
        Some(message) => Err(IngestError::Format(message)),
        None => Ok(ingested),
    }
}
