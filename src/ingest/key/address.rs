//! One address field: its addresses (an X-Forwarded-For list, or the common
//! single address decided in one pass), an address's host without its port,
//! an IPv6 address's canonical text, and an address aggregated to its
//! `--cidr4` / `--cidr6` prefix.

use std::borrow::Cow;
use std::fmt::Write;
use std::net::{IpAddr, Ipv6Addr};

/// An address without its port: `1.2.3.4:5678` → `1.2.3.4`, `[2001:db8::1]:443`
/// and `[2001:db8::1]` → `2001:db8::1`, `host.example:8080` → `host.example`.
/// A bare IPv6 address (several colons) and a hostname stay as they are.
pub fn without_port(addr: &str) -> &str {
    // The span's ends are next to ASCII bytes (`[`, `]`, `:`), so on char boundaries.
    &addr[host_span(addr.as_bytes())]
}

/// Where the host of `addr` is ([`without_port`]).
pub(super) fn host_span(addr: &[u8]) -> std::ops::Range<usize> {
    if let Some(inner) = addr.strip_prefix(b"[") {
        return memchr::memchr(b']', inner).map_or(0..addr.len(), |end| 1..1 + end);
    }
    // A short loop, not a search: most addresses are a few bytes of IPv4
    // without a port.
    let Some(colon) = addr.iter().rposition(|&b| b == b':') else {
        return 0..addr.len();
    };
    let port = &addr[colon + 1..];
    let one_colon = !addr[..colon].contains(&b':');
    if one_colon && colon > 0 && !port.is_empty() && port.iter().all(u8::is_ascii_digit) {
        0..colon
    } else {
        0..addr.len()
    }
}

/// The text that stands for one IPv6 client however it was written: the
/// address in the canonical form of RFC 5952 (lower case, no leading zeros,
/// the longest run of zero groups as `::`), and an IPv4-mapped address
/// (`::ffff:192.0.2.7`, how dual-stack servers log IPv4 clients) as the IPv4
/// address it stands for, so that `2001:DB8:0:0::1` and `2001:db8::1` are one
/// client, as they are to a server keying on the binary address. Anything
/// else (IPv4, a hostname, `unknown`) stays as it is.
pub fn canonical_address(addr: &str) -> Cow<'_, str> {
    if !addr.contains(':') || written_canonically(addr.as_bytes()) {
        return Cow::Borrowed(addr);
    }
    let Ok(v6) = addr.parse::<Ipv6Addr>() else {
        return Cow::Borrowed(addr);
    };
    let canonical = match v6.to_ipv4_mapped() {
        Some(v4) => v4.to_string(),
        None => v6.to_string(),
    };
    match canonical == addr {
        true => Cow::Borrowed(addr),
        false => Cow::Owned(canonical),
    }
}

/// True when `text` is an IPv6 address written as [`canonical_address`]
/// leaves it: groups of lower-case hex without leading zeros, `::` for the
/// longest run of at least two zero groups (the first of equal runs) and
/// nowhere else, and not IPv4-mapped. Read in one pass, without the
/// standard parser and formatter (most IPv6 clients are written so, and
/// are checked once per name); `false` sends a text to them.
fn written_canonically(text: &[u8]) -> bool {
    let mut groups = [0u16; 8];
    let (mut count, mut gap) = (0, None);
    let mut i = 0;
    if text.starts_with(b"::") {
        gap = Some(0);
        i = 2;
    }
    while i < text.len() {
        let start = i;
        let mut value = 0u16;
        while i < text.len() && i - start < 4 {
            let digit = match text[i] {
                b @ b'0'..=b'9' => b - b'0',
                b @ b'a'..=b'f' => b - b'a' + 10,
                _ => break,
            };
            value = value << 4 | u16::from(digit);
            i += 1;
        }
        let leading_zero = i - start > 1 && text[start] == b'0';
        if i == start || leading_zero || count == 8 {
            return false;
        }
        groups[count] = value;
        count += 1;
        if i == text.len() {
            break;
        }
        if text[i] != b':' || i + 1 == text.len() {
            return false;
        }
        i += 1;
        if text[i] == b':' {
            if gap.is_some() {
                return false;
            }
            gap = Some(count);
            i += 1;
        }
    }
    // The zero groups `::` stands for, and where the longest run of zero
    // groups is in the address (the first of equal runs).
    let elided = match gap {
        Some(_) if count < 8 => 8 - count,
        Some(_) => return false,
        None if count == 8 => 0,
        None => return false,
    };
    let mut all = [0u16; 8];
    let at = gap.unwrap_or(count);
    all[..at].copy_from_slice(&groups[..at]);
    all[at + elided..].copy_from_slice(&groups[at..count]);
    let (mut longest, mut run) = ((0, 0), (0, 0));
    for (k, &g) in all.iter().enumerate() {
        run = if g == 0 {
            (run.0.min(k), run.1 + 1)
        } else {
            (k + 1, 0)
        };
        if run.1 > longest.1 {
            longest = run;
        }
    }
    let mapped = all[..5] == [0; 5] && all[5] == 0xffff;
    let gap_as_written = match gap {
        Some(at) => longest == (at, elided) && elided > 1,
        None => longest.1 < 2,
    };
    gap_as_written && !mapped
}

