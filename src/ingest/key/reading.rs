//! How a key is read from a request by the product that enforces it. rlctl's
//! policies (and the nginx configuration `rlctl export` writes) take an `xff`
//! key from the first token of X-Forwarded-For, whatever it holds; HAProxy's
//! and AWS WAF's configurations read only an address there and do something
//! else with the rest, so a replay of them derives the key as they do. And no
//! product's configuration keys on an address prefix (`--cidr4`, `--cidr6`):
//! its replay counts each address.

use std::borrow::Cow;
use std::net::{Ipv4Addr, Ipv6Addr};

/// How a product reads a key from a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct KeyReading {
    /// How it reads an `xff` part.
    pub forwarded: ForwardedReading,
    /// Whether it keys on each address whatever `--cidr4`/`--cidr6` say: a
    /// rule's key cannot name a prefix, so every configuration `rlctl export`
    /// writes counts addresses (`$binary_remote_addr`, `src`,
    /// `remote_address`, AWS WAF's `IP`).
    pub whole_addresses: bool,
    /// The bytes it keeps of a key that is text (not one address), where it
    /// keeps a prefix: HAProxy's `type string len 128` tables store 128
    /// bytes, so keys that share them are one client there
    /// (`stksess_setkey`, `stktable_lookup_key` in src/stick_table.c).
    pub text_bytes: Option<usize>,
    /// Whether a request without a value for a one-part key that is text (a
    /// header, the user) is keyed by its address instead: Kong's
    /// rate-limiting takes `identifier or kong.client.get_forwarded_ip()`
    /// (`get_identifier` in kong/plugins/rate-limiting/handler.lua).
    pub missing_as_address: bool,
    /// Whether it compares an exempt client's value with a request's
    /// ignoring case, as [`same_ignoring_case`]: Kong's exemption routes
    /// match headers that way. It changes no key, so no key read this way
    /// keeps it ([`super::KeySpec::read_as`]).
    pub exempt_ignores_case: bool,
}

/// Whether a request's header value `value` matches an exempt client's
/// `client` as Kong's exemption route compares them: the route's expression
/// is `any(lower(http.headers.NAME)) == "VALUE"` with the value lowered by Lua
/// (`get_expression` in kong/router/transform.lua), and atc-router lowers the
/// request's side with Rust's `str::to_lowercase` (`Predicate::execute` in
/// src/interpreter.rs). Lua's `lower` changes ASCII letters only, so the
/// Kong export writes a client with other upper-case letters lowered
/// ([`kong_header_value`]), and the two sides meet when their Unicode
/// lower cases do: `Partner` is `partner`, `ÉTÉ` is `été`, and `\u{212A}ey`
/// (a Kelvin sign) is `key`.
pub fn same_ignoring_case(value: &str, client: &str) -> bool {
    match value.is_ascii() && client.is_ascii() {
        true => value.eq_ignore_ascii_case(client),
        false => value.to_lowercase() == client.to_lowercase(),
    }
}

/// An exempt client's header value as the Kong export writes it: as given
/// when Lua's ASCII-only `lower` lowers it as Rust's `to_lowercase` would,
/// else lowered (an `É` left for Lua would be compared with a request's
/// lowered `é`, and match nothing).
pub fn kong_header_value(client: &str) -> Cow<'_, str> {
    let lowered = client.to_lowercase();
    match lowered == client.to_ascii_lowercase() {
        true => Cow::Borrowed(client),
        false => Cow::Owned(lowered),
    }
}

impl KeyReading {
    /// Reads `xff` parts `forwarded`'s way, and each address whole.
    pub fn addresses(forwarded: ForwardedReading) -> Self {
        KeyReading {
            forwarded,
            whole_addresses: true,
            text_bytes: None,
            missing_as_address: false,
            exempt_ignores_case: false,
        }
    }

    /// A word for the key text of a key read this way (never shown as a
    /// rule's key, which keeps the policy's text).
    pub(super) fn label(self) -> String {
        let forwarded = match self.forwarded {
            ForwardedReading::AsLogged => None,
            ForwardedReading::TokenAsWritten => Some("token as written"),
            ForwardedReading::AddressElseConnection => Some("address else connection"),
            ForwardedReading::AddressOrUncounted => Some("address or uncounted"),
        };
        let whole = self.whole_addresses.then_some("each address");
        let bytes = self.text_bytes.map(|n| format!("first {n} bytes"));
        let missing = self.missing_as_address.then_some("else address");
        (forwarded
            .into_iter()
            .chain(whole)
            .chain(missing)
            .map(str::to_string)
            .chain(bytes))
        .collect::<Vec<_>>()
        .join(", ")
    }

