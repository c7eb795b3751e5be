//! Logs whose lines are columns named by a header or by the source's
//! documentation: W3C extended / IIS and CloudFront standard logs (a
//! `#Fields:` header names the columns), and AWS Application Load Balancer
//! logs (a fixed, documented column list). One parser; each source is a
//! [`Layout`]: how columns are separated and what the column names mean.
//!
//! Columns are separated by tabs (CloudFront) or spaces (W3C, ALB); with
//! spaces, a column that starts with `"` runs to the next `"` that ends a
//! column (ALB quotes its request and user agent). A header line (`#…`) is
//! skipped as a directive; the column names are read once, from the header at
//! the top of the input; a later `#Fields:` that names other columns is an
//! error ([`SkipReason::ColumnsChanged`]), unless the parser follows headers
//! (`watch`: the lines after it are read in its columns), a repeat of them a
//! directive.
//! Columns with a `time` but no `date` take their dates from the `#Date:`
//! directives ([`dating`]).

use std::borrow::Cow;

mod dating;
mod header;

use dating::Dating;
use header::lower_case;
pub use header::{header_fields, separator_of};

use super::IngestError;
use super::arrival::{self, TimeOf};
use super::record::{LineParser, Record, SkipReason, parse_status, split_request};
use super::time::{self, Stamp};

/// What a column means to rlctl.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `YYYY-MM-DD` (UTC), with a [`Role::Time`] column.
    Date,
    /// `HH:MM:SS[.fff]` (UTC), with a [`Role::Date`] column; when the response ended.
    Time,
    /// An ISO 8601 time when the response ended (ALB `time`).
    EndTime,
    /// An ISO 8601 time when the request arrived (ALB `request_creation_time`).
    StartTime,
    /// The client address (a port after `:` is dropped by the key).
    Client,
    /// `ADDRESS:PORT`, always with a port (ALB writes IPv6 without brackets:
    /// `2001:db8::1:51000`): the part before the last `:`.
    ClientPort,
    Method,
    /// The path without the query (`cs-uri-stem`).
    Stem,
    /// The query string without `?` (`cs-uri-query`; `-` when none).
    Query,
    /// The whole target, path and query (`cs-uri`, the W3C draft's own
    /// example field); a [`Role::Stem`] column, where there is one, wins.
    Target,
    /// A whole request line, `METHOD TARGET PROTOCOL` (ALB `request`).
    Request,
    Status,
    Xff,
    User,
    /// The request's duration (`time-taken`), in the layout's unit.
    Duration,
    /// The HTTP version (`cs-version`, CloudFront's `cs-protocol-version`).
    Protocol,
}

/// How columns are separated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Separator {
    Tab,
    /// Spaces, with `"quoted"` columns.
    Space,
}

/// The unit of a [`Role::Duration`] column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationUnit {
    Seconds,
    /// Whole milliseconds (IIS's `time-taken`); a value with a decimal point
    /// is read as seconds, the W3C draft's unit.
    Millis,
}

/// One source's columns.
#[derive(Debug, PartialEq, Eq)]
pub struct Layout {
    /// The column names when the source documents a fixed list (ALB); `None`
    /// when a `#Fields:` header names them.
    pub fields: Option<&'static [&'static str]>,
    /// The meaning of the column names rlctl uses.
    pub roles: &'static [(&'static str, Role)],
    pub duration_unit: DurationUnit,
    /// Values the first column must have (ALB's connection type), if any.
    pub first_column: Option<&'static [&'static str]>,
    /// How many columns a line needs at least.
    pub min_columns: usize,
    /// Whether the writer puts `+` for a space in a value (IIS: a user
    /// agent is logged `Mozilla/5.0+(Windows+NT+10.0)`). X-Forwarded-For is
    /// then read with `+` as a space: a space after its comma, or before its
    /// first element, had been kept in the key (`+203.0.113.2`). No address
    /// or token of that header holds a `+`; other fields are left as logged
    /// (an API key may hold one).
    pub plus_for_space: bool,
}

/// An X-Forwarded-For value, with `+` read as a space where the writer puts
/// one for a space ([`Layout::plus_for_space`]).
fn forwarded(value: &[u8], plus_for_space: bool) -> Cow<'_, [u8]> {
    if plus_for_space && value.contains(&b'+') {
        let spaced = value.iter().map(|&b| if b == b'+' { b' ' } else { b });
        Cow::Owned(spaced.collect())
    } else {
        Cow::Borrowed(value)
    }
}

