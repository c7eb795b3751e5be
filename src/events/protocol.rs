//! The HTTP version a request was sent with, as its log line records it: the
//! last word of a request line (`GET / HTTP/1.0`; none at all is HTTP/0.9,
//! as nginx and Apache log such a request), or a field of its own (nginx's
//! `$server_protocol`, a JSON `protocol`). A replay reads it where a product
//! answers some versions itself: Envoy answers HTTP/1.0 and 0.9 with 426 by
//! default, nginx `HTTP/4.0` with 505. Versions the four HTTP ones are not
//! are told apart as far as the products tell them apart.

/// The HTTP version of a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Protocol {
    /// The line does not say (no request line and no version field).
    #[default]
    Unknown,
    /// A request line of a method and a target only, or a version field
    /// saying `HTTP/0.9` (a request line that writes `HTTP/0.9` out is
    /// [`Protocol::OtherMajor`]: HTTP/0.9 had no version word).
    Http09,
    Http10,
    Http11,
    /// `HTTP/2.0` (nginx, Apache, Caddy) or `HTTP/2` (Envoy).
    Http2,
    Http3,
    /// `HTTP/1.2` to `HTTP/1.9`: HTTP/1 to nginx, HAProxy and Go; not 1.1 to Envoy.
    Http1Minor,
    /// `HTTP/1.` and two digits or more that nginx reads as a minor version
    /// (`HTTP/1.10`, `HTTP/1.999`, `HTTP/1.001`): HTTP/1 to nginx; malformed
    /// to HAProxy, Go and Envoy (which want one digit either side of the dot).
    Http1LongMinor,
    /// `HTTP/x.y`, one digit either side, of a major version other than 1
    /// (`HTTP/4.0`, `HTTP/2.1`, `HTTP/0.9` written out), but `HTTP/2.0` and
    /// `HTTP/3.0`: HAProxy takes it; nginx and Go answer it 505 (nginx 400
    /// for a major version 0).
    OtherMajor,
    /// Another word starting with `HTTP/` (in any case): `HTTP/1`,
    /// `HTTP/12.0`, `HTTP/1.1x`, `http/2.0`; every product answers it 400
    /// (nginx 505 for a major version past 1).
    Malformed,
}

impl Protocol {
    /// Every version, for tables indexed by it.
    pub const ALL: [Protocol; 10] = [
        Protocol::Unknown,
        Protocol::Http09,
        Protocol::Http10,
        Protocol::Http11,
        Protocol::Http2,
        Protocol::Http3,
        Protocol::Http1Minor,
        Protocol::Http1LongMinor,
        Protocol::OtherMajor,
        Protocol::Malformed,
    ];

    /// A version field as logged (also an ALPN name, `h2`, as some servers
    /// log one: Caddy's `proto` has been `h3`): a word starting with `HTTP/`
    /// is read by its digits (see the variants); another starting with it in
    /// another case is [`Protocol::Malformed`]; anything else (empty, `-`, a
    /// scheme such as `https`) says no version: [`Protocol::Unknown`].
    pub fn from_version(version: &[u8]) -> Protocol {
        match version {
            b"HTTP/1.1" | b"http/1.1" => Protocol::Http11,
            b"HTTP/1.0" | b"http/1.0" => Protocol::Http10,
            b"HTTP/2.0" | b"HTTP/2" | b"h2" | b"h2c" => Protocol::Http2,
            b"HTTP/3.0" | b"HTTP/3" | b"h3" => Protocol::Http3,
            b"HTTP/0.9" => Protocol::Http09,
            [b'H', b'T', b'T', b'P', b'/', digits @ ..] => Protocol::of_digits(digits),
            _ if version
                .get(..5)
                .is_some_and(|v| v.eq_ignore_ascii_case(b"HTTP/")) =>
            {
                Protocol::Malformed
            }
            _ => Protocol::Unknown,
        }
    }

