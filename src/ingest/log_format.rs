//! nginx `log_format` strings compiled to parsers.
//!
//! A format such as `'$msec $remote_addr "$request" $status'` becomes a list of
//! literals and variables. Each variable's value runs up to the next occurrence of
//! the literal that follows it, so matching is a handful of `memmem` searches per
//! line. Two variables with nothing between them (`$a$b`) cannot be split that way;
//! such formats fall back to a regular expression with lazy groups.

mod matcher;

use std::borrow::Cow;

use matcher::{Matcher, regex_for, scan, steps};

use super::IngestError;
use super::arrival::{self, TimeOf};
use super::key::first_address;
use super::log_escapes::LogEscape;
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
    /// nginx `$server_protocol`, Envoy `%PROTOCOL%` (written `$protocol`).
    Protocol,
    /// An ISO 8601 start time (Envoy `%START_TIME%`, written `$start_time`).
    StartIso,
    /// nginx `$request_time`: seconds from the first byte read to the log write.
    RequestTime,
    /// Envoy `%DURATION%` (written `$duration`): milliseconds from start to the last byte.
    DurationMs,
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
        "server_protocol" => Role::Protocol,
        "request_time" => Role::RequestTime,
        // Not nginx variables: the names the Envoy and Istio sources give
        // their command operators (see `formats`).
        "start_time" => Role::StartIso,
        "duration" => Role::DurationMs,
        "downstream_remote_address" => Role::Addr,
        "protocol" => Role::Protocol,
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
    /// How the event time is found from the time, start and duration variables.
    timing: Timing,
    /// Take the client address from the first X-Forwarded-For address when
    /// the format logs no address (Envoy's default format).
    addr_from_xff: bool,
    /// The format has neither `$request` nor `$request_method`: endpoints
    /// are named by the path alone ([`Record::no_method`]).
    no_method: bool,
    /// How the server escaped bytes of the target (nginx's `escape=`).
    escape: LogEscape,
}

/// Which time an event gets, from the variables the format has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timing {
    /// The time variable as it is (no start, no duration; or `--time-of logged`
    /// on an end time).
    AsLogged,
    /// End time minus `$request_time` (nginx, arrival asked).
    EndMinusRequestTime,
    /// Start time as it is (Envoy, arrival asked).
    Start,
    /// Start time plus `$duration` (Envoy, `--time-of logged`).
    StartPlusDuration,
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
        let has = |role| roles.contains(&role);
        let end = roles
            .iter()
            .any(|r| matches!(r, Role::TimeLocal | Role::TimeIso | Role::Msec));
        if !end && !has(Role::StartIso) {
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
        let timing = match (has(Role::StartIso), end) {
            (true, _) => Timing::Start,
            (false, _) if has(Role::RequestTime) => Timing::EndMinusRequestTime,
            _ => Timing::AsLogged,
        };
        Ok(LogFormatParser {
            format: format.to_string(),
            matcher,
            spans: Vec::with_capacity(roles.len()),
            no_method: !roles
                .iter()
                .any(|r| matches!(r, Role::Request | Role::Method)),
            escape: LogEscape::Default,
            roles,
            extra,
            clock: ClfCache::default(),
            timing,
            addr_from_xff: false,
        })
    }

    /// Stamps events with the time asked for (`--time-of`): by default the
    /// arrival, where the format tells it (`$msec`/`$time_local`/`$time_iso8601`
    /// minus `$request_time`, or `$start_time`).
    pub fn with_time_of(mut self, time_of: TimeOf) -> Self {
        self.timing = match (self.timing, time_of) {
            (Timing::EndMinusRequestTime, TimeOf::Logged) => Timing::AsLogged,
            (Timing::Start, TimeOf::Logged) if self.roles.contains(&Role::DurationMs) => {
                Timing::StartPlusDuration
            }
            (timing, _) => timing,
        };
        self
    }

    /// Takes the client address from the first X-Forwarded-For address when a
    /// line has none (for formats that log no client address).
    pub fn with_addr_from_xff(mut self) -> Self {
        self.addr_from_xff = true;
        self
    }

    /// Reads the target back from `escape` (nginx's `escape=json` or
    /// `none`; Envoy's formats escape nothing) instead of nginx's default.
    pub fn with_escape(mut self, escape: LogEscape) -> Self {
        self.escape = escape;
        self
    }

    /// Which time the events get, for messages: `None` when the time is read
    /// as logged.
    pub fn time_used(&self) -> Option<&'static str> {
        match self.timing {
            Timing::AsLogged => None,
            Timing::EndMinusRequestTime => Some("arrival: the logged time minus $request_time"),
            Timing::Start => Some("arrival: the start time"),
            Timing::StartPlusDuration => Some("logged: the start time plus the duration"),
        }
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