/// A parser of one [`Layout`] with its column names resolved.
#[derive(Debug, Clone)]
pub struct ColumnsParser {
    layout: &'static Layout,
    separator: Separator,
    /// The column of each role the names have.
    columns: Vec<(Role, usize)>,
    /// For each `field:NAME` asked for, its column.
    extra: Vec<usize>,
    /// The `field:NAME`s asked for, for the columns of a later header.
    extra_names: Vec<String>,
    /// Whether a `#Fields:` that names other columns is read as the header
    /// of the lines after it ([`LineParser::follow_headers`]).
    follows_headers: bool,
    /// The parser as it was before it took another header: what it forks.
    initial: Option<Box<ColumnsParser>>,
    time_of: TimeOf,
    /// Where each column is in the current line (reused).
    spans: Vec<(usize, usize)>,
    /// The column names of the input's `#Fields:` header, in lower case,
    /// which a later `#Fields:` must repeat; `None` for a fixed layout.
    header: Option<Vec<String>>,
    /// No column holds the method: endpoints are named by the path alone
    /// ([`Record::no_method`]).
    no_method: bool,
    /// With a `time` column and no `date` (W3C): the date the `#Date:`
    /// directives and the lines so far give.
    dating: Option<Dating>,
}

impl ColumnsParser {
    /// A parser for `layout` with the column `names` (the layout's own list,
    /// or a `#Fields:` header) and `extra` column names to capture.
    pub fn new(
        layout: &'static Layout,
        names: &[String],
        separator: Separator,
        extra_names: &[String],
        time_of: TimeOf,
    ) -> Result<Self, IngestError> {
        // Names in any case: IIS writes a custom field as its administrator
        // named it (`X-Forwarded-For`).
        let position = |name: &str| names.iter().position(|n| n.eq_ignore_ascii_case(name));
        let columns: Vec<(Role, usize)> = layout
            .roles
            .iter()
            .filter_map(|&(name, role)| Some((role, position(name)?)))
            .collect();
        let has = |role| columns.iter().any(|&(r, _)| r == role);
        let dated = has(Role::Date) && has(Role::Time);
        // A header names the columns: its `#Date:` directives date a `time`.
        let by_directive = !dated && has(Role::Time) && layout.fields.is_none();
        if !(dated || by_directive || has(Role::EndTime) || has(Role::StartTime)) {
            let need = match layout.fields {
                None => "a time column (with a date column, or #Date: lines)",
                Some(_) => "date and time",
            };
            return Err(IngestError::Format(format!(
                "the columns ({}) have no time: they need {need}",
                names.join(" ")
            )));
        }
        let extra = extra_names
            .iter()
            .map(|name| {
                position(name).ok_or_else(|| IngestError::UnknownField {
                    field: name.clone(),
                    format: "columns".into(),
                    known: names.join(", "),
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(ColumnsParser {
            layout,
            separator,
            no_method: !(has(Role::Method) || has(Role::Request)),
            columns,
            extra,
            extra_names: extra_names.to_vec(),
            follows_headers: false,
            initial: None,
            time_of,
            spans: Vec::with_capacity(names.len()),
            header: layout.fields.is_none().then(|| lower_case(names.iter())),
            dating: by_directive.then(Dating::default),
        })
    }

    /// Splits `line` into `spans`.
    fn split(&mut self, line: &[u8]) -> Result<(), SkipReason> {
        self.spans.clear();
        match self.separator {
            Separator::Tab => {
                let mut start = 0;
                for tab in memchr::memchr_iter(b'\t', line) {
                    self.spans.push((start, tab));
                    start = tab + 1;
                }
                self.spans.push((start, line.len()));
            }
            Separator::Space => split_spaces(line, &mut self.spans)?,
        }
        if self.spans.len() < self.layout.min_columns {
            return Err(SkipReason::Malformed("fewer columns than the format has"));
        }
        Ok(())
    }
}

/// Space-separated columns; a column starting with `"` ends at a `"` followed
/// by a space or the end of the line (the quotes are not part of the value),
/// but for one a backslash escapes (ELB and ALB write a user agent's `"` as
/// `\"`: found by review, `"Mozilla \"evil\" x"` ended at `evil\"` and
/// shifted every later column).
fn split_spaces(line: &[u8], spans: &mut Vec<(usize, usize)>) -> Result<(), SkipReason> {
    let mut i = 0;
    while i < line.len() {
        if line[i] == b'"' {
            let body = i + 1;
            let mut close = None;
            for q in memchr::memchr_iter(b'"', &line[body..]) {
                let at = body + q;
                let escaped = crate::text::ends_in_escape(&line[body..at]);
                if !escaped && matches!(line.get(at + 1), None | Some(b' ')) {
                    close = Some(at);
                    break;
                }
            }
            let close = close.ok_or(SkipReason::Malformed("unterminated quoted column"))?;
            spans.push((body, close));
            i = close + 2;
        } else {
            let end = memchr::memchr(b' ', &line[i..]).map_or(line.len(), |e| i + e);
            spans.push((i, end));
            i = end + 1;
        }
    }
    Ok(())
}

/// `date` + `time` columns (UTC) as a stamp (`HH:MM` with its seconds).
fn date_time(date: &[u8], clock: &[u8]) -> Option<Stamp> {
    let clock = &dating::with_seconds(clock)[..];
    let mut text = [0u8; 48];
    let len = date.len() + 1 + clock.len() + 1;
    if len > text.len() || date.len() != 10 {
        return None;
    }
    text[..10].copy_from_slice(date);
    text[10] = b'T';
    text[11..11 + clock.len()].copy_from_slice(clock);
    text[len - 1] = b'Z';
    time::parse_iso8601(&text[..len])
}

impl LineParser for ColumnsParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        if line.starts_with(b"#") {
            if let (Some(dating), Some(value)) = (&mut self.dating, line.strip_prefix(b"#Date:")) {
                dating.directive(value)?;
            }
            if let (Some(header), Some(fields)) = (&self.header, line.strip_prefix(b"#Fields:")) {
                let fields = String::from_utf8_lossy(fields);
                if lower_case(fields.split_ascii_whitespace()) != *header {
                    return self.take_header(&fields);
                }
            }
            return Err(SkipReason::Directive);
        }
        self.split(line)?;
        if let Some(allowed) = self.layout.first_column {
            let (s, e) = self.spans[0];
            if !allowed.iter().any(|a| a.as_bytes() == &line[s..e]) {
                return Err(SkipReason::Malformed(
                    "unknown connection type in the first column",
                ));
            }
        }
        let value = |column: usize| {
            self.spans
                .get(column)
                .map_or(&b""[..], |&(s, e)| &line[s..e])
        };
        let (mut date, mut clock, mut end, mut start, mut duration) =
            (None, None, None, None, None);
        let (mut stem, mut query) = (&b""[..], &b""[..]);
        for &(role, column) in &self.columns {
            let v = value(column);
            match role {
                Role::Date => date = Some(v),
                Role::Time => clock = Some(v),
                Role::EndTime => end = Some(time::parse_iso8601(v).ok_or(SkipReason::BadTime)?),
                Role::StartTime => start = time::parse_iso8601(v),
                Role::Client => record.addr = Cow::Borrowed(v),
                Role::ClientPort => {
                    let host = memchr::memrchr(b':', v).map_or(v, |colon| &v[..colon]);
                    let host = host.strip_prefix(b"[").unwrap_or(host);
                    record.addr = Cow::Borrowed(host.strip_suffix(b"]").unwrap_or(host));
                }
                Role::Method => record.method = Cow::Borrowed(v),
                Role::Stem => stem = v,
                Role::Query => query = v,
                Role::Target => record.path = Cow::Borrowed(v),
                Role::Request => {
                    let (method, target, protocol) = split_request(v);
                    record.protocol = protocol.unless_versionless();
                    record.method = Cow::Borrowed(method);
                    record.path = Cow::Borrowed(target);
                }
                Role::Status => record.status = parse_status(v)?,
                Role::Xff => record.xff = forwarded(v, self.layout.plus_for_space),
                Role::User => record.user = Cow::Borrowed(v),
                Role::Duration => duration = Some(v),
                Role::Protocol => record.protocol.read_field(v),
            }
        }
        match (date, clock, &mut self.dating) {
            (Some(date), Some(clock), _) => {
                end = Some(date_time(date, clock).ok_or(SkipReason::BadTime)?);
            }
            (None, Some(clock), Some(dating)) => end = Some(dating.date(clock)?),
            _ => {}
        }
        record.no_method = self.no_method;
        if !stem.is_empty() {
            record.path = if query.is_empty() || query == b"-" {
                Cow::Borrowed(stem)
            } else {
                Cow::Owned([stem, b"?", query].concat())
            };
        }
        let duration_ms = duration.and_then(|d| match self.layout.duration_unit {
            DurationUnit::Seconds => arrival::seconds_text_ms(d),
            // IIS writes whole milliseconds; a decimal is the W3C draft's own
            // unit, seconds (`<fixed>`), as other writers log it.
            DurationUnit::Millis if d.contains(&b'.') => arrival::seconds_text_ms(d),
            DurationUnit::Millis => arrival::millis_text(d),
        });
        record.time = match self.time_of {
            TimeOf::Arrival => start.or_else(|| {
                end.map(|e| duration_ms.map_or(e, |d| arrival::arrival_from_end(e, d)))
            }),
            TimeOf::Logged => end.or(start),
        };
        if record.time.is_none() {
            return Err(SkipReason::BadTime);
        }
        for (slot, &column) in record.extra.iter_mut().zip(&self.extra) {
            *slot = Cow::Borrowed(value(column));
        }
        Ok(())
    }

    fn follow_headers(&mut self) {
        self.follows_headers = true;
    }

    /// A fork dates lines from its own directives on, in the columns the
    /// parser was made with.
    fn fork(&self) -> Box<dyn LineParser> {
        match &self.initial {
            Some(initial) => initial.fork(),
            None => Box::new(ColumnsParser {
                dating: self.dating.map(|_| Dating::default()),
                ..self.clone()
            }),
        }
    }

    fn name(&self) -> String {
        "columns".into()
    }

    /// Lines are dated by the `#Date:` before them, or read in the columns
    /// of the header before them.
    fn in_order(&self) -> bool {
        self.dating.is_some() || self.follows_headers
    }
}

#[cfg(test)]
mod tests;