    /// The class of what follows `HTTP/` other than the four versions.
    fn of_digits(digits: &[u8]) -> Protocol {
        let digit = |b: &u8| b.is_ascii_digit();
        match digits {
            [b'1', b'.', minor] if digit(minor) => Protocol::Http1Minor,
            [b'1', b'.', minor @ ..] if nginx_reads_minor(minor) => Protocol::Http1LongMinor,
            [major, b'.', minor] if digit(major) && digit(minor) => Protocol::OtherMajor,
            _ => Protocol::Malformed,
        }
    }

    /// The last word of a request line, as the servers read it: as a
    /// version field, but for two words. An HTTP/0.9 request has no version
    /// word: one that writes `HTTP/0.9` out is some other major version
    /// (HAProxy takes it, Go answers 505, nginx 400). Envoy's version field
    /// says `HTTP/2` for HTTP/2, a request line `HTTP/2.0`: the servers
    /// answer `HTTP/2` sent over HTTP/1 400 (nginx 505).
    pub fn from_request_line(word: &[u8]) -> Protocol {
        match Protocol::from_version(word) {
            Protocol::Http09 => Protocol::OtherMajor,
            Protocol::Http2 | Protocol::Http3 if word.len() == b"HTTP/2".len() => {
                Protocol::Malformed
            }
            version => version,
        }
    }

    /// A version as an events file writes it ([`Self::version`]): the
    /// classes' own spellings, which no log is read with (`HTTP/1.x` in a
    /// log is malformed, as the servers take it), else as a version field.
    pub fn from_events_file(version: &[u8]) -> Protocol {
        match version {
            b"HTTP/1.x" => Protocol::Http1Minor,
            b"HTTP/1.xx" => Protocol::Http1LongMinor,
            b"HTTP/x.x" => Protocol::OtherMajor,
            _ => Protocol::from_version(version),
        }
    }

    /// The version of a request line that may not be the line as sent (a
    /// JSON `request` an application wrote, `GET /x`; ALB's): one without
    /// a version says none, rather than HTTP/0.9, so that no replay drops
    /// every request of such a log.
    pub fn unless_versionless(self) -> Protocol {
        match self {
            Protocol::Http09 => Protocol::Unknown,
            version => version,
        }
    }

    /// Takes the version a field of its own gives, where it gives one: a
    /// field that says none (`-`, as nginx logs `$server_protocol` for an
    /// HTTP/0.9 request) leaves what the request line said, whichever of
    /// the two comes first in the line.
    pub fn read_field(&mut self, field: &[u8]) {
        match Protocol::from_version(field) {
            Protocol::Unknown => {}
            version => *self = version,
        }
    }

    /// The version as written in an events file (and as most logs write
    /// it), which [`Protocol::from_events_file`] reads back; empty when unknown.
    pub fn version(self) -> &'static str {
        match self {
            Protocol::Unknown => "",
            Protocol::Http09 => "HTTP/0.9",
            Protocol::Http10 => "HTTP/1.0",
            Protocol::Http11 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2.0",
            Protocol::Http3 => "HTTP/3.0",
            Protocol::Http1Minor => "HTTP/1.x",
            Protocol::Http1LongMinor => "HTTP/1.xx",
            Protocol::OtherMajor => "HTTP/x.x",
            Protocol::Malformed => "HTTP/other",
        }
    }

    /// The bit of this version in a set of versions (see [`ProtocolSet`]).
    fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// Whether nginx reads these digits (after `HTTP/1.`) as a minor version:
/// it takes another digit while the number so far is at most 99
/// (`ngx_http_parse_request_line`), so `001` and `999` but not `1000`.
fn nginx_reads_minor(digits: &[u8]) -> bool {
    let mut minor = 0u32;
    for (i, &b) in digits.iter().enumerate() {
        if !b.is_ascii_digit() || (i > 0 && minor > 99) {
            return false;
        }
        minor = minor * 10 + u32::from(b - b'0');
    }
    !digits.is_empty()
}

/// A set of HTTP versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProtocolSet(u16);

impl ProtocolSet {
    /// The set of these versions.
    pub fn of(versions: impl IntoIterator<Item = Protocol>) -> Self {
        ProtocolSet(versions.into_iter().fold(0, |bits, p| bits | p.bit()))
    }

    pub fn contains(self, version: Protocol) -> bool {
        self.0 & version.bit() != 0
    }

