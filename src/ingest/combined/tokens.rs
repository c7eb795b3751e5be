//! Finding the fields of a combined line the general reader splits: the
//! `[TIME]` bracket, the tokens before it, a quoted field, a virtual host.

use memchr::memchr;

/// Where `[TIME]` opens: the first `[` that starts a `dd/Mon/…` date (an
/// address such as `[2001:db8::1]:443` has brackets too), else the first `[`.
pub(super) fn time_bracket(line: &[u8]) -> Option<usize> {
    let first = memchr(b'[', line)?;
    if line.get(first + 3) == Some(&b'/') {
        return Some(first);
    }
    memchr::memchr_iter(b'[', &line[first + 1..])
        .map(|i| first + 1 + i)
        .find(|&i| line.get(i + 3) == Some(&b'/'))
        .or(Some(first))
}

/// `%v:%p` without the port (`www.example.com:443` → `www.example.com`);
/// `None` when the token is not `HOST:PORT`.
pub(super) fn host_of_vhost(vhost: &[u8]) -> Option<&[u8]> {
    let colon = memchr::memrchr(b':', vhost)?;
    let (host, port) = (&vhost[..colon], &vhost[colon + 1..]);
    let plain = |b: &u8| !matches!(b, b',' | b'"' | b'[' | b']');
    (!host.is_empty()
        && !port.is_empty()
        && port.iter().all(u8::is_ascii_digit)
        && host.iter().all(plain))
    .then_some(host)
}

/// The last space-separated token of `text` and where it starts.
pub(super) fn last_token(text: &[u8]) -> Option<(usize, &[u8])> {
    if text.is_empty() {
        return None;
    }
    let start = text.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1);
    (start > 0).then(|| (start, &text[start..]))
}

/// A `"…"` field at the start of `text` (backslash escapes honoured) and the rest after it.
pub(super) fn quoted(text: &[u8]) -> Option<(&[u8], &[u8])> {
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
