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
use super::record::{LineParser, Record, SkipReason, parse_status, space_or_end, split_request};
use super::time::ClfCache;

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
}

/// The pieces of one combined line, borrowed from it.
#[derive(Debug, Default)]
struct Split<'a> {
    fields: [&'a [u8]; 12],
}

/// Index of BYTES in [`FIELD_NAMES`]; the quoted fields come after it.
const BYTES_FIELD: usize = 8;

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
        })
    }

    /// Leaves `$http_x_forwarded_for` and the user agent empty when `wanted` is
    /// false (no client key reads them), so lines are not scanned past BYTES
    /// unless an extra field needs it.
    pub fn with_xff(mut self, wanted: bool) -> Self {
        self.tail = wanted || self.extra.iter().any(|&f| f > BYTES_FIELD);
        self.bytes = self.tail || self.extra.contains(&BYTES_FIELD);
        self
    }

    fn split<'a>(&self, line: &'a [u8]) -> Result<Split<'a>, SkipReason> {
        let mut s = Split::default();
        let open = memchr(b'[', line).ok_or(SkipReason::Malformed("no [time] field"))?;
        let prefix = line[..open].trim_ascii_end();
        let (user_at, user) =
            last_token(prefix).ok_or(SkipReason::Malformed("expected `ADDR IDENT USER [TIME]`"))?;
        let (ident_at, ident) = last_token(prefix[..user_at].trim_ascii_end())
            .ok_or(SkipReason::Malformed("expected `ADDR IDENT USER [TIME]`"))?;
        let addr = prefix[..ident_at].trim_ascii();
        if addr.is_empty() {
            return Err(SkipReason::Malformed("expected `ADDR IDENT USER [TIME]`"));
        }
        let close = open
            + memchr(b']', &line[open..]).ok_or(SkipReason::Malformed("unterminated [time]"))?;
        let rest = line[close + 1..].trim_ascii_start();
        let (request, rest) =
            quoted(rest).ok_or(SkipReason::Malformed("no quoted \"request\" after [time]"))?;
        // STATUS and BYTES: the first two space-separated tokens.
        let rest = rest.trim_ascii_start();
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
        if !self.bytes {
            return Ok(s);
        }
        let after_status = &rest[status_end..];
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
        }
        Ok(s)
    }
}

/// The last space-separated token of `text` and where it starts.
fn last_token(text: &[u8]) -> Option<(usize, &[u8])> {
    if text.is_empty() {
        return None;
    }
    let start = text.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1);
    (start > 0).then(|| (start, &text[start..]))
}

/// A `"…"` field at the start of `text` (backslash escapes honoured) and the rest after it.
fn quoted(text: &[u8]) -> Option<(&[u8], &[u8])> {
    let body = text.strip_prefix(b"\"")?;
    let mut i = 0;
    while let Some(off) = memchr::memchr2(b'"', b'\\', &body[i..]) {
        let at = i + off;
        if body[at] == b'\\' {
            i = at + 2;
            if i > body.len() {
                return None;
            }
        } else {
            return Some((&body[..at], &body[at + 1..]));
        }
    }
    None
}

