//! The request target as the client sent it, from a log that escapes bytes
//! in its quoted fields. nginx (`escape=default`, the default of every
//! `log_format`) writes `"`, `\`, control bytes, DEL and bytes from 0x80 up
//! as `\xHH` (`ngx_http_log_escape`, src/http/modules/ngx_http_log_module.c),
//! so that `GET /café` is logged `GET /caf\xC3\xA9`; Apache writes `\"`,
//! `\\` and `\xhh` (`ap_escape_logitem`, server/util.c). Read back, the
//! target's bytes are what nginx and HAProxy parsed, which the gateways'
//! readings of a path need (a control byte they answer 400 to, a byte from
//! 0x80 up HAProxy refuses) and routes match.

use std::borrow::Cow;

/// `target` with every `\xHH` (two hex digits, either case) read as its
/// byte, `\\` as `\` and `\"` as `"`; any other backslash stays. Borrowed
/// when there is no backslash (nearly every target).
pub fn unescaped(target: &[u8]) -> Cow<'_, [u8]> {
    let Some(first) = memchr::memchr(b'\\', target) else {
        return Cow::Borrowed(target);
    };
    let mut out = Vec::with_capacity(target.len());
    out.extend_from_slice(&target[..first]);
    let mut i = first;
    while i < target.len() {
        let escaped = match &target[i..] {
            [b'\\', b'x', hi, lo, ..] => hex(*hi).zip(hex(*lo)).map(|(h, l)| (h << 4 | l, 4)),
            [b'\\', b @ (b'\\' | b'"'), ..] => Some((*b, 2)),
            _ => None,
        };
        match escaped {
            Some((byte, len)) => {
                out.push(byte);
                i += len;
            }
            None => {
                out.push(target[i]);
                i += 1;
            }
        }
    }
    Cow::Owned(out)
}

/// The value of hex digit `b`.
fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_read_back_as_their_bytes() {
        for (logged, sent) in [
            (&b"/a?q=1"[..], &b"/a?q=1"[..]),
            (b"/caf\\xC3\\xA9", b"/caf\xc3\xa9"),
            (b"/a?q=\\x01&r=\\x7fx", b"/a?q=\x01&r=\x7fx"),
            (b"/a\\x5Cx41", b"/a\\x41"),
            (b"/q=\\\"x\\\"", b"/q=\"x\""),
            (b"/a\\\\b", b"/a\\b"),
            (b"/a\\x4", b"/a\\x4"),
            (b"/a\\xZZ\\", b"/a\\xZZ\\"),
            (b"/a\\n", b"/a\\n"),
        ] {
            let read = unescaped(logged);
            assert_eq!(&read[..], sent, "{}", String::from_utf8_lossy(logged));
            assert_eq!(matches!(read, Cow::Borrowed(_)), !logged.contains(&b'\\'));
        }
    }

    proptest::proptest! {
        /// What nginx writes of any target reads back as the target.
        #[test]
        fn nginx_escaping_reads_back(target in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
            let mut logged = Vec::new();
            for &b in &target {
                if b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f {
                    logged.extend_from_slice(format!("\\x{b:02X}").as_bytes());
                } else {
                    logged.push(b);
                }
            }
            proptest::prop_assert_eq!(&unescaped(&logged)[..], &target[..]);
        }
    }
}
