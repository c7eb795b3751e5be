//! The request target as the client sent it, from a log that escapes bytes
//! in its quoted fields. nginx's `log_format` escapes its values one of
//! three ways (`escape=`, src/http/modules/ngx_http_log_module.c):
//! `default` writes `"`, `\`, control bytes, DEL and bytes from 0x80 up as
//! `\xHH` (`ngx_http_log_escape`), so that `GET /café` is logged
//! `GET /caf\xC3\xA9`, and Apache writes `\"`, `\\` and `\xhh`
//! (`ap_escape_logitem`, server/util.c); `json` writes `\"`, `\\`, `\n`,
//! `\r`, `\t`, `\b`, `\f` and other control bytes as `\u00XX`, the rest as
//! it came (`ngx_escape_json`, src/core/ngx_string.c); `none` writes the
//! bytes themselves, as Envoy does. Read back, the target's bytes are what
//! nginx and HAProxy parsed, which the gateways' readings of a path need (a
//! control byte they answer 400 to, a byte from 0x80 up HAProxy refuses)
//! and routes match.

use std::borrow::Cow;

/// How a log escapes the bytes of its values: nginx's `log_format`
/// parameter `escape=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogEscape {
    /// `\xHH`, `\"` and `\\` (nginx's default, Apache).
    #[default]
    Default,
    /// JSON string escapes (`escape=json`).
    Json,
    /// Nothing escaped (`escape=none`, Envoy).
    None,
}

