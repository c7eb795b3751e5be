//! nginx `log_format` strings compiled to parsers.
//!
//! A format such as `'$msec $remote_addr "$request" $status'` becomes a list of
//! literals and variables. Each variable's value runs up to the next occurrence of
//! the literal that follows it, so matching is a handful of `memmem` searches per
//! line. Two variables with nothing between them (`$a$b`) cannot be split that way;
//! such formats fall back to a regular expression with lazy groups.

use std::borrow::Cow;

use memchr::memmem::Finder;
use regex::bytes::{CaptureLocations, Regex};

use super::IngestError;
use super::record::{LineParser, Record, SkipReason, parse_status, split_request};
use super::time::{self, ClfCache};

/// What rlctl does with a variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    TimeLocal,
    TimeIso,
    Msec,
    Request,
    Method,
    RequestUri,
    Uri,
    Status,
    Addr,
    User,
    Xff,
    UserAgent,
    LimitReqStatus,
    Other,
}

fn role_of(name: &str) -> Role {
    match name {
        "time_local" => Role::TimeLocal,
        "time_iso8601" => Role::TimeIso,
        "msec" => Role::Msec,
        "request" => Role::Request,
        "request_method" => Role::Method,
        "request_uri" => Role::RequestUri,
        "uri" | "document_uri" => Role::Uri,
        "status" => Role::Status,
        "remote_addr" | "realip_remote_addr" => Role::Addr,
        "remote_user" => Role::User,
        "http_x_forwarded_for" => Role::Xff,
        "http_user_agent" => Role::UserAgent,
        "limit_req_status" => Role::LimitReqStatus,
        _ => Role::Other,
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Literal(Vec<u8>),
    Var(String),
}

/// Splits a format into literals and `$variables` (`${name}` also accepted).
fn tokenize(format: &str) -> Vec<Token> {
    let bytes = format.as_bytes();
    let mut tokens = Vec::new();
    let mut literal = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let is_name = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if bytes[i] == b'$' {
            let (start, end, skip) = if bytes.get(i + 1) == Some(&b'{') {
                match bytes[i + 2..].iter().position(|&b| b == b'}') {
                    Some(n) => (i + 2, i + 2 + n, 1),
                    None => (i + 1, i + 1, 0),
                }
            } else {
                let n = bytes[i + 1..].iter().take_while(|&&b| is_name(b)).count();
                (i + 1, i + 1 + n, 0)
            };
            if end > start {
                if !literal.is_empty() {
                    tokens.push(Token::Literal(std::mem::take(&mut literal)));
                }
                tokens.push(Token::Var(format[start..end].to_string()));
                i = end + skip;
                continue;
            }
        }
        literal.push(bytes[i]);
        i += 1;
    }
    if !literal.is_empty() {
        tokens.push(Token::Literal(literal));
    }
    tokens
}

/// How lines are matched against the format.
#[derive(Debug, Clone)]
enum Matcher {
    /// Literal-delimited scanning (the fast path).
    Scan(Vec<Step>),
    /// A regex with one group per variable, for formats with adjacent variables.
    Regex {
        regex: Regex,
        /// Reused by every line (no allocation per match).
        locations: CaptureLocations,
    },
}

/// One step of literal-delimited scanning.
#[derive(Debug, Clone)]
enum Step {
    /// The line must continue with these bytes.
    Literal(Vec<u8>),
    /// A variable's value: up to the next unescaped `until` (the literal that
    /// follows it), or to the end of the line when nothing follows.
    Var {
        /// `$time_local` holds one space of its own, skipped before searching.
        time_local: bool,
        until: Option<Box<Finder<'static>>>,
    },
}

