//! What a line parser extracts from one line, and why a line can be skipped.
//!
//! Parsers borrow from the line where they can (`Cow::Borrowed`), so the common
//! formats allocate nothing per line. Turning a record into a client key and an
//! endpoint is not the parser's job (see `key` and `endpoint`).

use std::borrow::Cow;

pub use skip::SkipReason;

use super::time::Stamp;
use crate::events::Protocol;

/// A field's raw bytes (log lines are not guaranteed to be UTF-8).
pub type Bytes<'a> = Cow<'a, [u8]>;

/// The fields rlctl understands, from any log format. Empty means "not logged".
#[derive(Debug, Default, Clone)]
pub struct Record<'a> {
    pub time: Option<Stamp>,
    /// The connecting address (`$remote_addr`); may be a list when a proxy chain was logged there.
    pub addr: Bytes<'a>,
    pub user: Bytes<'a>,
    /// `$http_x_forwarded_for`.
    pub xff: Bytes<'a>,
    /// `$http_user_agent`; parsers may leave it empty when no key reads it.
    pub user_agent: Bytes<'a>,
    pub method: Bytes<'a>,
    /// The line has no method field at all (a JSON object without one, a
    /// `log_format` without `$request` or `$request_method`): its endpoint
    /// is named by the path alone. An empty or malformed method that was
    /// logged is no such thing.
    pub no_method: bool,
    /// Request target with any query string (`$request_uri`).
    pub path: Bytes<'a>,
    /// The HTTP version, from the request line or a field of its own.
    pub protocol: Protocol,
    pub status: Option<u16>,
    /// nginx `$limit_req_status`.
    pub limit_req_status: Bytes<'a>,
    /// Values of the `field:NAME` fields the key asks for, in the order asked.
    pub extra: Vec<Bytes<'a>>,
}

impl Record<'_> {
    /// The same record owning every field (for a line parsed from a buffer
    /// that does not outlive the call).
    pub fn into_owned(self) -> Record<'static> {
        let owned = |b: Bytes<'_>| Cow::Owned(b.into_owned());
        Record {
            time: self.time,
            addr: owned(self.addr),
            user: owned(self.user),
            xff: owned(self.xff),
            user_agent: owned(self.user_agent),
            method: owned(self.method),
            no_method: self.no_method,
            path: owned(self.path),
            protocol: self.protocol,
            status: self.status,
            limit_req_status: owned(self.limit_req_status),
            extra: self.extra.into_iter().map(owned).collect(),
        }
    }

    /// Resets every field, keeping the `extra` allocation.
    pub fn clear(&mut self, extra_fields: usize) {
        const EMPTY: Bytes<'static> = Cow::Borrowed(&[]);
        // Field by field, in place (naming every field, so a new one is not forgotten).
        let Record {
            time,
            addr,
            user,
            xff,
            user_agent,
            method,
            no_method,
            path,
            protocol,
            status,
            limit_req_status,
            extra,
        } = self;
        (*time, *status, *no_method, *protocol) = (None, None, false, Protocol::Unknown);
        for field in [addr, user, xff, user_agent, method, path, limit_req_status] {
            *field = EMPTY;
        }
        if extra.len() == extra_fields {
            // The usual case (the same fields every line): no call to resize.
            extra.iter_mut().for_each(|field| *field = EMPTY);
        } else {
            extra.clear();
            extra.resize(extra_fields, EMPTY);
        }
    }
}

/// Splits an nginx `$request` (`GET /path HTTP/1.1`) into method, target and
/// HTTP version. A request line that is empty or `-` yields empty fields. Spaces between
/// the method and the target are one separator, as nginx reads them (its
/// request-line parser skips them before the URI) and logs them as sent.
/// The target is what lies before the protocol ([`target_and_protocol`]),
/// spaces and all.
pub fn split_request(request: &[u8]) -> (&[u8], &[u8], Protocol) {
    let request = request.trim_ascii();
    if request == b"-" {
        return (b"", b"", Protocol::Unknown);
    }
    match Some(space_or_end(request)).filter(|&i| i < request.len()) {
        None => (request, b"", Protocol::Unknown),
        Some(space) => {
            let (target, protocol) = target_and_protocol(skip_spaces(&request[space + 1..]));
            (&request[..space], target, protocol)
        }
    }
}

/// The target and HTTP version of a request line from what follows its
/// method (and the spaces after it), `rest`: the target up to the spaces
/// before a last word that is a protocol (`HTTP/1.1`), else all of `rest`,
/// which is then an HTTP/0.9 request (nginx and Apache log one so), or one
/// of a method alone when `rest` is empty. A client may send a space in
/// the target (`GET /a b HTTP/1.1`); servers log the line as sent, and
/// nginx (since 1.21.1) and HAProxy answer such a request 400 themselves,
/// which the gateways' readings of the path see only when the target is
/// kept whole. `rest` starts with no space.
pub fn target_and_protocol(rest: &[u8]) -> (&[u8], Protocol) {
    match memchr::memrchr(b' ', rest) {
        Some(space) if rest[space + 1..].starts_with(b"HTTP/") => {
            let target = &rest[..space];
            let spaces = target.iter().rev().take_while(|&&b| b == b' ').count();
            let version = Protocol::from_request_line(&rest[space + 1..]);
            (&target[..target.len() - spaces], version)
        }
        _ if rest.is_empty() => (rest, Protocol::Unknown),
        _ => (rest, Protocol::Http09),
    }
}

