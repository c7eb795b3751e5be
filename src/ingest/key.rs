//! The client key (`--key`): which fields identify "one client", and the
//! optional aggregation of addresses into CIDR prefixes (`--cidr4`, `--cidr6`).

use std::borrow::Cow;
use std::fmt::Write;
use std::net::IpAddr;

use super::IngestError;
use super::record::Record;

/// One part of a client key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPart {
    /// The connecting address (the last address when a proxy list was logged there).
    Ip,
    /// The first address of X-Forwarded-For when logged, else the address.
    Xff,
    /// `$remote_user`.
    User,
    /// Any parsed field or JSON path; the index into `Record::extra`.
    Field(usize),
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

    /// The value of one part of the key.
    fn value<'r>(&self, part: &KeyPart, record: &'r Record<'_>) -> Cow<'r, str> {
        match part {
            KeyPart::Ip => last_address(&record.addr)
                .map(|a| self.aggregate(a))
                .unwrap_or_default(),
            KeyPart::Xff => match first_address(&record.xff) {
                Some(first) => self.aggregate(first),
                None => first_address(&record.addr)
                    .map(|a| self.aggregate(a))
                    .unwrap_or_default(),
            },
            KeyPart::User => present(&record.user),
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

fn present(value: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(value.trim_ascii())
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
    if field.iter().any(|&b| NEEDS_SPLITTING[usize::from(b)]) {
        return None;
    }
    let text = std::str::from_utf8(field).expect("ASCII is UTF-8");
    Some((!text.is_empty() && text != "-").then_some(text))
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
mod tests {
    use super::*;

    fn key(
        spec_text: &str,
        cidr4: Option<u8>,
        cidr6: Option<u8>,
        addr: &str,
        xff: &str,
        user: &str,
    ) -> (String, bool) {
        let spec = KeySpec::parse(spec_text, cidr4, cidr6).unwrap();
        let mut r = Record::default();
        r.clear(spec.fields.len());
        r.addr = Cow::Owned(addr.as_bytes().to_vec());
        r.xff = Cow::Owned(xff.as_bytes().to_vec());
        r.user = Cow::Owned(user.as_bytes().to_vec());
        for slot in &mut r.extra {
            *slot = Cow::Owned(b"k-123".to_vec());
        }
        let mut out = String::new();
        let ok = spec.build(&r, &mut out);
        let mut scratch = String::new();
        let direct = spec.key(&r, &mut scratch);
        assert_eq!(direct, ok.then_some(out.as_str()), "{spec_text}");
        (out, ok)
    }

    #[test]
    fn ip_takes_the_last_logged_address() {
        assert_eq!(
            key("ip", None, None, "10.0.0.2, 10.0.0.1, 127.0.0.1", "", "").0,
            "127.0.0.1"
        );
        assert_eq!(
            key(
                "ip",
                None,
                None,
                r#""10.5.102.222, 199.96.1.1" 10.2.1.185"#,
                "",
                ""
            )
            .0,
            "10.2.1.185"
        );
    }

    #[test]
    fn xff_takes_the_first_forwarded_address_else_the_address() {
        assert_eq!(
            key("xff", None, None, "10.0.0.1", "203.0.113.9, 10.0.0.1", "").0,
            "203.0.113.9"
        );
        assert_eq!(key("xff", None, None, "10.0.0.1", "-", "").0, "10.0.0.1");
        assert_eq!(
            key("xff", None, None, "10.0.0.2, 10.0.0.1, 127.0.0.1", "", "").0,
            "10.0.0.2"
        );
    }

    #[test]
    fn combined_keys_and_fields() {
        assert_eq!(
            key("ip+user", None, None, "1.2.3.4", "", "alice"),
            ("1.2.3.4+alice".into(), true)
        );
        assert_eq!(
            key("user", None, None, "1.2.3.4", "", "-"),
            ("-".into(), false)
        );
        assert_eq!(key("field:api_key", None, None, "", "", "").0, "k-123");
        assert!(KeySpec::parse("ip+bogus", None, None).is_err());
        assert!(KeySpec::parse("field:", None, None).is_err());
    }

    #[test]
    fn xff_use_is_known() {
        let mut set = KeySet::new(KeySpec::parse("ip", None, None).unwrap());
        assert!(!set.uses_xff());
        set.add(KeySpec::parse("user+xff", None, None).unwrap());
        assert!(set.uses_xff());
    }

    #[test]
    fn key_sets_share_fields() {
        let mut set = KeySet::new(KeySpec::parse("field:a+ip", None, None).unwrap());
        let i = set.add(KeySpec::parse("field:b+field:a", None, None).unwrap());
        assert_eq!(
            set.add(KeySpec::parse("field:b+field:a", None, None).unwrap()),
            i
        );
        assert_eq!(set.fields, ["a", "b"]);
        assert_eq!(
            set.extra[i].parts,
            vec![KeyPart::Field(1), KeyPart::Field(0)]
        );
        assert_eq!(set.primary.parts, vec![KeyPart::Field(0), KeyPart::Ip]);
    }

    #[test]
    fn first_and_last_addresses_agree_with_the_list() {
        let fields: [&[u8]; 10] = [
            b"",
            b"-",
            b"1.2.3.4",
            b"10.0.0.2, 10.0.0.1",
            b"\"a, b\" c",
            b" - ,x",
            b"a\x0bb",
            b"a\xc2\xa0b",
            b"\xff1.2.3.4",
            b"2001:db8::1",
        ];
        for field in fields {
            let list = address_list(field);
            assert_eq!(first_address(field), list.first().copied(), "{field:?}");
            assert_eq!(last_address(field), list.last().copied(), "{field:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn first_and_last_addresses_agree_on_random_fields(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"1.2.3.4"[..], b"-", b",", b" ", b"\"", b"\t", b"\x0b", b"\xc2\xa0",
                    b"\xe2\x80\xa8", b"\xff", b"a", b"::1",
                ]),
                0..8,
            )
        ) {
            let field = parts.concat();
            let list = address_list(&field);
            proptest::prop_assert_eq!(first_address(&field), list.first().copied());
            proptest::prop_assert_eq!(last_address(&field), list.last().copied());
        }
    }

    #[test]
    fn cidr_aggregation() {
        assert_eq!(
            key("ip", Some(24), None, "192.0.2.77", "", "").0,
            "192.0.2.0/24"
        );
        assert_eq!(
            key("ip", Some(24), Some(64), "2001:db8:1:2:aaaa::1", "", "").0,
            "2001:db8:1:2::/64"
        );
        assert_eq!(
            key("ip", None, Some(64), "192.0.2.77", "", "").0,
            "192.0.2.77"
        );
        assert_eq!(
            key("ip", Some(0), None, "192.0.2.77", "", "").0,
            "0.0.0.0/0"
        );
        assert_eq!(
            key("ip", Some(24), None, "host.example", "", "").0,
            "host.example"
        );
        assert_eq!(key("ip", None, None, "", "", ""), ("-".into(), false));
    }
}