/// The addresses in an address or X-Forwarded-For field: separated by commas,
/// spaces or quotes; `-` and empty mean none (so does a field that is not UTF-8).
pub fn address_list(field: &[u8]) -> Vec<&str> {
    addresses(field).collect()
}

/// The last address of a field ([`address_list`] without building the list).
pub fn last_address(field: &[u8]) -> Option<&str> {
    match single_address(field) {
        Some(single) => single,
        None => addresses(field).next_back(),
    }
}

/// The first address of a field ([`address_list`] without building the list).
pub fn first_address(field: &[u8]) -> Option<&str> {
    match single_address(field) {
        Some(single) => single,
        None => addresses(field).next(),
    }
}

fn addresses(field: &[u8]) -> impl DoubleEndedIterator<Item = &str> {
    let text = std::str::from_utf8(field).unwrap_or("");
    text.split(|c: char| c == ',' || c == '"' || c.is_whitespace())
        .filter(|a| !a.is_empty() && *a != "-")
}

/// The common case decided in one pass: an ASCII field without separators is a
/// single address (or none when empty or `-`). `None` when the field needs splitting.
fn single_address(field: &[u8]) -> Option<Option<&str>> {
    let field = single_address_bytes(field)?;
    let text = std::str::from_utf8(field).expect("ASCII is UTF-8");
    Some((!text.is_empty() && text != "-").then_some(text))
}

/// True for the common address field, 8 to 16 bytes of ASCII from `-` to
/// DEL without a `:` and not starting with `[` (an IPv4 address, a hostname):
/// a single address without a port, so the key is the field as it is (what
/// [`single_address_bytes`] and [`host_span`] would leave whole). Decided on
/// two overlapping 8-byte words, without a loop over the bytes.
#[inline]
pub(super) fn bare_address(field: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let (Some(head), Some(tail)) = (field.first_chunk::<8>(), field.last_chunk::<8>()) else {
        return false;
    };
    // Any byte of `x` below `n` (n at most 0x80) or at or above 0x80, or a
    // colon: the usual "has a byte less than" test (exact in whether any
    // byte is, even when bits above the first such byte are spurious).
    let odd = |x: u64| {
        let below = x.wrapping_sub(ONES * 0x2d) & !x;
        let colons = x ^ (ONES * u64::from(b':'));
        let colon = colons.wrapping_sub(ONES) & !colons;
        (x | below | colon) & HIGH != 0
    };
    field.len() <= 16
        && head[0] != b'['
        && !odd(u64::from_le_bytes(*head))
        && !odd(u64::from_le_bytes(*tail))
}

/// `field` when it is ASCII without separators (one address, or none).
pub(super) fn single_address_bytes(field: &[u8]) -> Option<&[u8]> {
    (!field.iter().any(|&b| NEEDS_SPLITTING[usize::from(b)])).then_some(field)
}

/// Bytes that make a field need [`addresses`]: the separators (`,`, `"` and the
/// ASCII characters `char::is_whitespace` accepts) and any byte that is not ASCII.
const NEEDS_SPLITTING: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b >= 0x80 || matches!(b as u8, b',' | b'"' | b' ' | b'\t'..=b'\r');
        b += 1;
    }
    table
};

/// Applies `--cidr4` / `--cidr6` to one address; anything that is not an
/// IP stays as it is. An IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, as
/// dual-stack servers log IPv4 clients) is the IPv4 client it stands for;
/// an IPv6 address left whole is written canonically
/// ([`canonical_address`]).
pub fn aggregate<'a>(addr: &'a str, cidr4: Option<u8>, cidr6: Option<u8>) -> Cow<'a, str> {
    if cidr4.is_none() && cidr6.is_none() {
        return canonical_address(addr);
    }
    let ip = match addr.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => Ok(v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4)),
        other => other,
    };
    match ip {
        Ok(IpAddr::V4(v4)) => match cidr4 {
            Some(bits) => {
                let mask = if bits == 0 {
                    0
                } else {
                    u32::MAX << (32 - u32::from(bits))
                };
                let net = std::net::Ipv4Addr::from(u32::from(v4) & mask);
                Cow::Owned(format!("{net}/{bits}"))
            }
            None => canonical_address(addr),
        },
        Ok(IpAddr::V6(v6)) => match cidr6 {
            Some(bits) => {
                let mask = if bits == 0 {
                    0
                } else {
                    u128::MAX << (128 - u32::from(bits))
                };
                let net = std::net::Ipv6Addr::from(u128::from(v6) & mask);
                let mut s = String::new();
                let _ = write!(s, "{net}/{bits}");
                Cow::Owned(s)
            }
            None => canonical_address(addr),
        },
        Err(_) => Cow::Borrowed(addr),
    }
}

#[cfg(test)]
mod tests;