impl LogEscape {
    /// The escaping called `name` in nginx's `escape=NAME`.
    pub fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            "default" => Ok(LogEscape::Default),
            "json" => Ok(LogEscape::Json),
            "none" => Ok(LogEscape::None),
            other => Err(format!("`{other}`: expected default, json or none")),
        }
    }

    /// The name nginx gives this escaping.
    pub fn name(self) -> &'static str {
        match self {
            LogEscape::Default => "default",
            LogEscape::Json => "json",
            LogEscape::None => "none",
        }
    }

    /// `target` read back to the bytes it was written from: borrowed when
    /// nothing is escaped in it (nearly every target). An escape this
    /// escaping does not write stays as it is.
    pub fn unescaped(self, target: &[u8]) -> Cow<'_, [u8]> {
        let Some(first) = memchr::memchr(b'\\', target).filter(|_| self != LogEscape::None) else {
            return Cow::Borrowed(target);
        };
        let mut out = Vec::with_capacity(target.len());
        out.extend_from_slice(&target[..first]);
        let mut i = first;
        while i < target.len() {
            let escaped = match self {
                LogEscape::Json => json_escape(&target[i..]),
                _ => default_escape(&target[i..]),
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
}

/// The byte and length of a `\xHH` (two hex digits, either case), `\\` or
/// `\"` that `text` starts with.
fn default_escape(text: &[u8]) -> Option<(u8, usize)> {
    match text {
        [b'\\', b'x', hi, lo, ..] => hex(*hi).zip(hex(*lo)).map(|(h, l)| (h << 4 | l, 4)),
        [b'\\', b @ (b'\\' | b'"'), ..] => Some((*b, 2)),
        _ => None,
    }
}

/// The byte and length of a JSON escape of one byte that `text` starts
/// with: `\"`, `\\`, `\/`, `\n`, `\r`, `\t`, `\b`, `\f`, or `\u00HH` for a
/// control byte (what `ngx_escape_json` writes, and `/`).
fn json_escape(text: &[u8]) -> Option<(u8, usize)> {
    match text {
        [b'\\', b'u', b'0', b'0', hi @ (b'0' | b'1'), lo, ..] => {
            hex(*lo).map(|l| ((hi - b'0') << 4 | l, 6))
        }
        [b'\\', b, ..] => {
            let byte = match b {
                b'"' | b'\\' | b'/' => *b,
                b'n' => b'\n',
                b'r' => b'\r',
                b't' => b'\t',
                b'b' => 0x08,
                b'f' => 0x0c,
                _ => return None,
            };
            Some((byte, 2))
        }
        _ => None,
    }
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
        let (nginx, json) = (LogEscape::Default, LogEscape::Json);
        for (escape, logged, sent) in [
            (nginx, &b"/a?q=1"[..], &b"/a?q=1"[..]),
            (nginx, b"/caf\\xC3\\xA9", b"/caf\xc3\xa9"),
            (nginx, b"/a?q=\\x01&r=\\x7fx", b"/a?q=\x01&r=\x7fx"),
            (nginx, b"/a\\x5Cx41", b"/a\\x41"),
            (nginx, b"/q=\\\"x\\\"", b"/q=\"x\""),
            (nginx, b"/a\\\\b", b"/a\\b"),
            (nginx, b"/a\\x4", b"/a\\x4"),
            (nginx, b"/a\\xZZ\\", b"/a\\xZZ\\"),
            (nginx, b"/a\\n", b"/a\\n"),
            (json, b"/a?q=1", b"/a?q=1"),
            (json, b"/a?q=\\u0001\\u001F\\u001f", b"/a?q=\x01\x1f\x1f"),
            (json, b"/a\\n\\r\\t\\b\\f", b"/a\n\r\t\x08\x0c"),
            (json, b"/q=\\\"x\\\"\\\\\\/", b"/q=\"x\"\\/"),
            (json, b"/a\\\\x41", b"/a\\x41"),
            (
                json,
                b"/a\\xC3\\u0020\\u00e9\\u0",
                b"/a\\xC3\\u0020\\u00e9\\u0",
            ),
            (json, b"/a\\", b"/a\\"),
        ] {
            let read = escape.unescaped(logged);
            let shown = String::from_utf8_lossy(logged);
            assert_eq!(&read[..], sent, "{escape:?} {shown}");
            let borrowed = matches!(read, Cow::Borrowed(_));
            assert_eq!(borrowed, !logged.contains(&b'\\'), "{escape:?} {shown}");
        }
    }

    #[test]
    fn nothing_is_read_back_where_nothing_was_escaped() {
        let logged = b"/a\\x41\\u0001\\\\";
        assert!(matches!(LogEscape::None.unescaped(logged), Cow::Borrowed(l) if l == logged));
    }

    #[test]
    fn escapings_are_named_as_nginx_names_them() {
        for escape in [LogEscape::Default, LogEscape::Json, LogEscape::None] {
            assert_eq!(LogEscape::parse(escape.name()), Ok(escape));
        }
        assert!(
            LogEscape::parse("html")
                .unwrap_err()
                .contains("default, json or none")
        );
    }

    proptest::proptest! {
        /// What nginx's `escape=default` writes of any target reads back as the target.
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
            proptest::prop_assert_eq!(&LogEscape::Default.unescaped(&logged)[..], &target[..]);
        }

        /// What nginx's `escape=json` writes of any target (`ngx_escape_json`)
        /// reads back as the target.
        #[test]
        fn nginx_json_escaping_reads_back(target in proptest::collection::vec(proptest::num::u8::ANY, 0..40)) {
            let mut logged = Vec::new();
            for &b in &target {
                match b {
                    b'"' | b'\\' => logged.extend_from_slice(&[b'\\', b]),
                    b'\n' => logged.extend_from_slice(b"\\n"),
                    b'\r' => logged.extend_from_slice(b"\\r"),
                    b'\t' => logged.extend_from_slice(b"\\t"),
                    0x08 => logged.extend_from_slice(b"\\b"),
                    0x0c => logged.extend_from_slice(b"\\f"),
                    0..0x20 => logged.extend_from_slice(format!("\\u00{b:02X}").as_bytes()),
                    _ => logged.push(b),
                }
            }
            proptest::prop_assert_eq!(&LogEscape::Json.unescaped(&logged)[..], &target[..]);
        }
    }
}
