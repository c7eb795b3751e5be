//! The shortcut for the shape nearly every combined line has:
//!
//! `ADDR IDENT USER [dd/Mon/…] "REQUEST" NNN BYTES "REFERER" "USER_AGENT"…`
//!
//! with single spaces, one token each for the address, ident and user, a
//! three-digit status and no backslash, in at most [`MAX_LINE`] bytes. Such a
//! line is read from its [`Marks`] (where its delimiters are), and gives
//! exactly what the general reader (`CombinedParser::split_any` and
//! `finish`) gives; any other line (a proxy list in the address, an IPv6
//! address in brackets, escaped or unescaped quotes in a field, odd spacing or
//! statuses) is left to the general reader. A property test and the
//! `combined` fuzz target check that the two agree.
//!
//! [`MAX_LINE`]: super::marks::MAX_LINE

use super::marks::Marks;
use super::{BYTES_FIELD, CombinedParser, Split};
use crate::events::Protocol;
use crate::ingest::record::{skip_spaces, split_request, target_and_protocol};

/// What the shortcut reads besides the fields up to STATUS.
#[derive(Debug, Clone, Copy)]
pub(super) struct Wanted {
    /// BYTES.
    pub bytes: bool,
    /// The quoted fields after BYTES (referer, user agent, X-Forwarded-For).
    pub tail: bool,
}

/// Fills `s` when `line` has the common shape and says whether it did
/// (`s` is left untouched when not).
pub(super) fn split<'a>(line: &'a [u8], wanted: Wanted, s: &mut Split<'a>) -> bool {
    fields(line, wanted, s).is_some()
}

impl CombinedParser {
    /// True when the shortcut for the common shape reads `line` differently
    /// from the general reader (for the fuzz target; never expected).
    #[doc(hidden)]
    pub fn shortcut_disagrees(&self, line: &[u8]) -> bool {
        let (mut fast, mut general) = (Split::default(), Split::default());
        split(line, self.wanted(), &mut fast)
            && Ok((fast.fields, fast.request_parts()))
                != self
                    .split_any(line, super::tokens::time_bracket(line), &mut general)
                    .and_then(|()| self.finish(&mut general))
                    .map(|()| (general.fields, split_request(general.fields[4])))
    }
}

fn fields<'a>(line: &'a [u8], wanted: Wanted, s: &mut Split<'a>) -> Option<()> {
    let mut m = Marks::default();
    if !m.fill(line) || m.backslash {
        return None;
    }
    // `ADDR IDENT USER [`: three spaces, then the first `[`, which opens a
    // `dd/Mon/…` date.
    let addr_end = m.space.next(0)?;
    let ident_end = m.space.next(addr_end + 1)?;
    let user_end = m.space.next(ident_end + 1)?;
    let open = user_end + 1;
    if m.bracket.next(0) != Some(open) || line[open] != b'[' || line.get(open + 3) != Some(&b'/') {
        return None;
    }
    // Each token non-empty, starting and ending with a byte the general
    // reader would not trim.
    let trimmed = |i: usize| line[i].is_ascii_whitespace();
    if addr_end == 0
        || ident_end == addr_end + 1
        || user_end == ident_end + 1
        || trimmed(0)
        || trimmed(addr_end - 1)
        || trimmed(addr_end + 1)
        || trimmed(ident_end - 1)
        || trimmed(ident_end + 1)
        || trimmed(user_end - 1)
    {
        return None;
    }
    // The next bracket closes the date (else the general reader decides).
    let close = m.bracket.next(open + 1).filter(|&at| line[at] == b']')?;
    if line.get(close + 1..close + 3) != Some(b" \"") {
        return None;
    }
    // A later `[dd/…` may open the time of a second entry glued onto the
    // line (see `glue`): the general reader looks.
    let mut after = close + 1;
    while let Some(at) = m.bracket.next(after) {
        if line[at] == b'[' && line.get(at + 3) == Some(&b'/') {
            return None;
        }
        after = at + 1;
    }
    let request_end = m.quote.next(close + 3)?;
    let after_request = &line[request_end + 1..];
    // ` NNN ` and the first byte of BYTES: a status the general reader takes
    // at once (three digits, the first not 0) followed by a number or `-`.
    let [
        b' ',
        b'1'..=b'9',
        b'0'..=b'9',
        b'0'..=b'9',
        b' ',
        b'0'..=b'9' | b'-',
        ..,
    ] = after_request
    else {
        return None;
    };
    s.fields[0] = &line[..addr_end];
    s.fields[1] = &line[addr_end + 1..ident_end];
    s.fields[2] = &line[ident_end + 1..user_end];
    s.fields[3] = &line[open + 1..close];
    s.fields[4] = &line[close + 3..request_end];
    s.request = request_parts(line, &m, close + 3, request_end);
    s.fields[7] = &after_request[1..4];
    s.after_status = &after_request[4..];
    if !wanted.bytes {
        return Some(());
    }
    let bytes_start = request_end + 6;
    let bytes_end = m.space.next(bytes_start).unwrap_or(line.len());
    s.fields[BYTES_FIELD] = &line[bytes_start..bytes_end];
    if wanted.tail {
        // Each quoted field after white space; no backslash, so a field ends
        // at the next quote.
        let mut at = bytes_end;
        for slot in BYTES_FIELD + 1..BYTES_FIELD + 4 {
            while line.get(at).is_some_and(u8::is_ascii_whitespace) {
                at += 1;
            }
            if line.get(at) != Some(&b'"') {
                break;
            }
            let Some(end) = m.quote.next(at + 1) else {
                break;
            };
            s.fields[slot] = &line[at + 1..end];
            at = end + 1;
        }
    }
    Some(())
}

