//! The client key (`--key`): which fields identify "one client", and the
//! optional aggregation of addresses into CIDR prefixes (`--cidr4`, `--cidr6`).

use std::borrow::Cow;
use std::fmt::Write;
use std::net::IpAddr;

use super::IngestError;
use super::record::Record;
use crate::events::{Id, Interner};

/// One part of a client key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPart {
    /// The connecting address (the last address when a proxy list was logged there).
    Ip,
    /// The first address of X-Forwarded-For when logged, else the address.
    Xff,
    /// `$remote_user`.
    User,
    /// `$http_user_agent` (not a `--key` part: client profiles read it).
    UserAgent,
    /// Any parsed field or JSON path; the index into `Record::extra`.
    Field(usize),
}

/// A record's key ([`KeySpec::key_value`]): logged bytes or built text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyValue<'r> {
    /// The bytes of one field as logged, read as UTF-8 with U+FFFD for invalid sequences.
    Bytes(&'r [u8]),
    /// Text built from the record.
    Text(&'r str),
}

impl KeyValue<'_> {
    /// The key's id in `names` (added when new).
    pub fn intern(self, names: &mut Interner) -> Id {
        match self {
            KeyValue::Bytes(bytes) => names.intern_lossy(bytes),
            KeyValue::Text(text) => names.intern(text),
        }
    }

    /// True when the key holds U+FFFD (bytes that are not UTF-8, or the character itself).
    pub fn has_replacement(self) -> bool {
        match self {
            KeyValue::Bytes(bytes) => {
                !bytes.is_ascii() && super::endpoint::lossy(bytes).contains('\u{fffd}')
            }
            KeyValue::Text(text) => !text.is_ascii() && text.contains('\u{fffd}'),
        }
    }
}

/// A parsed `--key` with its CIDR settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub parts: Vec<KeyPart>,
    /// The `field:NAME` names, in the order of `KeyPart::Field` indices.
    pub fields: Vec<String>,
    pub cidr4: Option<u8>,
    pub cidr6: Option<u8>,
    /// The `--key` text as given, for messages and policies.
    pub text: String,
}

impl KeySpec {
    /// Parses `ip`, `xff`, `user`, `field:NAME`, or several joined with `+`.
    pub fn parse(text: &str, cidr4: Option<u8>, cidr6: Option<u8>) -> Result<Self, IngestError> {
        let mut parts = Vec::new();
        let mut fields = Vec::new();
        for part in text.split('+') {
            parts.push(match part.trim() {
                "ip" => KeyPart::Ip,
                "xff" => KeyPart::Xff,
                "user" => KeyPart::User,
                other => match other.strip_prefix("field:").filter(|n| !n.is_empty()) {
                    Some(name) => {
                        fields.push(name.to_string());
                        KeyPart::Field(fields.len() - 1)
                    }
                    None => {
                        return Err(IngestError::Usage(format!(
                            "--key {text}: unknown part `{other}` (use ip, xff, user, field:NAME, joined with +)"
                        )));
                    }
                },
            });
        }
        Ok(KeySpec {
            parts,
            fields,
            cidr4,
            cidr6,
            text: text.to_string(),
        })
    }

    /// The key of the user agent alone (what client profiles read; `--key`
    /// does not offer it).
    pub fn user_agent() -> Self {
        KeySpec {
            parts: vec![KeyPart::UserAgent],
            fields: Vec::new(),
            cidr4: None,
            cidr6: None,
            text: "user_agent".into(),
        }
    }