    /// Whether a key of several parts needs every one of them.
    pub(super) fn needs_every_part(self) -> bool {
        self.forwarded == ForwardedReading::AddressOrUncounted
    }
}

/// How a product reads an `xff` key part from X-Forwarded-For.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ForwardedReading {
    /// As rlctl's policies read them: `xff` is the first token of
    /// X-Forwarded-For whatever it holds (`unknown` included), else the
    /// connecting address; a key of several parts counts while any part has a
    /// value.
    #[default]
    AsLogged,
    /// The nginx configuration `rlctl export` writes: its `map`
    /// (`^[\s,]*([^\s,]+)`) keys on the first token as text, port left out,
    /// without reading an address in it (`2001:DB8::1`, `2001:db8::1` and
    /// `::ffff:192.0.2.7` are three clients there, one to the policy), else
    /// `$remote_addr`.
    TokenAsWritten,
    /// HAProxy's `req.hdr_ip(x-forwarded-for,1)`, falling back to `src`: the
    /// first element of the header when it is an address (IPv4, with or
    /// without a port, IPv6, bracketed or not), else the connecting address
    /// (`smp_fetch_hdr_ip` in HAProxy's src/http_fetch.c).
    AddressElseConnection,
    /// AWS WAF's `ForwardedIPConfig` with the fallback `NO_MATCH`: the first
    /// element of the header when it is an IPv4 or IPv6 address; otherwise,
    /// and when the header is missing, the request has no key and the rule
    /// does not count it. A key of several parts (`CUSTOM_KEYS`) has none
    /// unless every part has a value.
    AddressOrUncounted,
}

/// The first element of an X-Forwarded-For field as a gateway splits the
/// header: up to the first comma, without surrounding blanks (`-`, as nginx
/// logs a missing header, is no address).
pub(super) fn first_element(field: &[u8]) -> &[u8] {
    let end = memchr::memchr(b',', field).unwrap_or(field.len());
    field[..end].trim_ascii()
}

/// The address HAProxy's `req.hdr_ip` reads in one header value, as text:
/// a dotted quad of decimal numbers up to 255 (leading zeros read as
/// decimal, as `url2ipv4` does), alone or followed by `:` and a port up to
/// 65535; or an IPv6 address, alone or in brackets without a port.
pub(super) fn haproxy_address(value: &[u8]) -> Option<Cow<'_, str>> {
    let text = std::str::from_utf8(value).ok()?;
    if let Some((v4, len)) = url2ipv4(value) {
        let rest = &text[len..];
        let port_ok = |p: &str| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u32>().is_ok_and(|n| n <= 65_535)
        };
        return match rest.strip_prefix(':') {
            None if rest.is_empty() => Some(Cow::Owned(v4.to_string())),
            Some(port) if port_ok(port) => Some(Cow::Owned(v4.to_string())),
            _ => None,
        };
    }
    let inner = match text.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']')?,
        None => text,
    };
    inner.parse::<Ipv6Addr>().ok().map(|_| Cow::Borrowed(inner))
}

/// HAProxy's `url2ipv4`: the IPv4 address at the start of `text` and the
/// bytes it spans; `None` when fewer than four numbers, a number above 255 or
/// a fifth number come first.
fn url2ipv4(text: &[u8]) -> Option<(Ipv4Addr, usize)> {
    let (mut octets, mut parts, mut in_number) = ([0u32; 4], 0usize, false);
    let mut len = 0;
    for &b in text {
        match b {
            b'0'..=b'9' => {
                if !in_number {
                    if parts == 4 {
                        return None;
                    }
                    parts += 1;
                    in_number = true;
                }
                let octet = &mut octets[parts - 1];
                *octet = *octet * 10 + u32::from(b - b'0');
                if *octet > 255 {
                    return None;
                }
            }
            b'.' if in_number && parts < 4 => in_number = false,
            b'.' => return None,
            _ => break,
        }
        len += 1;
    }
    (parts == 4 && in_number).then(|| {
        let [a, b, c, d] = octets.map(|o| o as u8);
        (Ipv4Addr::new(a, b, c, d), len)
    })
}