/// The method, target and version of the request `line[start..end]` as
/// [`split_request`] reads them, found from the spaces' marks; `None` (left
/// to `split_request`) when the request starts or ends with white space.
///
/// [`split_request`]: crate::ingest::record::split_request
#[inline(always)]
fn request_parts<'a>(
    line: &'a [u8],
    m: &Marks,
    start: usize,
    end: usize,
) -> Option<(&'a [u8], &'a [u8], Protocol)> {
    let request = &line[start..end];
    let (Some(first), Some(last)) = (request.first(), request.last()) else {
        return Some((b"", b"", Protocol::Unknown));
    };
    if first.is_ascii_whitespace() || last.is_ascii_whitespace() {
        return None;
    }
    if request == b"-" {
        return Some((b"", b"", Protocol::Unknown));
    }
    let Some(space) = m.space.next(start).filter(|&at| at < end) else {
        return Some((request, b"", Protocol::Unknown));
    };
    // More spaces before the target are one separator (the request does not
    // end with one, so the target is not empty).
    let target = skip_spaces(&line[space + 1..end]);
    let (target, protocol) = target_and_protocol(target);
    Some((&line[start..space], target, protocol))
}

#[cfg(test)]
mod tests {
    use super::super::CombinedParser;
    use proptest::prelude::*;

    /// Pieces of combined lines, common and odd, for lines of every shape.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "1.2.3.4",
            "-",
            "frank",
            " ",
            "  ",
            "\t",
            // Tokens that start with whitespace but end with none (found by fuzzing).
            "\u{c}-",
            "\tfrank",
            "[",
            "]",
            "\"",
            "\\\"",
            "\\",
            "[10/Oct/2000:13:55:36 +0000]",
            "[10/Oct/2000:13:55:36",
            "\"GET /a?b HTTP/1.1\"",
            "\"GET /x\"y HTTP/1.1\"",
            // Requests of every shape `split_request` reads.
            "\"GET\"",
            "\"\"",
            "\" GET /a \"",
            "\"GET  /a  HTTP/1.1\"",
            "\"GET\t/a HTTP/1.1\"",
            "\"\u{c}GET /a\"",
            "\"GET /a \"",
            "\"GET /a b HTTP/1.1\"",
            "\"GET /a b\"",
            "\"GET /a HTTP/1.1 x\"",
            "\"- x\"",
            "200",
            "099",
            "0",
            "404",
            " 200 ",
            "1234",
            "\"-\"",
            "\"curl/8\"",
            "\"a, b\"",
            "::1",
            "[::1]:443",
            "10.0.0.1, 10.0.0.2",
            "é",
            "\u{7f}",
            "x:80",
            "12ms",
            "\r",
            "\"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 and then some more text to pass the end of a short line\"",
        ])
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The shortcut reads every line it takes as the general reader does.
        #[test]
        fn the_shortcut_agrees_with_the_general_reader(
            pieces in prop::collection::vec(piece(), 0..16),
            canonical in any::<bool>(),
        ) {
            let line = if canonical {
                // A well-formed line with one piece swapped in and more after it.
                let mut fields = vec!["1.2.3.4", " ", "-", " ", "frank", " ",
                    "[10/Oct/2000:13:55:36 +0000]", " ", "\"GET /a?b HTTP/1.1\"", " ", "200",
                    " ", "1234", " ", "\"-\"", " ", "\"curl/8\""];
                if let Some((&first, rest)) = pieces.split_first() {
                    let at = rest.len() % fields.len();
                    fields[at] = first;
                    fields.extend(rest.iter().skip(8));
                }
                fields.concat()
            } else {
                pieces.concat()
            };
            let plain = CombinedParser::new(&[]).unwrap();
            let bytes = CombinedParser::new(&["body_bytes_sent".into()]).unwrap().with_xff(false);
            for parser in [plain.clone(), plain.with_xff(false), bytes] {
                prop_assert!(!parser.shortcut_disagrees(line.as_bytes()), "{:?}", line);
            }
        }
    }

    #[test]
    fn common_lines_take_the_shortcut_and_odd_ones_do_not() {
        let wanted = super::Wanted {
            bytes: true,
            tail: true,
        };
        let split = |line| super::split(line, wanted, &mut super::Split::default());
        assert!(split(
            br#"1.2.3.4 - frank [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5 "-" "curl""#
        ));
        for odd in [
            &br#"10.0.0.1, 10.0.0.2 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5"#[..],
            br#"[::1]:443 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5"#,
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /"x" HTTP/1.1" 200 5"#,
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET /\"x HTTP/1.1" 200 5"#,
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 000 5"#,
            br#"1.2.3.4  - - [10/Oct/2000:13:55:36 +0000] "GET / HTTP/1.1" 200 5"#,
        ] {
            assert!(!split(odd), "{}", String::from_utf8_lossy(odd));
        }
    }
}
