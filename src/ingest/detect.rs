//! `--log-format auto`: which format an input is in, from its first lines, and
//! the parser chosen for it (detected or given). Custom nginx formats cannot be
//! guessed; they are given with `--log-format '<log_format>'` or `--nginx-conf`.
//!
//! Detection tries each named source (most specific first, see
//! [`formats::SOURCES`]) and the generic families on a sample of lines, and
//! takes the first that reads at least half of them.

use super::columns;
use super::combined::CombinedParser;
use super::container::{self, ContainerParser};
use super::formats::{self, Family, Source};
use super::json;
use super::json_doc::json_object;
use super::log_escapes::LogEscape;
use super::record::{LineParser, Record, SkipReason};
use super::{FormatChoice, IngestError, Settings, parser_for_input};

/// How many non-blank lines detection looks at.
const SAMPLE_LINES: usize = 50;

/// The parser chosen for an input and what to say about it.
pub struct Chosen {
    pub parser: Box<dyn LineParser>,
    /// The format as reports name it (`combined (detected)`, `alb (detected;
    /// client: …; time: …)`).
    pub description: String,
}

/// The most of an input's first chunk detection reads.
pub const HEAD_BYTES: usize = 64 << 10;

/// The part of an input's first chunk (`data`, whole lines) that detection
/// reads: its first [`HEAD_BYTES`], from the first line that is shorter than
/// that (a longer line is skipped, not cut short: a cut line fits no format).
/// When every line is longer and the first starts with JSON entries glued
/// onto one line, its first [`HEAD_BYTES`]: the entries are detected by
/// their first.
pub fn head(data: &[u8]) -> &[u8] {
    let mut start = 0;
    while data.len() - start > HEAD_BYTES {
        match memchr::memchr(b'\n', &data[start..start + HEAD_BYTES]) {
            Some(_) => break,
            None => match memchr::memchr(b'\n', &data[start + HEAD_BYTES..]) {
                Some(end) => start += HEAD_BYTES + end + 1,
                None => break,
            },
        }
    }
    let cut = &data[..data.len().min(HEAD_BYTES)];
    if start == data.len()
        && cut.trim_ascii_start().starts_with(b"{")
        && first_object(cut).is_some()
    {
        return cut;
    }
    &data[start..data.len().min(start + HEAD_BYTES)]
}

