//! nginx/Apache `combined` and `common` lines, parsed by hand:
//!
//! `ADDR IDENT USER [TIME] "REQUEST" STATUS BYTES "REFERER" "USER_AGENT" [EXTRA…]`
//!
//! `common` stops after BYTES. Trailing fields are tolerated; a third quoted field
//! after the user agent is taken as `$http_x_forwarded_for` (nginx's stock `main`
//! format). The address part may hold a proxy list (`10.0.0.2, 10.0.0.1, 127.0.0.1`
//! or `"a, b" c`), as some setups log `$http_x_forwarded_for` there.

use std::borrow::Cow;

use memchr::memchr;

use super::IngestError;
use super::arrival;
use super::log_escapes::LogEscape;
use super::record::{LineParser, Record, SkipReason, parse_status, space_or_end, split_request};
use super::time::ClfCache;
use crate::events::Protocol;
use inner_quotes::{request_with_inner_quotes, status_follows};
use tokens::{address_ident_user, host_of_vhost, quoted, time_bracket};

mod glue;
mod inner_quotes;
mod marks;
mod plain;
mod tokens;

/// Fields of a combined line that `--key field:NAME` can name (nginx variable names).
pub const FIELD_NAMES: &[&str] = &[
    "remote_addr",
    "remote_ident",
    "remote_user",
    "time_local",
    "request",
    "request_method",
    "request_uri",
    "status",
    "body_bytes_sent",
    "http_referer",
    "http_user_agent",
    "http_x_forwarded_for",
    "vhost",
    "request_count",
    "router_name",
    "server_url",
    "duration_ms",
];

/// The parser for `combined` and `common`.
#[derive(Debug, Clone)]
pub struct CombinedParser {
    extra: Vec<usize>,
    clock: ClfCache,
    /// Whether anything reads the quoted fields after BYTES (referer, user
    /// agent, X-Forwarded-For); when nothing does, they are not scanned.
    tail: bool,
    /// Whether BYTES is read (for the tail, or as a `field:` key).
    bytes: bool,
    /// Apache `vhost_combined`: the line starts with `%v:%p` before the address.
    vhost: bool,
    /// Traefik's common log format: `COUNT "ROUTER" "URL" Nms` after the user agent.
    traefik: bool,
    /// With `traefik`, stamp events with the end (start + duration) instead of the start.
    logged_time: bool,
    /// Where a second entry starts in the line last parsed, when one was
    /// glued onto it (see [`glue`]): the entry parsed was the text before.
    glued: Option<usize>,
}

/// The pieces of one combined line, borrowed from it.
#[derive(Debug, Default)]
struct Split<'a> {
    fields: [&'a [u8]; 17],
    /// What follows STATUS (BYTES and the quoted fields).
    after_status: &'a [u8],
    /// The request's method, target and version when already found (by the
    /// shortcut).
    request: Option<(&'a [u8], &'a [u8], Protocol)>,
}

impl<'a> Split<'a> {
    /// The request's method, target and version ([`split_request`] of the
    /// request).
    fn request_parts(&self) -> (&'a [u8], &'a [u8], Protocol) {
        self.request
            .unwrap_or_else(|| split_request(self.fields[4]))
    }
}

/// Index of BYTES in [`FIELD_NAMES`]; the quoted fields come after it.
const BYTES_FIELD: usize = 8;
/// Index of `vhost` in [`FIELD_NAMES`] (empty unless `vhost_combined`).
const VHOST_FIELD: usize = 12;
/// Index of Traefik's first trailing field in [`FIELD_NAMES`].
const TRAEFIK_FIELDS: usize = 13;