/// The address AWS WAF reads in one header value: an IPv4 or IPv6 address
/// as the standard parsers take it.
pub(super) fn plain_address(value: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(value).ok()?;
    (text.parse::<Ipv4Addr>().is_ok() || text.parse::<Ipv6Addr>().is_ok()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_element_is_up_to_the_first_comma() {
        assert_eq!(first_element(b" unknown , 1.2.3.4"), b"unknown");
        assert_eq!(first_element(b", 1.2.3.4"), b"");
        assert_eq!(first_element(b"1.2.3.4"), b"1.2.3.4");
        assert_eq!(first_element(b"-"), b"-");
    }

    #[test]
    fn haproxy_reads_what_url2ipv4_and_inet_pton_read() {
        let read = |v: &str| haproxy_address(v.as_bytes()).map(Cow::into_owned);
        assert_eq!(read("192.0.2.7").as_deref(), Some("192.0.2.7"));
        assert_eq!(read("192.0.2.7:8080").as_deref(), Some("192.0.2.7"));
        assert_eq!(read("010.000.002.007").as_deref(), Some("10.0.2.7"));
        assert_eq!(read("2001:db8::1").as_deref(), Some("2001:db8::1"));
        assert_eq!(read("[2001:db8::1]").as_deref(), Some("2001:db8::1"));
        for no in [
            "unknown",
            "",
            "-",
            "_hidden",
            "192.0.2",
            "192.0.2.7.1",
            "192.0.2.256",
            "192.0.2.7:",
            "192.0.2.7:65536",
            "192.0.2.7:8a",
            "192.0.2.7x",
            "[2001:db8::1]:443",
            "host.example",
            ".1.2.3.4",
        ] {
            assert_eq!(read(no), None, "{no}");
        }
    }

    proptest::proptest! {
        /// Any header: the first element is a trimmed piece of it without a
        /// comma, and what HAProxy or AWS WAF read there is an address.
        #[test]
        fn readings_of_any_header_are_addresses_or_nothing(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"192.0.2.7"[..], b"010", b".", b":", b"8080", b"[", b"]", b"::1",
                    b"2001:db8::", b"ffff", b",", b" ", b"\t", b"unknown", b"-", b"\xff",
                    b"\xc2\xa0", b"999", b"0",
                ]),
                0..10,
            )
        ) {
            let field = parts.concat();
            let first = first_element(&field);
            proptest::prop_assert!(!first.contains(&b','));
            proptest::prop_assert_eq!(first, first.trim_ascii());
            if let Some(a) = haproxy_address(first) {
                proptest::prop_assert!(a.parse::<std::net::IpAddr>().is_ok(), "{a}");
            }
            if let Some(a) = plain_address(first) {
                proptest::prop_assert!(a.parse::<std::net::IpAddr>().is_ok(), "{a}");
                proptest::prop_assert!(haproxy_address(first).is_some(), "{a}");
            }
        }
    }

    #[test]
    fn kong_compares_header_values_by_their_lower_case() {
        assert!(same_ignoring_case("partner", "Partner"));
        assert!(same_ignoring_case("été", "ÉTÉ"));
        assert!(
            same_ignoring_case("\u{212A}ey", "key"),
            "a Kelvin sign lowers to k"
        );
        assert!(!same_ignoring_case("partner", "partners"));
        assert!(!same_ignoring_case("ete", "été"));
        assert_eq!(kong_header_value("Partner"), "Partner");
        assert_eq!(kong_header_value("ÉTÉ-Key"), "été-key");
    }

    proptest::proptest! {
        /// What the Kong export writes for an exempt client matches a
        /// request's value, in Kong, exactly when the replays say it does:
        /// the request's side lowered by Rust's `to_lowercase` equals the
        /// written value lowered by Lua (ASCII letters only).
        #[test]
        fn the_written_exempt_value_matches_as_the_replays_compare(
            value in "[aAeEéÉkK\u{212A}İiıΣσς -]{0,6}",
            client in "[aAeEéÉkK\u{212A}İiıΣσς -]{0,6}",
        ) {
            let kong = value.to_lowercase() == kong_header_value(&client).to_ascii_lowercase();
            proptest::prop_assert_eq!(same_ignoring_case(&value, &client), kong);
        }
    }

    #[test]
    fn aws_waf_reads_a_plain_address() {
        assert_eq!(plain_address(b"192.0.2.7"), Some("192.0.2.7"));
        assert_eq!(plain_address(b"2001:db8::1"), Some("2001:db8::1"));
        for no in [
            "unknown",
            "",
            "-",
            "192.0.2.7:80",
            "[2001:db8::1]",
            "010.0.2.7",
        ] {
            assert_eq!(plain_address(no.as_bytes()), None, "{no}");
        }
    }
}
