//! The named log sources (`--log-format alb`, `traefik`, …): for each, the
//! parser family that reads it and the table that configures that parser,
//! the client and time it uses, and where its fields are documented.
//!
//! A source is data, not code: a new one is a row here plus, for its family,
//! a column list, a JSON field map or an nginx-style format string. The
//! families (one parser each) are [`combined`](super::combined),
//! [`log_format`](super::log_format), [`columns`](super::columns),
//! [`json`](super::json) and [`haproxy`](super::haproxy).

use super::arrival::TimeOf;
use super::combined::CombinedParser;
use super::record::LineParser;
use super::{IngestError, Settings};

/// How a source's lines are parsed.
#[derive(Debug, PartialEq, Eq)]
pub enum Family {
    /// The combined parser with a prefix or trailer of the source's own.
    Combined(CombinedKind),
}

/// The variants of combined lines a source may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombinedKind {
    /// Apache `vhost_combined`: `%v:%p` before the address.
    Vhost,
}

/// A named log source.
#[derive(Debug, PartialEq, Eq)]
pub struct Source {
    /// The `--log-format` name.
    pub name: &'static str,
    /// The product, for messages and docs.
    pub title: &'static str,
    pub family: Family,
    /// Where the client address of `--key ip` comes from.
    pub client: &'static str,
    /// The time used by default (`--time-of arrival`).
    pub arrival: &'static str,
    /// The time used with `--time-of logged`.
    pub logged: &'static str,
    /// The time resolution the source logs.
    pub resolution: &'static str,
    /// Where the fields are documented (vendor page or source file).
    pub doc: &'static str,
}

/// Every named source, the most specific first (detection tries them in order).
pub static SOURCES: &[Source] = &[Source {
    name: "vhost_combined",
    title: "Apache vhost_combined",
    family: Family::Combined(CombinedKind::Vhost),
    client: "%h (after the %v:%p virtual host, kept as field `vhost`)",
    arrival: "%t (the time the request was received)",
    logged: "%t",
    resolution: "second",
    doc: "https://httpd.apache.org/docs/2.4/mod/mod_log_config.html#formats; LogFormat vhost_combined in Debian's apache2.conf",
}];

/// The source called `name` (`--log-format NAME`).
pub fn named(name: &str) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.name == name)
}

/// What the report and stderr say about an input read as `source`.
pub fn describe(source: &Source, time_of: TimeOf) -> String {
    let time = match time_of {
        TimeOf::Arrival => source.arrival,
        TimeOf::Logged => source.logged,
    };
    format!("{}; client: {}; time: {time}", source.name, source.client)
}

/// The parser of `source` configured by `settings`.
pub fn parser(source: &Source, settings: &Settings) -> Result<Box<dyn LineParser>, IngestError> {
    let extra = &settings.keys.fields;
    Ok(match source.family {
        Family::Combined(CombinedKind::Vhost) => Box::new(
            CombinedParser::new(extra)?
                .with_xff(settings.keys.uses_xff())
                .with_vhost(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_documented() {
        for (i, source) in SOURCES.iter().enumerate() {
            assert!(
                SOURCES[..i].iter().all(|s| s.name != source.name),
                "{}",
                source.name
            );
            assert!(
                source.doc.contains("http") || source.doc.contains('/'),
                "{}",
                source.name
            );
            assert_eq!(named(source.name), Some(source));
        }
    }
}