impl LineParser for CombinedParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        let s = self.split(line)?;
        let f = &s.fields;
        record.time = Some(self.clock.parse(f[3]).ok_or(SkipReason::BadTime)?);
        let (method, path) = split_request(f[4]);
        record.addr = Cow::Borrowed(f[0]);
        record.user = Cow::Borrowed(f[2]);
        record.method = Cow::Borrowed(method);
        record.path = Cow::Borrowed(path);
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

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(self.clone())
    }

    fn name(&self) -> String {
        "combined".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Record<'_>, SkipReason> {
        let mut parser =
            CombinedParser::new(&["http_user_agent".into(), "request_uri".into()]).unwrap();
        let mut r = Record::default();
        r.clear(2);
        parser.parse(line.as_bytes(), &mut r).map(|()| r)
    }

    #[test]
    fn combined_line() {
        let r = parse(r#"127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif?x=1 HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)""#).unwrap();
        assert_eq!(&*r.addr, b"127.0.0.1");
        assert_eq!(&*r.user, b"frank");
        assert_eq!(&*r.method, b"GET");
        assert_eq!(&*r.path, b"/apache_pb.gif?x=1");
        assert_eq!(r.status, Some(200));
        assert_eq!(r.time.unwrap().ms, 971_211_336_000);
        assert_eq!(&*r.extra[0], b"Mozilla/4.08 [en] (Win98; I ;Nav)");
        assert_eq!(&*r.extra[1], b"/apache_pb.gif?x=1");
        assert_eq!(&*r.xff, b"");
    }

    #[test]
    fn common_line_and_nginx_main_xff() {
        let r = parse(r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "POST /login HTTP/1.1" 401 -"#)
            .unwrap();
        assert_eq!(r.status, Some(401));
        let r = parse(r#"10.1.1.1 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "curl" "203.0.113.9, 10.0.0.1" 0.003"#).unwrap();
        assert_eq!(&*r.xff, b"203.0.113.9, 10.0.0.1");
    }

    #[test]
    fn a_line_ending_at_the_status_parses() {
        // Found by fuzzing: a line with no BYTES made the offset of the missing
        // field underflow (a panic in debug builds).
        let r = parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200"#).unwrap();
        assert_eq!(
            (r.status, &*r.path, &*r.xff),
            (Some(200), &b"/x"[..], &b""[..])
        );
        let r =
            parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /x HTTP/1.1" 200   "#).unwrap();
        assert_eq!(r.status, Some(200));
    }

    #[test]
    fn address_lists_and_quoted_lists() {
        let r = parse(r#"10.0.0.2, 10.0.0.1, 127.0.0.1 - - [07/Dec/2016:11:05:07 +0100] "GET /ocelot HTTP/1.1" 200 571 "-" "UA""#).unwrap();
        assert_eq!(&*r.addr, b"10.0.0.2, 10.0.0.1, 127.0.0.1");
        let r = parse(r#""10.5.102.222, 199.96.1.1, 204.246.1.1" 10.2.1.185 - - [22/Jan/2016:13:18:29 +0000] "GET /assets/xxxx?q=100 HTTP/1.1" 200 25507 "-" "Amazon CloudFront""#).unwrap();
        assert_eq!(
            &*r.addr,
            br#""10.5.102.222, 199.96.1.1, 204.246.1.1" 10.2.1.185"#
        );
    }

    #[test]
    fn empty_and_dash_requests_are_events() {
        let r = parse(r#"127.0.0.1 - - [12/Apr/2018:09:48:40 +0200] "" 400 0 "-" "-""#).unwrap();
        assert_eq!((&*r.method, r.status), (&b""[..], Some(400)));
        let r =
            parse(r#"10.112.81.15 - - [15/Feb/2013:06:00:31 +0000] "-" 400 0 "-" "-""#).unwrap();
        assert_eq!(&*r.path, b"");
    }

    #[test]
    fn escaped_quotes_inside_fields() {
        let r = parse(
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a\"b HTTP/1.1" 200 1 "-" "x\"y""#,
        )
        .unwrap();
        assert_eq!(&*r.path, br#"/a\"b"#);
        assert_eq!(&*r.extra[0], br#"x\"y"#);
    }

    #[test]
    fn malformed_lines_say_why() {
        let missing_ident = r#"192.168.202.254 [20/Jul/2009:22:59:29 +0000] "GET / HTTP/1.0" 404 46210 "-" "gPXE/0.9.7""#;
        assert!(matches!(
            parse(missing_ident),
            Err(SkipReason::Malformed(_))
        ));
        assert!(matches!(parse("garbage"), Err(SkipReason::Malformed(_))));
        assert!(matches!(
            parse(r#"1.2.3.4 - - [bad] "GET / HTTP/1.1" 200 1"#),
            Err(SkipReason::BadTime)
        ));
        assert!(matches!(
            parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" abc 1"#),
            Err(SkipReason::BadStatus)
        ));
        assert!(matches!(
            parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1"#),
            Err(SkipReason::Malformed(_))
        ));
    }

    #[test]
    fn skipping_the_tail_changes_nothing_else() {
        let lines = [
            r#"1.2.3.4 - bob [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl" "9.9.9.9""#,
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1"   404"#,
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200  7  "r""#,
            r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" "#,
        ];
        for line in lines {
            let mut full = CombinedParser::new(&[]).unwrap();
            let mut lean = CombinedParser::new(&[]).unwrap().with_xff(false);
            let (mut a, mut b) = (Record::default(), Record::default());
            let (ra, rb) = (
                full.parse(line.as_bytes(), &mut a),
                lean.parse(line.as_bytes(), &mut b),
            );
            assert_eq!(ra, rb, "{line}");
            assert_eq!(
                (a.time, &a.addr, &a.user, &a.method, &a.path, a.status),
                (b.time, &b.addr, &b.user, &b.method, &b.path, b.status)
            );
            assert!(b.xff.is_empty());
        }
        let lean = CombinedParser::new(&["http_user_agent".into()])
            .unwrap()
            .with_xff(false);
        assert!(lean.tail);
    }

    #[test]
    fn a_missing_bytes_field_ends_the_line() {
        let r = parse(r#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /a HTTP/1.1" 200"#).unwrap();
        assert_eq!((r.status, &*r.extra[0]), (Some(200), &b""[..]));
    }

    #[test]
    fn unknown_field_names_are_refused() {
        assert!(CombinedParser::new(&["nope".into()]).is_err());
    }
}