impl CombinedParser {
    /// A parser that also captures the named `extra` fields (names from [`FIELD_NAMES`]).
    pub fn new(extra: &[String]) -> Result<Self, IngestError> {
        let extra = extra
            .iter()
            .map(|name| {
                FIELD_NAMES.iter().position(|f| f == name).ok_or_else(|| {
                    IngestError::UnknownField {
                        field: name.clone(),
                        format: "combined".into(),
                        known: FIELD_NAMES.join(", "),
                    }
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(CombinedParser {
            extra,
            clock: ClfCache::default(),
            tail: true,
            bytes: true,
            vhost: false,
            traefik: false,
            logged_time: false,
            glued: None,
        })
    }

    /// Reads Traefik's common log format, which adds `COUNT "ROUTER" "URL"
    /// DURATIONms` after the user agent (`CommonLogFormatter` in traefik's
    /// `pkg/middlewares/accesslog/logger_formatters.go`); the time is the
    /// request's start (`StartUTC`), the end with `logged_time`.
    pub fn with_traefik(mut self, logged_time: bool) -> Self {
        self.traefik = true;
        self.tail = true;
        self.bytes = true;
        self.logged_time = logged_time;
        self
    }

    /// Reads Apache `vhost_combined` lines (`%v:%p %h %l %u %t "%r" %>s %O
    /// "%{Referer}i" "%{User-Agent}i"`, from the stock `apache2.conf`): the first
    /// token is the virtual host and port, captured as the field `vhost`
    /// (without the port).
    pub fn with_vhost(mut self) -> Self {
        self.vhost = true;
        self
    }

    /// Leaves `$http_x_forwarded_for` and the user agent empty when `wanted` is
    /// false (no client key reads them), so lines are not scanned past BYTES
    /// unless an extra field needs it.
    pub fn with_xff(mut self, wanted: bool) -> Self {
        self.tail = self.traefik || wanted || self.extra.iter().any(|&f| f > BYTES_FIELD);
        self.bytes = self.tail || self.extra.contains(&BYTES_FIELD);
        self
    }

    /// Splits the line's first entry into `s`, and finds where a second one
    /// glued onto it starts (never in a line the shortcut reads).
    fn split<'a>(
        &self,
        line: &'a [u8],
        s: &mut Split<'a>,
        glued: &mut Option<usize>,
    ) -> Result<(), SkipReason> {
        if !(self.vhost || self.traefik) && plain::split(line, self.wanted(), s) {
            return Ok(());
        }
        // A `vhost_combined` entry starts with its virtual host, which the
        // head of a glued entry is not told by.
        let open = time_bracket(line);
        if !self.vhost {
            *glued = open.and_then(|open| glue::second_entry(line, open));
        }
        self.split_any(&line[..glued.unwrap_or(line.len())], open, s)?;
        self.finish(s)
    }

    fn wanted(&self) -> plain::Wanted {
        plain::Wanted {
            bytes: self.bytes,
            tail: self.tail,
        }
    }

    /// The fields up to STATUS of any line, whatever its oddities (`open`:
    /// where its `[TIME]` opens, [`time_bracket`]).
    fn split_any<'a>(
        &self,
        line: &'a [u8],
        open: Option<usize>,
        s: &mut Split<'a>,
    ) -> Result<(), SkipReason> {
        let open = open.ok_or(SkipReason::Malformed("no [time] field"))?;
        let [mut addr, ident, user] = address_ident_user(line[..open].trim_ascii_end())
            .ok_or(SkipReason::Malformed("expected `ADDR IDENT USER [TIME]`"))?;
        if self.vhost {
            const NO_VHOST: SkipReason =
                SkipReason::Malformed("expected `VHOST:PORT ADDR IDENT USER [TIME]`");
            let end = memchr(b' ', addr).ok_or(NO_VHOST)?;
            s.fields[VHOST_FIELD] = host_of_vhost(&addr[..end]).ok_or(NO_VHOST)?;
            addr = addr[end..].trim_ascii_start();
        }
        if addr.is_empty() {
            return Err(SkipReason::Malformed("expected `ADDR IDENT USER [TIME]`"));
        }
        let close = open
            + memchr(b']', &line[open..]).ok_or(SkipReason::Malformed("unterminated [time]"))?;
        let rest = line[close + 1..].trim_ascii_start();
        let (mut request, mut after_request) =
            quoted(rest).ok_or(SkipReason::Malformed("no quoted \"request\" after [time]"))?;
        if !status_follows(after_request) {
            // Unescaped quotes inside the request (rare): find its end from the other side.
            if let Some(found) = request_with_inner_quotes(rest)? {
                (request, after_request) = found;
            }
        }
        // STATUS and BYTES: the first two space-separated tokens.
        let rest = after_request.trim_ascii_start();
        let status_end = space_or_end(rest);
        if status_end == 0 {
            return Err(SkipReason::Malformed("no status after the request"));
        }
        s.fields[0] = addr;
        s.fields[1] = ident;
        s.fields[2] = user;
        s.fields[3] = &line[open + 1..close];
        s.fields[4] = request;
        s.fields[7] = &rest[..status_end];
        s.after_status = &rest[status_end..];
        Ok(())
    }

    /// Reads BYTES and, when wanted, the quoted fields after it (from
    /// `s.after_status`).
    fn finish(&self, s: &mut Split<'_>) -> Result<(), SkipReason> {
        if !self.bytes {
            return Ok(());
        }
        let after_status = s.after_status;
        let bytes_at = after_status
            .iter()
            .position(|&b| b != b' ')
            .unwrap_or(after_status.len());
        let after_spaces = &after_status[bytes_at..];
        let bytes = &after_spaces[..space_or_end(after_spaces)];
        s.fields[BYTES_FIELD] = bytes;
        if self.tail && !bytes.is_empty() {
            // Quoted fields after BYTES: referer, user agent, X-Forwarded-For.
            let mut tail = &after_spaces[bytes.len()..];
            for slot in 9..12 {
                match quoted(tail.trim_ascii_start()) {
                    Some((value, next)) => {
                        s.fields[slot] = value;
                        tail = next;
                    }
                    None => break,
                }
            }
            if self.traefik {
                traefik_trailer(tail, &mut s.fields[TRAEFIK_FIELDS..])?;
            }
        } else if self.traefik {
            return Err(NO_TRAEFIK_TRAILER);
        }
        Ok(())
    }
}

const NO_TRAEFIK_TRAILER: SkipReason = SkipReason::Malformed(
    "expected Traefik's `COUNT \"ROUTER\" \"URL\" DURATIONms` after the user agent",
);

/// Traefik's fields after the user agent, into `fields` (count, router, URL,
/// duration in milliseconds).
fn traefik_trailer<'a>(tail: &'a [u8], fields: &mut [&'a [u8]]) -> Result<(), SkipReason> {
    let tail = tail.trim_ascii_start();
    let count = &tail[..space_or_end(tail)];
    let (router, rest) =
        quoted(tail[count.len()..].trim_ascii_start()).ok_or(NO_TRAEFIK_TRAILER)?;
    let (url, rest) = quoted(rest.trim_ascii_start()).ok_or(NO_TRAEFIK_TRAILER)?;
    let duration = rest
        .trim_ascii()
        .strip_suffix(b"ms")
        .ok_or(NO_TRAEFIK_TRAILER)?;
    let digits = |t: &[u8]| !t.is_empty() && t.iter().all(u8::is_ascii_digit);
    if !(digits(count) || count == b"-") || !digits(duration) {
        return Err(NO_TRAEFIK_TRAILER);
    }
    fields[..4].copy_from_slice(&[count, router, url, duration]);
    Ok(())
}

impl LineParser for CombinedParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        let mut s = Split::default();
        let mut glued = None;
        let split = self.split(line, &mut s, &mut glued);
        self.glued = glued;
        split?;
        let f = &s.fields;
        let time = self.clock.parse(f[3]).ok_or(SkipReason::BadTime)?;
        record.time = Some(if self.logged_time {
            arrival::millis_text(f[TRAEFIK_FIELDS + 3])
                .map_or(time, |duration| arrival::end_from_arrival(time, duration))
        } else {
            time
        });
        let (method, path, protocol) = s.request_parts();
        record.protocol = protocol;
        record.addr = Cow::Borrowed(f[0]);
        record.user = Cow::Borrowed(f[2]);
        record.method = Cow::Borrowed(method);
        // nginx and Apache escape bytes of the request line, with a
        // backslash, which a line the shortcut read has none of; Traefik
        // writes Go's escaped request URI as it is.
        let read_by_shortcut = s.request.is_some();
        record.path = match self.traefik || read_by_shortcut {
            true => Cow::Borrowed(path),
            false => LogEscape::Default.unescaped(path),
        };
        record.status = parse_status(f[7])?;
        record.xff = Cow::Borrowed(f[11]);
        record.user_agent = Cow::Borrowed(f[10]);
        for (slot, &field) in record.extra.iter_mut().zip(&self.extra) {
            *slot = Cow::Borrowed(match field {
                5 => method,
                6 => path,
                i => f[i],
            });
        }
        Ok(())
    }

    fn glued(&mut self) -> Option<usize> {
        self.glued.take()
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        if self.vhost {
            "vhost_combined"
        } else {
            "combined"
        }
        .into()
    }
}

#[cfg(test)]
mod tests;
