//! Which request lines HAProxy's HTTP/1 parser takes, as far as a log shows
//! them (`h1_headers_to_hdr_list`, src/h1.c): HAProxy answers the others 400
//! itself, before any `http-request` rule counts them.
//!
//! - A method is made of token characters (RFC 9110's `tchar`: letters,
//!   digits and ``!#$%&'*+-.^_`|~``), else 400; its case is kept.
//! - A target's bytes are 0x21–0x7e, without `#`, whatever its form: HAProxy
//!   refuses `#` since 2.6.15 and 2.8.2 (CVE-2023-45539; Debian's
//!   2.6.12-1+deb12u4, which the tests run, has the fix), a byte from 0x80
//!   up, and a control byte or a space (the request line then has a fourth
//!   part). An empty target (an empty request line) is no request.
//! - A target that starts with neither `/` nor `*` (`example.com:443`,
//!   `a/b`) is taken when its authority is the Host header's and answered
//!   400 otherwise; logs seldom show the Host, so such a target is taken to
//!   match it, as clients send it.
//! - DEL (0x7f) is refused only where the parser reads the target byte by
//!   byte: it first skips four bytes at a time while each group has no byte
//!   below 0x24 and is not all at or above 0x7f (the arithmetic of
//!   [`skipped_prefix`]), so a DEL among other characters of such a group
//!   passes. The real HAProxy 2.6.12 answers `/a\x7fb` 200 and `/abc\x7f` 400.
//!
//! A replay reads the path column, which ends at the first `?` or `#` (what
//! routes match) and holds a path's text as UTF-8 (other bytes as U+FFFD):
//! a `#` and the query's bytes are not seen, the groups are read as if a
//! space followed the path (a DEL in its last group before a query passes
//! in HAProxy and not here), and an absolute-form target's groups are
//! counted from its path, not from its scheme. HAProxy also answers 400 to
//! a request line whose version is not `HTTP/x.y`, which logs rarely show.

/// Whether HAProxy takes a request with this `method` (empty: not logged,
/// taken to be one it takes).
pub fn takes_method(method: &str) -> bool {
    method.bytes().all(is_tchar)
}

/// Whether HAProxy takes a request for this `target` (as the path column
/// holds it; empty: an empty request line, which is no request).
pub fn takes_target(target: &str) -> bool {
    let bytes = target.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let skipped = skipped_prefix(bytes);
    bytes[skipped..]
        .iter()
        .all(|&b| (0x21..=0x7e).contains(&b) && b != b'#')
}

/// RFC 9110's `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// How many bytes at the start of `target` HAProxy skips four at a time
/// before it reads byte by byte: the groups `x` (little-endian) for which
/// `x - 0x24242424` has no high bit in any byte and `x - 0x7f7f7f7f` (in
/// two steps, with borrows) has one. The target is followed by a space in
/// the request line, which ends the skipping in its group.
fn skipped_prefix(target: &[u8]) -> usize {
    let mut at = 0;
    while let Some(group) = target.get(at..at + 4) {
        let x = u32::from_le_bytes([group[0], group[1], group[2], group[3]]);
        let x = x.wrapping_sub(0x2424_2424);
        if x & 0x8080_8080 != 0 {
            break;
        }
        if x.wrapping_sub(0x5b5b_5b5b) & 0x8080_8080 == 0 {
            break;
        }
        at += 4;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_as_the_real_haproxy_answered_them() {
        // Each sent to HAProxy 2.6.12-1+deb12u4 as `GET <target> HTTP/1.1`.
        for (target, taken) in [
            ("/a", true),
            ("/a%zz", true),
            ("/a%00b", true),
            ("/../x", true),
            ("//x", true),
            ("/a\\b", true),
            ("/a~b!$&()*+,;=:@", true),
            ("/a|b", true),
            ("/a{b}", true),
            ("/a\"b", true),
            ("/a<b>", true),
            ("*", true),
            ("*x", true),
            ("/a#b", false),
            ("/a?x#y", false),
            ("/a?b=1#", false),
            // Sent with `Host: a`; with another Host, HAProxy answers 400.
            ("a", true),
            ("a/b", true),
            ("example.com:443", true),
            ("a\u{7f}", false),
            ("", false),
            ("/é", false),
            ("/a b", false),
            ("/a\tb", false),
            ("/a\u{1}b", false),
            ("/a\u{7f}b", true),
            ("/ab\u{7f}", true),
            ("/\u{7f}", false),
            ("/abc\u{7f}", false),
        ] {
            assert_eq!(takes_target(target), taken, "{target:?}");
        }
    }

    #[test]
    fn methods_as_the_real_haproxy_answered_them() {
        for method in [
            "GET", "get", "GET1", "M-SEARCH", "A_B", "G!T", "G'T", "G~T", "G|T",
        ] {
            assert!(takes_method(method), "{method}");
        }
        for method in [
            "G@T", "G(T", "G,T", "G/T", "G:T", "G;T", "G=T", "G?T", "G[T", "G{T", "Gé",
        ] {
            assert!(!takes_method(method), "{method}");
        }
        assert!(takes_method(""), "a method that was not logged");
    }
}