impl LineParser for LogFormatParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        self.find_values(line)?;
        let mut method_from_request = &b""[..];
        let mut path_from_request = &b""[..];
        let mut uri = None;
        let (mut start, mut duration_ms) = (None, None);
        for (&role, &(from, to)) in self.roles.iter().zip(&self.spans) {
            let value = &line[from..to];
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
                Role::Request => {
                    let protocol;
                    (method_from_request, path_from_request, protocol) = split_request(value);
                    record.protocol = protocol;
                }
                Role::Method => record.method = Cow::Borrowed(value),
                Role::RequestUri => record.path = Cow::Borrowed(value),
                Role::Uri => uri = Some(value),
                Role::Status => record.status = parse_status(value)?,
                Role::Addr => record.addr = Cow::Borrowed(value),
                Role::User => record.user = Cow::Borrowed(value),
                Role::Xff => record.xff = Cow::Borrowed(value),
                Role::UserAgent => record.user_agent = Cow::Borrowed(value),
                Role::LimitReqStatus => record.limit_req_status = Cow::Borrowed(value),
                Role::Protocol => record.protocol.read_field(value),
                Role::StartIso => {
                    start = Some(time::parse_iso8601(value).ok_or(SkipReason::BadTime)?)
                }
                Role::RequestTime if self.timing == Timing::EndMinusRequestTime => {
                    duration_ms = arrival::seconds_text_ms(value)
                }
                Role::DurationMs if self.timing == Timing::StartPlusDuration => {
                    duration_ms = arrival::millis_text(value)
                }
                Role::RequestTime | Role::DurationMs | Role::Other => {}
            }
        }
        match self.timing {
            Timing::AsLogged => record.time = record.time.or(start),
            Timing::Start => record.time = start,
            Timing::EndMinusRequestTime => {
                record.time = record
                    .time
                    .map(|end| duration_ms.map_or(end, |d| arrival::arrival_from_end(end, d)))
            }
            Timing::StartPlusDuration => {
                record.time =
                    start.map(|s| duration_ms.map_or(s, |d| arrival::end_from_arrival(s, d)))
            }
        }
        if self.addr_from_xff
            && record.addr.is_empty()
            && let Some(first) = first_address(&record.xff)
        {
            let at = first.as_ptr() as usize - record.xff.as_ptr() as usize;
            record.addr = match &record.xff {
                Cow::Borrowed(xff) => Cow::Borrowed(&xff[at..at + first.len()]),
                Cow::Owned(_) => Cow::Owned(first.as_bytes().to_vec()),
            };
        }
        if record.method.is_empty() {
            record.method = Cow::Borrowed(method_from_request);
        }
        record.no_method = self.no_method;
        if record.path.is_empty() {
            record.path = Cow::Borrowed(uri.unwrap_or(path_from_request));
        }
        if let Cow::Borrowed(path) = record.path {
            record.path = self.escape.unescaped(path);
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

    fn time_used(&self) -> Option<&'static str> {
        LogFormatParser::time_used(self)
    }
}

#[cfg(test)]
mod tests;
