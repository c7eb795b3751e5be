//! The HTTP version a request was sent with, as its log line records it: the
//! last word of a request line (`GET / HTTP/1.0`; none at all is HTTP/0.9,
//! as nginx and Apache log such a request), or a field of its own (nginx's
//! `$server_protocol`, a JSON `protocol`). A replay reads it where a product
//! answers some versions itself: Envoy answers HTTP/1.0 and 0.9 with 426 by
//! default.

/// The HTTP version of a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    /// The line does not say (no request line and no version field).
    #[default]
    Unknown,
    /// A request line of a method and a target only, or a version field
    /// saying `HTTP/0.9` (a request line that writes `HTTP/0.9` out is
    /// [`Protocol::Other`]: HTTP/0.9 had no version word).
    Http09,
    Http10,
    Http11,
    /// `HTTP/2.0` (nginx, Apache, Caddy) or `HTTP/2` (Envoy).
    Http2,
    Http3,
    /// A version that is none of these (`HTTP/1.2`, `HTTP/x`).
    Other,
}

impl Protocol {
    /// Every version, for tables indexed by it.
    pub const ALL: [Protocol; 7] = [
        Protocol::Unknown,
        Protocol::Http09,
        Protocol::Http10,
        Protocol::Http11,
        Protocol::Http2,
        Protocol::Http3,
        Protocol::Other,
    ];

    /// A version field as logged (also an ALPN name, `h2`, as some servers
    /// log one: Caddy's `proto` has been `h3`): another word starting with
    /// `HTTP/` (in any case) is [`Protocol::Other`]; anything else (empty,
    /// `-`, a scheme such as `https`) says no version: [`Protocol::Unknown`].
    pub fn from_version(version: &[u8]) -> Protocol {
        match version {
            b"HTTP/1.1" | b"http/1.1" => Protocol::Http11,
            b"HTTP/1.0" | b"http/1.0" => Protocol::Http10,
            b"HTTP/2.0" | b"HTTP/2" | b"h2" | b"h2c" => Protocol::Http2,
            b"HTTP/3.0" | b"HTTP/3" | b"h3" => Protocol::Http3,
            b"HTTP/0.9" => Protocol::Http09,
            _ if version
                .get(..5)
                .is_some_and(|v| v.eq_ignore_ascii_case(b"HTTP/")) =>
            {
                Protocol::Other
            }
            _ => Protocol::Unknown,
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
    /// it), which [`Protocol::from_version`] reads back; empty when unknown.
    pub fn version(self) -> &'static str {
        match self {
            Protocol::Unknown => "",
            Protocol::Http09 => "HTTP/0.9",
            Protocol::Http10 => "HTTP/1.0",
            Protocol::Http11 => "HTTP/1.1",
            Protocol::Http2 => "HTTP/2.0",
            Protocol::Http3 => "HTTP/3.0",
            Protocol::Other => "HTTP/other",
        }
    }

    /// The bit of this version in a set of versions (see [`ProtocolSet`]).
    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of HTTP versions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ProtocolSet(u8);

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
            (b"HTTP/1", Protocol::Other),
            (b"http/2.0", Protocol::Other),
            (b"HTTP/1.10", Protocol::Other),
        ] {
            assert_eq!(Protocol::from_version(version), read, "{version:?}");
        }
    }

    #[test]
    fn only_a_request_line_as_sent_tells_http_09() {
        assert_eq!(Protocol::Http09.unless_versionless(), Protocol::Unknown);
        for version in [Protocol::Http10, Protocol::Other, Protocol::Unknown] {
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
            assert_eq!(Protocol::from_version(p.version().as_bytes()), p);
        }
    }
}