/// Chooses the parser of an input whose first bytes are `head` (`None` when
/// the input has no line short enough to look at).
pub fn choose(settings: &Settings, head: Option<&[u8]>, file: &str) -> Result<Chosen, IngestError> {
    if head.is_some_and(ends_lines_with_cr_alone) {
        return Err(IngestError::CrLineEnds {
            file: file.to_string(),
        });
    }
    let wrapper = head.and_then(|h| container::detect(&sample_lines(h)));
    let unwrapped = match (wrapper, head) {
        (Some(w), Some(h)) => Some(container::unwrap_head(w, h)),
        _ => None,
    };
    let head = unwrapped.as_deref().or(head);
    let chosen = match &settings.format {
        FormatChoice::Auto => match head.map(detect) {
            Some(Some(found)) => found,
            // Nothing but blank lines to look at: they are skipped as blank
            // in any format, and the run says so.
            Some(None) if head.is_some_and(|h| sample_lines(h).is_empty()) => {
                FormatChoice::Combined
            }
            Some(None) => {
                let first = head
                    .unwrap_or_default()
                    .split(|&b| b == b'\n')
                    .next()
                    .unwrap_or_default();
                let first = String::from_utf8_lossy(&first[..first.len().min(200)]).into_owned();
                return Err(IngestError::Detect {
                    file: file.to_string(),
                    // Escaped where the message is shown, as all of it is.
                    first_line: format!("`{first}`"),
                    hint: wrapped_hint(head.unwrap_or_default()),
                    sources: formats::SOURCES
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            None => FormatChoice::Combined, // nothing but over-long lines: they are skipped anyway
        },
        other => other.clone(),
    };
    let detected = settings.format == FormatChoice::Auto;
    let description = match &chosen {
        FormatChoice::Source(source) => {
            let about = formats::describe(source, settings.time_of);
            match about.split_once("; ") {
                Some((name, rest)) if detected => format!("{name} (detected; {rest})"),
                Some((name, rest)) => format!("{name} ({rest})"),
                None => about,
            }
        }
        other => {
            let name = match other {
                FormatChoice::Common => "common".to_string(),
                FormatChoice::Json => "json".to_string(),
                FormatChoice::LogFormat { format, escape } => match escape {
                    LogEscape::Default => format!("log_format '{format}'"),
                    other => format!("log_format escape={} '{format}'", other.name()),
                },
                _ => "combined".to_string(),
            };
            if detected {
                format!("{name} (detected)")
            } else {
                name
            }
        }
    };
    let parser = parser_for_input(&chosen, settings, head.unwrap_or_default())?;
    let description = match (&chosen, parser.time_used()) {
        (FormatChoice::LogFormat { .. } | FormatChoice::Json, Some(time)) => {
            format!("{description} (time: {time})")
        }
        // Only a W3C `time` without `date` parses in order (see `columns::dating`).
        _ if parser.in_order() => description.replacen("date + time", "#Date: lines + time", 1),
        _ => description,
    };
    Ok(match wrapper {
        Some(wrapper) => Chosen {
            parser: Box::new(ContainerParser::new(wrapper, parser)),
            description: format!("{} container log: {description}", wrapper.name()),
        },
        None => Chosen {
            parser,
            description,
        },
    })
}

/// Detects the format of `head` (the first bytes of an input); `None` when no
/// format fits at least half of the sampled lines.
pub fn detect(head: &[u8]) -> Option<FormatChoice> {
    let lines = sample_lines(head);
    if lines.is_empty() {
        return None;
    }
    let half = lines.len().div_ceil(2);
    let json = lines.iter().filter(|l| is_json_object(l)).count();
    let mut parser = CombinedParser::new(&[]).ok()?;
    let mut record = Record::default();
    let mut combined = 0;
    let mut with_agent = 0;
    for line in &lines {
        record.clear(0);
        match parser.parse(line, &mut record) {
            Ok(()) => {
                combined += 1;
                with_agent += usize::from(has_quoted_tail(line));
            }
            Err(SkipReason::Malformed(_)) => {}
            Err(_) => combined += 1, // the shape fits; the value is bad
        }
    }
    if json >= half && json >= combined {
        // A server's own messages may fill the sample (Caddy's and Traefik's
        // start-up lines), none of which names a source: the rest of the head
        // may still name one.
        let rest = || non_blank_lines(head).skip(SAMPLE_LINES).collect::<Vec<_>>();
        let found = json_source(&lines).or_else(|| json_source(&rest()));
        return Some(found.unwrap_or(FormatChoice::Json));
    }
    if let Some(names) = columns::header_fields(head) {
        let name = if names.iter().any(|n| n == "x-edge-location") {
            "cloudfront"
        } else {
            "w3c"
        };
        return FormatChoice::named(name);
    }
    if let Some(source) = formats::SOURCES
        .iter()
        .find(|s| is_text_family(s) && reads(s, &lines) >= half.max(combined))
    {
        return Some(FormatChoice::Source(source));
    }
    if combined >= half {
        Some(if with_agent * 2 >= combined {
            FormatChoice::Combined
        } else {
            FormatChoice::Common
        })
    } else {
        None
    }
}

/// The first non-blank lines of `head`, without line ends.
fn sample_lines(head: &[u8]) -> Vec<&[u8]> {
    non_blank_lines(head).take(SAMPLE_LINES).collect()
}

/// The non-blank lines of `head`, without line ends.
fn non_blank_lines(head: &[u8]) -> impl Iterator<Item = &[u8]> {
    head.split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty())
}

/// Whether `head` ends its lines with a carriage return alone (classic Mac
/// OS, some converters): no line feed, and carriage returns between lines.
/// Read as one line, such an input would be one request at most.
fn ends_lines_with_cr_alone(head: &[u8]) -> bool {
    !head.contains(&b'\n') && memchr::memchr_iter(b'\r', head).nth(1).is_some()
}

/// Whether detection tries `source` on lines that are not JSON.
fn is_text_family(source: &Source) -> bool {
    matches!(
        source.family,
        Family::Combined(_) | Family::LogFormat { .. } | Family::Haproxy
    ) || matches!(source.family, Family::Columns(layout) if layout.fields.is_some())
}

/// How many of `lines` the parser of `source` reads.
fn reads(source: &Source, lines: &[&[u8]]) -> usize {
    let settings = Settings::for_detection();
    let Ok(mut parser) = formats::parser(source, &settings, &[]) else {
        return 0;
    };
    let mut record = Record::default();
    lines
        .iter()
        .filter(|line| {
            record.clear(0);
            parser.parse(line, &mut record).is_ok()
        })
        .count()
}

/// The JSON source whose signature fields most of the JSON `lines` have (the
/// first in [`formats::SOURCES`] on a tie); `None` when no line has any
/// source's. Lines of other kinds (a server's own messages mixed with its
/// access entries, as Caddy and Cloud Logging write) do not count against it.
fn json_source(lines: &[&[u8]]) -> Option<FormatChoice> {
    let objects: Vec<serde_json::Value> = lines.iter().filter_map(|l| first_object(l)).collect();
    let has = |object: &serde_json::Value, path: &str| {
        path.split('.')
            .try_fold(object, |value, key| value.get(key))
            .is_some_and(|v| !v.is_null())
    };
    let mut best: Option<(usize, &'static Source)> = None;
    for source in formats::SOURCES {
        let Family::Json(map) = source.family else {
            continue;
        };
        let matching = objects
            .iter()
            .filter(|o| map.signature.iter().all(|path| has(o, path)))
            .count();
        if matching > best.map_or(0, |(n, _)| n) {
            best = Some((matching, source));
        }
    }
    best.map(|(_, source)| FormatChoice::Source(source))
}

fn is_json_object(line: &[u8]) -> bool {
    first_object(line).is_some()
}

/// The JSON object `line` holds from its first `{`: all of the rest, or the
/// first of entries glued onto one line (see [`json::leading_object`]): an
/// object with members that another `{` or nothing follows, so that an input
/// whose first lines are glued is still detected, and text with a `{}` or
/// `{…}` in it (HAProxy's captures, a query) is not taken for JSON.
fn first_object(line: &[u8]) -> Option<serde_json::Value> {
    let text = &line[memchr::memchr(b'{', line)?..];
    json_object(text).or_else(|| {
        let first = json::leading_object(text)?;
        let next = text[first.len()..].trim_ascii_start().first();
        let object = json_object(first).filter(|o| o.as_object().is_some_and(|o| !o.is_empty()));
        object.filter(|_| next.is_none_or(|&b| b == b'{'))
    })
}

/// True when the line ends with a quoted field (a user agent) after the status.
fn has_quoted_tail(line: &[u8]) -> bool {
    line.trim_ascii_end().ends_with(b"\"") && line.iter().filter(|&&b| b == b'"').count() >= 6
}

/// What to do with a file of JSON entries wrapped in one document, which
/// no access log writes line by line (found by review: the messages did not
/// say): `gcloud logging read --format=json` prints an array, Azure's
/// storage and Event Hubs deliver a `{"records": [...]}` envelope.
fn wrapped_hint(head: &[u8]) -> &'static str {
    let head = head.trim_ascii_start();
    let compact = json::compact_start(head);
    if compact.starts_with(b"[{") || compact == b"[" {
        "it looks like a JSON array (as `gcloud logging read --format=json` prints): write one entry per line first (`jq -c '.[]'`), then "
    } else if json::is_records_envelope(head) {
        "it looks like Azure's `{\"records\": [...]}` envelope: write one record per line first (`jq -c '.records[]'`), then "
    } else {
        ""
    }
}

#[cfg(test)]
mod tests;
