//! Finding the fields of a combined line the general reader splits: the
//! `[TIME]` bracket, the tokens before it, a quoted field, a virtual host.

use memchr::memchr;

/// Where `[TIME]` opens: the first `[` that starts a `dd/Mon/…` date and
/// closes before the quoted request (a user logged as `a [01/Jan/2020:…]`,
/// which nginx writes unescaped, has a date too), else the first `[` that
/// starts a date (an address such as `[2001:db8::1]:443` has brackets
/// too), else the first `[`.
pub(super) fn time_bracket(line: &[u8]) -> Option<usize> {
    let first = memchr(b'[', line)?;
    let dates = || {
        memchr::memchr_iter(b'[', &line[first..])
            .map(|i| first + i)
            .filter(|&i| line.get(i + 3) == Some(&b'/'))
    };
    dates()
        .find(|&i| request_follows(&line[i..]))
        .or_else(|| dates().next())
        .or(Some(first))
}

/// Whether the bracket `text` starts with closes, before any other opens,
/// and a `"` follows (a user `a [01/Jan/2020:00:00:00 +0000` leaves its
/// bracket open until the line's own date closes).
fn request_follows(text: &[u8]) -> bool {
    memchr::memchr2(b'[', b']', &text[1..]).is_some_and(|at| {
        text[1 + at] == b']' && text[2 + at..].trim_ascii_start().starts_with(b"\"")
    })
}

/// `ADDR IDENT USER` before `[TIME]` split into its three fields, the
/// address and the user trimmed. The ident is nearly always `-` (nginx
/// writes it so; Apache's `%l` without identd), and a user may hold spaces
/// (nginx and Apache log `$remote_user` with its spaces): so the address
/// ends at the first ` - ` after it (past a leading quoted list, which may
/// hold one), and the user is all that follows. A head without one is
/// split at its last two tokens (the address may be a proxy list
/// `a, b, c`).
pub(super) fn address_ident_user(prefix: &[u8]) -> Option<[&[u8]; 3]> {
    let past_quoted = quoted(prefix).map_or(0, |(_, rest)| prefix.len() - rest.len());
    let dash = memchr::memmem::find(&prefix[past_quoted..], b" - ").map(|i| past_quoted + i);
    if let Some(dash) = dash {
        let (addr, user) = (prefix[..dash].trim_ascii(), prefix[dash + 3..].trim_ascii());
        if !addr.is_empty() && !user.is_empty() {
            return Some([addr, &prefix[dash + 1..dash + 2], user]);
        }
    }
    let (user_at, user) = last_token(prefix)?;
    let (ident_at, ident) = last_token(prefix[..user_at].trim_ascii_end())?;
    Some([prefix[..ident_at].trim_ascii(), ident, user])
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
fn last_token(text: &[u8]) -> Option<(usize, &[u8])> {
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