    /// Writes the key of `record` into `out`; false when every part is missing.
    pub fn build(&self, record: &Record<'_>, out: &mut String) -> bool {
        out.clear();
        let mut any = false;
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push('+');
            }
            let value = self.value(part, record);
            any |= !value.is_empty() && value != "-";
            out.push_str(if value.is_empty() { "-" } else { &value });
        }
        any
    }

    /// The key of `record` as [`KeySpec::build`] writes it, or `None` when every
    /// part is missing; a one-part key is borrowed from the record when it can
    /// be, else the key is built in `scratch`.
    pub fn key<'r>(&self, record: &'r Record<'_>, scratch: &'r mut String) -> Option<&'r str> {
        let [part] = self.parts.as_slice() else {
            return self.build(record, scratch).then_some(scratch.as_str());
        };
        match self.value(part, record) {
            value if value.is_empty() || value == "-" => None,
            Cow::Borrowed(value) => Some(value),
            Cow::Owned(value) => {
                *scratch = value;
                Some(scratch.as_str())
            }
        }
    }

    /// The key of `record` as [`KeySpec::key`] gives it, as the logged bytes
    /// where the key is one field taken as logged (the user, the user agent, a
    /// `field:NAME`, or one address without `--cidr4/6`), so that a caller can
    /// intern them without checking bytes it has seen before
    /// ([`KeyValue::intern`]); as text otherwise.
    pub fn key_value<'r>(
        &self,
        record: &'r Record<'_>,
        scratch: &'r mut String,
    ) -> Option<KeyValue<'r>> {
        let logged = match self.parts.as_slice() {
            [KeyPart::User] => record.user.trim_ascii(),
            [KeyPart::UserAgent] => record.user_agent.trim_ascii(),
            [KeyPart::Field(f)] => record.extra[*f].trim_ascii(),
            [KeyPart::Ip] if self.cidr4.is_none() && self.cidr6.is_none() => {
                if bare_address(&record.addr) {
                    return Some(KeyValue::Bytes(&record.addr));
                }
                match single_address_bytes(&record.addr) {
                    Some(address) => &address[host_span(address)],
                    None => return self.key(record, scratch).map(KeyValue::Text),
                }
            }
            _ => return self.key(record, scratch).map(KeyValue::Text),
        };
        (!logged.is_empty() && logged != b"-").then_some(KeyValue::Bytes(logged))
    }

    /// The value of one part of the key.
    fn value<'r>(&self, part: &KeyPart, record: &'r Record<'_>) -> Cow<'r, str> {
        match part {
            KeyPart::Ip => last_address(&record.addr)
                .map(|a| self.aggregate(without_port(a)))
                .unwrap_or_default(),
            KeyPart::Xff => match first_address(&record.xff) {
                Some(first) => self.aggregate(without_port(first)),
                None => first_address(&record.addr)
                    .map(|a| self.aggregate(without_port(a)))
                    .unwrap_or_default(),
            },
            KeyPart::User => present(&record.user),
            KeyPart::UserAgent => present(&record.user_agent),
            KeyPart::Field(f) => present(&record.extra[*f]),
        }
    }

    /// Applies `--cidr4` / `--cidr6` to one address; anything that is not an IP stays as it is.
    fn aggregate<'a>(&self, addr: &'a str) -> Cow<'a, str> {
        if self.cidr4.is_none() && self.cidr6.is_none() {
            return Cow::Borrowed(addr);
        }
        match addr.parse::<IpAddr>() {
            Ok(IpAddr::V4(v4)) => match self.cidr4 {
                Some(bits) => {
                    let mask = if bits == 0 {
                        0
                    } else {
                        u32::MAX << (32 - u32::from(bits))
                    };
                    let net = std::net::Ipv4Addr::from(u32::from(v4) & mask);
                    Cow::Owned(format!("{net}/{bits}"))
                }
                None => Cow::Borrowed(addr),
            },
            Ok(IpAddr::V6(v6)) => match self.cidr6 {
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
                None => Cow::Borrowed(addr),
            },
            Err(_) => Cow::Borrowed(addr),
        }
    }
}

/// The client key of `--key` plus any other keys (policy rules keyed differently),
/// sharing one list of `field:NAME` fields for the parser to capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySet {
    pub primary: KeySpec,
    pub extra: Vec<KeySpec>,
    /// Every field any key names; `KeyPart::Field` indexes this list.
    pub fields: Vec<String>,
}

impl KeySet {
    /// A set holding only `primary`.
    pub fn new(primary: KeySpec) -> Self {
        let mut set = KeySet {
            primary: primary.clone(),
            extra: Vec::new(),
            fields: Vec::new(),
        };
        set.primary = set.share_fields(primary);
        set
    }

    /// Adds another key (once per distinct text); returns its index in `extra`.
    pub fn add(&mut self, spec: KeySpec) -> usize {
        if let Some(i) = self
            .extra
            .iter()
            .position(|k| k.text == spec.text && k.cidr4 == spec.cidr4 && k.cidr6 == spec.cidr6)
        {
            return i;
        }
        let spec = self.share_fields(spec);
        self.extra.push(spec);
        self.extra.len() - 1
    }

    /// The index of field `name` among the fields the parser captures, added
    /// when no key reads it yet (the virtual host that routes read).
    pub fn field_index(&mut self, name: &str) -> usize {
        match self.fields.iter().position(|f| f == name) {
            Some(i) => i,
            None => {
                self.fields.push(name.to_string());
                self.fields.len() - 1
            }
        }
    }

    /// True when any key reads the user agent.
    pub fn uses_user_agent(&self) -> bool {
        std::iter::once(&self.primary)
            .chain(&self.extra)
            .any(|spec| spec.parts.contains(&KeyPart::UserAgent))
    }

    /// True when any key reads `$http_x_forwarded_for` (`xff`).
    pub fn uses_xff(&self) -> bool {
        std::iter::once(&self.primary)
            .chain(&self.extra)
            .any(|spec| spec.parts.contains(&KeyPart::Xff))
    }

    /// Moves the fields of `spec` into the shared list, renumbering its parts.
    fn share_fields(&mut self, mut spec: KeySpec) -> KeySpec {
        for part in &mut spec.parts {
            if let KeyPart::Field(i) = part {
                let name = &spec.fields[*i];
                *i = match self.fields.iter().position(|f| f == name) {
                    Some(existing) => existing,
                    None => {
                        self.fields.push(name.clone());
                        self.fields.len() - 1
                    }
                };
            }
        }
        spec.fields = self.fields.clone();
        spec
    }
}

/// An address without its port: `1.2.3.4:5678` → `1.2.3.4`, `[2001:db8::1]:443`
/// and `[2001:db8::1]` → `2001:db8::1`, `host.example:8080` → `host.example`.
/// A bare IPv6 address (several colons) and a hostname stay as they are.
pub fn without_port(addr: &str) -> &str {
    // The span's ends are next to ASCII bytes (`[`, `]`, `:`), so on char boundaries.
    &addr[host_span(addr.as_bytes())]
}

/// Where the host of `addr` is ([`without_port`]).
fn host_span(addr: &[u8]) -> std::ops::Range<usize> {
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

fn present(value: &[u8]) -> Cow<'_, str> {
    super::endpoint::lossy(value.trim_ascii())
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
fn bare_address(field: &[u8]) -> bool {
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
fn single_address_bytes(field: &[u8]) -> Option<&[u8]> {
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

#[cfg(test)]
mod tests;