/// `text` after the spaces it starts with.
pub fn skip_spaces(text: &[u8]) -> &[u8] {
    let spaces = text.iter().take_while(|&&b| b == b' ').count();
    &text[spaces..]
}

/// Where the first space of `text` is, or its length. The first 8 bytes (where
/// short fields such as a method or a status end) are tested at once, without a
/// byte loop whose exit the processor would mispredict.
pub fn space_or_end(text: &[u8]) -> usize {
    let Some(head) = text.first_chunk::<8>() else {
        return text.iter().position(|&b| b == b' ').unwrap_or(text.len());
    };
    // The lowest byte that is a space has the lowest bit set here (bits above
    // a space may be set spuriously; they are never the lowest).
    let x = u64::from_le_bytes(*head) ^ 0x2020_2020_2020_2020;
    let spaces = x.wrapping_sub(0x0101_0101_0101_0101) & !x & 0x8080_8080_8080_8080;
    if spaces != 0 {
        return (spaces.trailing_zeros() / 8) as usize;
    }
    8 + memchr::memchr(b' ', &text[8..]).unwrap_or(text.len() - 8)
}

/// Parses `$status`. Every logged request counts, whatever its status: a
/// number of one to three digits is kept as logged (`444`, `499`, `999`, `099`
/// → 99), and `0`/`000` (Caddy, Traefik: no status written), `-`, an empty
/// field and negative numbers (HAProxy `-1`) mean "unknown" (`None`). Only a
/// field that is no number at all is refused.
pub fn parse_status(text: &[u8]) -> Result<Option<u16>, SkipReason> {
    match text {
        [a, b, c]
            if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() && *a != b'0' =>
        {
            Ok(Some(
                u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0'),
            ))
        }
        b"" | b"-" => Ok(None),
        _ => parse_odd_status(text),
    }
}

/// The statuses [`parse_status`] does not meet on its fast path.
#[cold]
fn parse_odd_status(text: &[u8]) -> Result<Option<u16>, SkipReason> {
    let (negative, digits) = match text.strip_prefix(b"-") {
        Some(digits) => (true, digits),
        None => (false, text),
    };
    if digits.is_empty() || digits.len() > 3 || !digits.iter().all(u8::is_ascii_digit) {
        return Err(SkipReason::BadStatus);
    }
    let value = digits
        .iter()
        .fold(0u16, |acc, &d| acc * 10 + u16::from(d - b'0'));
    status_number(if negative {
        -i64::from(value)
    } else {
        i64::from(value)
    })
}

/// A numeric status (JSON logs write numbers): 1 to 999 as logged, zero or
/// negative as unknown, larger numbers refused.
pub fn status_number(n: i64) -> Result<Option<u16>, SkipReason> {
    match n {
        ..=0 => Ok(None),
        1..=999 => Ok(Some(n as u16)),
        _ => Err(SkipReason::BadStatus),
    }
}

/// Parses `text` with `parser`: a line's first entry, or one glued after
/// another when `glued_on` ([`LineParser::parse_glued`]).
pub fn parse_with<'a>(
    parser: &mut dyn LineParser,
    glued_on: bool,
    text: &'a [u8],
    record: &mut Record<'a>,
) -> Result<(), SkipReason> {
    match glued_on {
        true => parser.parse_glued(text, record),
        false => parser.parse(text, record),
    }
}

/// A parser for one log format family. Parsers may keep small caches, so each
/// worker thread parses with its own [`LineParser::fork`].
pub trait LineParser: Send + Sync {
    /// Fills `record` from `line` (no trailing newline), or says why the line is skipped.
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason>;

    /// Where a second entry starts in the line last given to [`Self::parse`],
    /// when the line held two (one glued onto the other, a newline missing
    /// between them); `parse` read the text before it. `None` by default.
    fn glued(&mut self) -> Option<usize> {
        None
    }

    /// Parses the entry [`Self::glued`] found: `line` is the rest of the line
    /// last given, from where that entry starts. What `parse` does by
    /// default; a parser that keeps state per line keeps it here.
    fn parse_glued<'a>(
        &mut self,
        line: &'a [u8],
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        self.parse(line, record)
    }

    /// Has the parser read a header that names other columns (a W3C
    /// `#Fields:`) as the header of the lines after it, instead of skipping
    /// it as [`SkipReason::ColumnsChanged`]: for a file read in order, line
    /// after line, as `watch` follows one. Nothing by default.
    fn follow_headers(&mut self) {}

    /// A fresh parser of the same configuration, for another thread.
    fn fork(&self) -> Box<dyn LineParser>;

    /// A short name for messages ("combined", "json", "log_format").
    fn name(&self) -> String;

    /// Whether a line's record depends on the lines before it (W3C
    /// `#Date:` directives dating a `time` column): the input is then parsed
    /// by one parser, chunk after chunk, in order.
    fn in_order(&self) -> bool {
        false
    }

    /// Which time events get when it is not the time as logged (for messages,
    /// e.g. "arrival: the logged time minus $request_time").
    fn time_used(&self) -> Option<&'static str> {
        None
    }
}