    /// Whether the two sets share a version.
    pub fn meets(self, other: ProtocolSet) -> bool {
        self.0 & other.0 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_logged() {
        for (version, read) in [
            (&b"HTTP/1.1"[..], Protocol::Http11),
            (b"HTTP/1.0", Protocol::Http10),
            (b"HTTP/2.0", Protocol::Http2),
            (b"HTTP/2", Protocol::Http2),
            (b"HTTP/3", Protocol::Http3),
            (b"HTTP/0.9", Protocol::Http09),
            (b"-", Protocol::Unknown),
            (b"", Protocol::Unknown),
            (b"https", Protocol::Unknown),
            (b"TCP", Protocol::Unknown),
            (b"http/1.1", Protocol::Http11),
            (b"h3", Protocol::Http3),
            (b"h2c", Protocol::Http2),
            (b"HTTP/1.2", Protocol::Http1Minor),
            (b"HTTP/1.9", Protocol::Http1Minor),
            (b"HTTP/1.10", Protocol::Http1LongMinor),
            (b"HTTP/1.100", Protocol::Http1LongMinor),
            (b"HTTP/1.0001", Protocol::Http1LongMinor),
            (b"HTTP/1.999", Protocol::Http1LongMinor),
            (b"HTTP/1.x", Protocol::Malformed),
            (b"HTTP/x.x", Protocol::Malformed),
            (b"HTTP/1.", Protocol::Malformed),
            (b"HTTP/4.0", Protocol::OtherMajor),
            (b"HTTP/2.1", Protocol::OtherMajor),
            (b"HTTP/0.8", Protocol::OtherMajor),
            (b"HTTP/1", Protocol::Malformed),
            (b"HTTP/1.1000", Protocol::Malformed),
            (b"HTTP/12.0", Protocol::Malformed),
            (b"HTTP/01.1", Protocol::Malformed),
            (b"HTTP/1.1x", Protocol::Malformed),
            (b"HTTP/1.a", Protocol::Malformed),
            (b"HTTP/", Protocol::Malformed),
            (b"http/2.0", Protocol::Malformed),
            (b"Http/1.1", Protocol::Malformed),
        ] {
            assert_eq!(Protocol::from_version(version), read, "{version:?}");
        }
    }

    proptest::proptest! {
        /// Any word starting with `HTTP/` is a version of some class, in a
        /// field and in a request line; a request line's is never HTTP/0.9.
        #[test]
        fn every_http_word_has_a_class(rest in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8)) {
            let word = [&b"HTTP/"[..], &rest].concat();
            proptest::prop_assert_ne!(Protocol::from_version(&word), Protocol::Unknown);
            let in_line = Protocol::from_request_line(&word);
            proptest::prop_assert!(!matches!(in_line, Protocol::Unknown | Protocol::Http09));
        }
    }

    #[test]
    fn only_a_request_line_as_sent_tells_http_09() {
        assert_eq!(Protocol::Http09.unless_versionless(), Protocol::Unknown);
        for version in [Protocol::Http10, Protocol::OtherMajor, Protocol::Unknown] {
            assert_eq!(version.unless_versionless(), version);
        }
    }

    #[test]
    fn a_field_that_says_no_version_leaves_the_request_lines() {
        let mut version = Protocol::Http09;
        version.read_field(b"-");
        assert_eq!(version, Protocol::Http09);
        version.read_field(b"HTTP/1.1");
        assert_eq!(version, Protocol::Http11);
    }

    #[test]
    fn sets_hold_their_versions() {
        let old = ProtocolSet::of([Protocol::Http09, Protocol::Http10]);
        let seen = ProtocolSet::of([Protocol::Http11, Protocol::Http10]);
        assert!(old.contains(Protocol::Http10) && !old.contains(Protocol::Http11));
        assert!(old.meets(seen) && !old.meets(ProtocolSet::of([Protocol::Unknown])));
        assert!(ProtocolSet::default().is_empty() && !old.is_empty());
        assert!(
            Protocol::ALL
                .iter()
                .all(|&p| ProtocolSet::of(Protocol::ALL).contains(p))
        );
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_events_file(p.version().as_bytes()), p);
        }
    }
}