/// The scanning steps of a format without adjacent variables.
fn steps(tokens: &[Token]) -> Vec<Step> {
    tokens
        .iter()
        .enumerate()
        .map(|(i, token)| match token {
            Token::Literal(lit) => Step::Literal(lit.clone()),
            Token::Var(name) => Step::Var {
                time_local: role_of(name) == Role::TimeLocal,
                until: match tokens.get(i + 1) {
                    Some(Token::Literal(next)) => Some(Box::new(Finder::new(next).into_owned())),
                    _ => None,
                },
            },
        })
        .collect()
}

/// A parser compiled from an nginx `log_format` string.
#[derive(Debug, Clone)]
pub struct LogFormatParser {
    format: String,
    matcher: Matcher,
    /// Role of each variable, in order of appearance.
    roles: Vec<Role>,
    /// For each `field:NAME` asked for, the index of its variable.
    extra: Vec<usize>,
    clock: ClfCache,
    /// Where each variable's value is in the current line (reused, no allocation per line).
    spans: Vec<(usize, usize)>,
}

impl LogFormatParser {
    /// Compiles `format`; `extra` names variables (without `$`) to capture for `field:NAME` keys.
    pub fn new(format: &str, extra: &[String]) -> Result<Self, IngestError> {
        let tokens = tokenize(format);
        let vars: Vec<&str> = tokens
            .iter()
            .filter_map(|t| {
                if let Token::Var(v) = t {
                    Some(v.as_str())
                } else {
                    None
                }
            })
            .collect();
        let roles: Vec<Role> = vars.iter().map(|v| role_of(v)).collect();
        if !roles
            .iter()
            .any(|r| matches!(r, Role::TimeLocal | Role::TimeIso | Role::Msec))
        {
            return Err(IngestError::Format(format!(
                "log_format `{format}` has no timestamp: it needs $time_local, $time_iso8601 or $msec"
            )));
        }
        let extra = extra
            .iter()
            .map(|name| {
                let name = name.trim_start_matches('$');
                vars.iter()
                    .position(|v| *v == name)
                    .ok_or_else(|| IngestError::UnknownField {
                        field: name.to_string(),
                        format: "log_format".into(),
                        known: vars
                            .iter()
                            .map(|v| format!("${v}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                    })
            })
            .collect::<Result<_, _>>()?;
        let adjacent = tokens
            .windows(2)
            .any(|w| matches!(w, [Token::Var(_), Token::Var(_)]));
        let matcher = if adjacent {
            let regex = regex_for(&tokens)?;
            let locations = regex.capture_locations();
            Matcher::Regex { regex, locations }
        } else {
            Matcher::Scan(steps(&tokens))
        };
        Ok(LogFormatParser {
            format: format.to_string(),
            matcher,
            spans: Vec::with_capacity(roles.len()),
            roles,
            extra,
            clock: ClfCache::default(),
        })
    }

    /// True when this format is matched with the regex fallback.
    pub fn uses_regex(&self) -> bool {
        matches!(self.matcher, Matcher::Regex { .. })
    }

    /// Finds where the value of every variable is in `line`, in order, into `spans`.
    fn find_values(&mut self, line: &[u8]) -> Result<(), SkipReason> {
        self.spans.clear();
        match &mut self.matcher {
            Matcher::Regex { regex, locations } => {
                regex
                    .captures_read(locations, line)
                    .ok_or(SkipReason::Malformed("line does not match the log_format"))?;
                self.spans
                    .extend((1..locations.len()).map(|g| locations.get(g).unwrap_or((0, 0))));
            }
            Matcher::Scan(steps) => scan(steps, line, &mut self.spans)?,
        }
        Ok(())
    }
}

fn scan(steps: &[Step], line: &[u8], spans: &mut Vec<(usize, usize)>) -> Result<(), SkipReason> {
    let mut pos = 0;
    for step in steps {
        match step {
            Step::Literal(lit) => {
                if !line[pos..].starts_with(lit) {
                    return Err(SkipReason::Malformed("line does not match the log_format"));
                }
                pos += lit.len();
            }
            Step::Var { time_local, until } => {
                let end = match until {
                    Some(finder) => {
                        let from = if *time_local {
                            memchr::memchr(b' ', &line[pos..]).map_or(pos, |s| pos + s + 1)
                        } else {
                            pos
                        };
                        from + find_delimiter(&line[from..], finder)
                            .ok_or(SkipReason::Malformed("line does not match the log_format"))?
                    }
                    None => line.len(),
                };
                spans.push((pos, end));
                pos = end;
            }
        }
    }
    Ok(())
}

/// The first occurrence of `delim` in `hay` that is not escaped by a backslash
/// (nginx `escape=json` writes `\"` inside quoted values).
fn find_delimiter(hay: &[u8], finder: &Finder<'_>) -> Option<usize> {
    let mut from = 0;
    while let Some(off) = finder.find(&hay[from..]) {
        let at = from + off;
        let backslashes = hay[..at].iter().rev().take_while(|&&b| b == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// What a variable's value can look like, so adjacent variables split where they must.
fn value_pattern(role: Role, last: bool) -> &'static str {
    match role {
        Role::Msec => r"[0-9]+(?:\.[0-9]+)?",
        Role::Status => r"[0-9]{3}|-",
        Role::TimeIso => r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9:]+)?",
        Role::TimeLocal => r"[0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9:]{8} [+-][0-9]{4}",
        Role::Addr => r"[0-9A-Fa-f:.]+|-",
        Role::Method => r"[A-Z]+|-",
        _ if last => ".*",
        _ => ".*?",
    }
}

fn regex_for(tokens: &[Token]) -> Result<Regex, IngestError> {
    let mut pattern = String::from("(?s-u)^");
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Literal(lit) => pattern.push_str(&regex::escape(&String::from_utf8_lossy(lit))),
            Token::Var(name) => {
                pattern.push('(');
                pattern.push_str(value_pattern(role_of(name), i + 1 == tokens.len()));
                pattern.push(')');
            }
        }
    }
    Regex::new(&pattern).map_err(|e| IngestError::Format(format!("cannot compile log_format: {e}")))
}

impl LineParser for LogFormatParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        self.find_values(line)?;
        let mut method_from_request = &b""[..];
        let mut path_from_request = &b""[..];
        let mut uri = None;
        for (&role, &(start, end)) in self.roles.iter().zip(&self.spans) {
            let value = &line[start..end];
            match role {
                Role::TimeLocal => {
                    record.time = Some(self.clock.parse(value).ok_or(SkipReason::BadTime)?)
                }
                Role::TimeIso => {
                    record.time = Some(time::parse_iso8601(value).ok_or(SkipReason::BadTime)?)
                }
                Role::Msec => {
                    record.time = Some(time::parse_epoch(value).ok_or(SkipReason::BadTime)?)
                }
                Role::Request => (method_from_request, path_from_request) = split_request(value),
                Role::Method => record.method = Cow::Borrowed(value),
                Role::RequestUri => record.path = Cow::Borrowed(value),
                Role::Uri => uri = Some(value),
                Role::Status => record.status = parse_status(value)?,
                Role::Addr => record.addr = Cow::Borrowed(value),
                Role::User => record.user = Cow::Borrowed(value),
                Role::Xff => record.xff = Cow::Borrowed(value),
                Role::UserAgent => record.user_agent = Cow::Borrowed(value),
                Role::LimitReqStatus => record.limit_req_status = Cow::Borrowed(value),
                Role::Other => {}
            }
        }
        if record.method.is_empty() {
            record.method = Cow::Borrowed(method_from_request);
        }
        if record.path.is_empty() {
            record.path = Cow::Borrowed(uri.unwrap_or(path_from_request));
        }
        for (slot, &var) in record.extra.iter_mut().zip(&self.extra) {
            let (start, end) = self.spans[var];
            *slot = Cow::Borrowed(&line[start..end]);
        }
        Ok(())
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        format!("log_format '{}'", self.format)
    }
}

#[cfg(test)]
mod tests;