mod skip;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_empties_every_field_and_sizes_the_extra_fields() {
        let owned = || Cow::Owned(b"x".to_vec());
        let mut r = Record {
            time: Some(Stamp {
                ms: 1,
                subsecond: true,
            }),
            addr: owned(),
            user: owned(),
            xff: owned(),
            user_agent: owned(),
            method: owned(),
            no_method: true,
            path: owned(),
            protocol: Protocol::Http10,
            status: Some(200),
            limit_req_status: owned(),
            extra: vec![owned(), owned()],
        };
        for n in [2, 2, 3, 0, 1] {
            r.extra.iter_mut().for_each(|f| *f = owned());
            r.clear(n);
            assert_eq!((r.time, r.status, r.extra.len()), (None, None, n));
            assert!(!r.no_method && r.protocol == Protocol::Unknown);
            (r.no_method, r.protocol) = (true, Protocol::Http10);
            let fields = [
                &r.addr,
                &r.user,
                &r.xff,
                &r.user_agent,
                &r.method,
                &r.path,
                &r.limit_req_status,
            ];
            assert!(fields.into_iter().chain(&r.extra).all(|f| f.is_empty()));
        }
    }

    #[test]
    fn request_lines_split() {
        use Protocol::*;
        for (line, method, target, protocol) in [
            (&b"GET /a?b HTTP/1.1"[..], &b"GET"[..], &b"/a?b"[..], Http11),
            (b"GET /a HTTP/1.0", b"GET", b"/a", Http10),
            (b"GET / HTTP/2.0", b"GET", b"/", Http2),
            // No version: an HTTP/0.9 request, as nginx and Apache log one.
            (b"GET /", b"GET", b"/", Http09),
            (b"-", b"", b"", Unknown),
            // Found by review: the extra space made the target empty (`GET /`);
            // nginx skips spaces before the URI and logs them as sent.
            (b"GET  /x", b"GET", b"/x", Http09),
            (b"GET   /x  HTTP/1.1", b"GET", b"/x", Http11),
            (b"GET", b"GET", b"", Unknown),
            (b"", b"", b"", Unknown),
            // A space in the target is the target's, as the line was sent.
            (b"GET /a b  HTTP/1.1", b"GET", b"/a b", Http11),
            (b"GET /a b", b"GET", b"/a b", Http09),
            (b"GET /a HTTP/1.1 x", b"GET", b"/a HTTP/1.1 x", Http09),
            (b"GET HTTP/1.1", b"GET", b"HTTP/1.1", Http09),
            (b"GET /a HTTP/1.2", b"GET", b"/a", Http1Minor),
            (b"GET /a HTTP/1.10", b"GET", b"/a", Http1LongMinor),
            (b"GET /a HTTP/0.9", b"GET", b"/a", OtherMajor),
            (b"GET /a HTTP/1", b"GET", b"/a", Malformed),
            (b"GET /a HTTP/2", b"GET", b"/a", Malformed),
            (b"GET /a HTTP/3", b"GET", b"/a", Malformed),
            (b"GET /a HTTP/1.x", b"GET", b"/a", Malformed),
            (b"GET /a http/1.1", b"GET", b"/a http/1.1", Http09),
        ] {
            assert_eq!(split_request(line), (method, target, protocol), "{line:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn space_or_end_finds_the_first_space(text in proptest::collection::vec(
            proptest::sample::select(vec![b' ', b'a', b'!', 0x1f, 0x20 ^ 0x80, 0, 0xff]), 0..20)
        ) {
            let expected = text.iter().position(|&b| b == b' ').unwrap_or(text.len());
            proptest::prop_assert_eq!(space_or_end(&text), expected);
        }
    }

    #[test]
    fn statuses() {
        assert_eq!(parse_status(b"200"), Ok(Some(200)));
        assert_eq!(parse_status(b"-"), Ok(None));
        assert_eq!(parse_status(b"20"), Ok(Some(20)));
        assert_eq!(parse_status(b"099"), Ok(Some(99)));
        for unknown in [&b"0"[..], b"000", b"-", b"", b"-1"] {
            assert_eq!(parse_status(unknown), Ok(None));
        }
        for kept in [444, 499, 999, 600, 101] {
            assert_eq!(parse_status(kept.to_string().as_bytes()), Ok(Some(kept)));
        }
        for bad in [&b"abc"[..], b"2000", b"20x", b"--1", b"- "] {
            assert_eq!(parse_status(bad), Err(SkipReason::BadStatus));
        }
    }
}
