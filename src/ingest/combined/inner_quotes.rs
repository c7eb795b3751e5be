//! Request lines with quotes inside them, unescaped (Traefik writes them so):
//! the request ends at the one quote followed by ` STATUS BYTES`.

use crate::ingest::record::{SkipReason, parse_status, space_or_end};

/// A request line and the rest of the line after its closing quote.
type RequestAndRest<'a> = (&'a [u8], &'a [u8]);

/// The quoted request at the start of `text` and what follows its closing
/// quote, for a line whose first closing quote is not followed by a status.
///
/// Some servers (Traefik) write quotes inside the request line unescaped: the
/// request then ends at the one quote that is followed by ` STATUS BYTES` (the
/// fields found from the other side). `None` when no quote is; an error when
/// several are (the line is ambiguous).
#[cold]
pub(super) fn request_with_inner_quotes(
    text: &[u8],
) -> Result<Option<RequestAndRest<'_>>, SkipReason> {
    let body = &text[1..];
    let mut found = None;
    for close in memchr::memchr_iter(b'"', body) {
        if status_follows(&body[close + 1..]) {
            if found.is_some() {
                return Err(SkipReason::Malformed(
                    "ambiguous request line (unescaped quotes before several status-like fields)",
                ));
            }
            found = Some((&body[..close], &body[close + 1..]));
        }
    }
    Ok(found)
}

/// True when `rest` (after a request's closing quote) is ` STATUS` followed by
/// the end of the line or ` BYTES` (digits or `-`; checked by its first byte).
pub(super) fn status_follows(rest: &[u8]) -> bool {
    let Some(rest) = rest.strip_prefix(b" ") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    let status_end = space_or_end(rest);
    let after = rest[status_end..].trim_ascii_start();
    status_end > 0
        && parse_status(&rest[..status_end]).is_ok()
        && matches!(after.first(), None | Some(b'0'..=b'9' | b'-'))
}
