//! The client key (`--key`): which fields identify "one client", and the
//! optional aggregation of addresses into CIDR prefixes (`--cidr4`, `--cidr6`).

use std::borrow::Cow;

mod address;
mod canonical;
mod reading;
mod set;
mod value;

pub use address::{address_list, canonical_address, first_address, last_address, without_port};
use address::{aggregate, bare_address, host_span, single_address_bytes};
pub use canonical::canonical_chunk;
pub use reading::{ForwardedReading, KeyReading, kong_header_value, same_ignoring_case};
pub use set::KeySet;
pub use value::KeyValue;
use value::first_bytes;

use super::IngestError;
use super::record::{Record, SkipReason};

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

/// A parsed `--key` with its CIDR settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub parts: Vec<KeyPart>,
    /// The `field:NAME` names, in the order of `KeyPart::Field` indices.
    pub fields: Vec<String>,
    pub cidr4: Option<u8>,
    pub cidr6: Option<u8>,
    /// The `--key` text as given, for messages and policies (with the
    /// reading's label for a key read otherwise than as logged).
    pub text: String,
    /// How its parts are read from a request.
    pub reading: KeyReading,
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
        let addresses = parts
            .iter()
            .any(|p| matches!(p, KeyPart::Ip | KeyPart::Xff));
        if (cidr4.is_some() || cidr6.is_some()) && !addresses {
            return Err(IngestError::Usage(format!(
                "--cidr4/--cidr6 group client addresses, and --key {text} has none: \
                 add ip or xff to the key (--key ip+user), or drop the prefix"
            )));
        }
        Ok(KeySpec {
            parts,
            fields,
            cidr4,
            cidr6,
            text: text.to_string(),
            reading: KeyReading::default(),
        })
    }

    /// This key as a product reading requests `reading`'s way derives it, when
    /// that can differ from the key as logged: for `xff` parts, for keys of
    /// several parts where a reading needs every part, and for address parts
    /// aggregated into prefixes, which a reading of whole addresses drops.
    /// A key already read a product's way is not read again.
    pub fn read_as(&self, reading: KeyReading) -> Option<KeySpec> {
        if self.reading != KeyReading::default() {
            return None;
        }
        let forwarded_differs = self.parts.contains(&KeyPart::Xff)
            || (reading.needs_every_part() && self.parts.len() > 1);
        let prefixes = self.has_prefixes();
        // What the reading changes, and nothing it cannot, so that the
        // readings of several products that derive one key share its column.
        let read = KeyReading {
            forwarded: match forwarded_differs {
                true => reading.forwarded,
                false => self.reading.forwarded,
            },
            whole_addresses: match prefixes {
                true => reading.whole_addresses,
                false => self.reading.whole_addresses,
            },
            text_bytes: match self.is_text() {
                true => reading.text_bytes,
                false => self.reading.text_bytes,
            },
            missing_as_address: match self.is_text() && self.parts.len() == 1 {
                true => reading.missing_as_address,
                false => self.reading.missing_as_address,
            },
            exempt_ignores_case: false,
        };
        let (cidr4, cidr6) = match read.whole_addresses {
            true => (None, None),
            false => (self.cidr4, self.cidr6),
        };
        (read != self.reading).then(|| KeySpec {
            text: format!("{} ({})", self.text, read.label()),
            reading: read,
            cidr4,
            cidr6,
            ..self.clone()
        })
    }

    /// Whether the key is text to a product, not one address (`ip` or
    /// `xff` alone).
    pub fn is_text(&self) -> bool {
        !matches!(self.parts.as_slice(), [KeyPart::Ip | KeyPart::Xff])
    }

    /// Whether the key aggregates addresses into prefixes (`--cidr4`,
    /// `--cidr6` with an `ip` or `xff` part).
    pub fn has_prefixes(&self) -> bool {
        (self.cidr4.is_some() || self.cidr6.is_some())
            && (self.parts.iter()).any(|p| matches!(p, KeyPart::Ip | KeyPart::Xff))
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
            reading: KeyReading::default(),
        }
    }

    /// Whether the key is one address, which [`Self::key_value`] gives as it
    /// was logged: the names of such a key are put in canonical form once a
    /// chunk is parsed ([`canonical_names`]), not line by line.
    pub fn is_one_address(&self) -> bool {
        matches!(self.parts.as_slice(), [KeyPart::Ip])
            && self.cidr4.is_none()
            && self.cidr6.is_none()
    }

    /// A key value given by hand (a policy's exempt `client`, `--exclude`)
    /// as ingestion writes keys: its address parts (`ip`, `xff`, and the
    /// address of a prefix such as `2001:DB8::/64`) in canonical form, so
    /// that `2001:DB8::1` or `::ffff:10.0.0.7` names the client a server
    /// would (a value whose parts cannot be told apart by `+` stays as
    /// given). Read as nginx's map reads X-Forwarded-For
    /// ([`ForwardedReading::TokenAsWritten`]), `xff` parts stay as given.
    pub fn as_keyed(&self, value: &str) -> String {
        let pieces: Vec<&str> = value.split('+').collect();
        if pieces.len() != self.parts.len() {
            return value.to_string();
        }
        let as_written = self.reading.forwarded == ForwardedReading::TokenAsWritten;
        pieces
            .iter()
            .zip(&self.parts)
            .map(|(piece, part)| match (part, piece.split_once('/')) {
                (KeyPart::Xff, _) if as_written => Cow::Borrowed(*piece),
                // A prefix of `--cidr4/6` (`2001:DB8::/64`): its address.
                (KeyPart::Ip | KeyPart::Xff, Some((address, bits))) => {
                    Cow::Owned(format!("{}/{bits}", canonical_address(address)))
                }
                (KeyPart::Ip | KeyPart::Xff, None) => canonical_address(piece),
                _ => Cow::Borrowed(*piece),
            })
            .collect::<Vec<_>>()
            .join("+")
    }

    /// Whether a key value given by hand (parts joined by `+`) names an
    /// address prefix (`192.0.2.0/24`) in one of its address parts.
    pub fn names_a_prefix(&self, value: &str) -> bool {
        let pieces: Vec<&str> = value.split('+').collect();
        pieces.len() == self.parts.len()
            && (pieces.iter().zip(&self.parts)).any(|(piece, part)| {
                matches!(part, KeyPart::Ip | KeyPart::Xff) && piece.contains('/')
            })
    }

    /// Writes the key of `record` into `out`; false when every part is missing.
    pub fn build(&self, record: &Record<'_>, out: &mut String) -> bool {
        out.clear();
        let (mut any, mut every) = (false, true);
        for (i, part) in self.parts.iter().enumerate() {
            if i > 0 {
                out.push('+');
            }
            let value = self.value(part, record);
            let present = !value.is_empty() && value != "-";
            (any, every) = (any | present, every & present);
            out.push_str(if value.is_empty() { "-" } else { &value });
        }
        any && (every || !self.reading.needs_every_part())
    }

    /// The key of `record` as [`KeySpec::build`] writes it, or `None` when every
    /// part is missing; a one-part key is borrowed from the record when it can
    /// be, else the key is built in `scratch`.
    pub fn key<'r>(&self, record: &'r Record<'_>, scratch: &'r mut String) -> Option<&'r str> {
        let [part] = self.parts.as_slice() else {
            return self.build(record, scratch).then_some(scratch.as_str());
        };
        match self.value(part, record) {
            value if value.is_empty() || value == "-" => match self.reading.missing_as_address {
                true => self.address(record, scratch),
                false => None,
            },
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
        let Some(n) = self.reading.text_bytes else {
            return self.whole_key_value(record, scratch);
        };
        let mut whole = String::new();
        *scratch = first_bytes(self.whole_key_value(record, &mut whole)?.bytes(), n);
        Some(KeyValue::Text(scratch.as_str()))
    }

    /// [`Self::key_value`] before a reading keeps its first bytes.
    fn whole_key_value<'r>(
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
        match !logged.is_empty() && logged != b"-" {
            true => Some(KeyValue::Bytes(logged)),
            false if self.reading.missing_as_address => {
                self.address(record, scratch).map(KeyValue::Text)
            }
            false => None,
        }
    }

    /// The address of `record` (its `ip`, whole), for a request without a
    /// value read [`KeyReading::missing_as_address`].
    fn address<'r>(&self, record: &'r Record<'_>, scratch: &'r mut String) -> Option<&'r str> {
        let address = last_address(&record.addr).map(|a| canonical_address(without_port(a)))?;
        *scratch = address.into_owned();
        (!scratch.is_empty()).then_some(scratch.as_str())
    }

    /// Why `record` has no key: a field of it that is there but not UTF-8
    /// ([`SkipReason::ClientNotText`]), else every field missing.
    pub fn why_no_key(&self, record: &Record<'_>) -> SkipReason {
        match self
            .parts
            .iter()
            .any(|part| not_text(part_bytes(part, record)))
        {
            true => SkipReason::ClientNotText,
            false => SkipReason::NoClient,
        }
    }

    /// Whether the key of `record` holds bytes that are not UTF-8, written
    /// `\xHH` ([`value::escaped_text`]): a field the key takes as logged
    /// (the user, the user agent, a `field:NAME`) holds some. An address
    /// that is not UTF-8 is no address, and not in the key.
    pub fn writes_bytes_not_text(&self, record: &Record<'_>) -> bool {
        (self.parts.iter())
            .filter(|part| matches!(part, KeyPart::User | KeyPart::UserAgent | KeyPart::Field(_)))
            .any(|part| not_text(part_bytes(part, record)))
    }

    /// The value of one part of the key.
    fn value<'r>(&self, part: &KeyPart, record: &'r Record<'_>) -> Cow<'r, str> {
        match part {
            KeyPart::Ip => last_address(&record.addr)
                .map(|a| self.aggregate(without_port(a)))
                .unwrap_or_default(),
            KeyPart::Xff => {
                let connection = || {
                    first_address(&record.addr)
                        .map(|a| self.aggregate(without_port(a)))
                        .unwrap_or_default()
                };
                let first = || reading::first_element(&record.xff);
                match self.reading.forwarded {
                    ForwardedReading::AsLogged => match first_address(&record.xff) {
                        Some(first) => self.aggregate(without_port(first)),
                        None => connection(),
                    },
                    ForwardedReading::TokenAsWritten => (first_address(&record.xff))
                        .or_else(|| first_address(&record.addr))
                        .map(|a| Cow::Borrowed(without_port(a)))
                        .unwrap_or_default(),
                    ForwardedReading::AddressElseConnection => {
                        match reading::haproxy_address(first()) {
                            Some(Cow::Borrowed(a)) => self.aggregate(a),
                            Some(Cow::Owned(a)) => Cow::Owned(self.aggregate(&a).into_owned()),
                            None => connection(),
                        }
                    }
                    ForwardedReading::AddressOrUncounted => reading::plain_address(first())
                        .map(|a| self.aggregate(a))
                        .unwrap_or_default(),
                }
            }
            KeyPart::User => present(&record.user),
            KeyPart::UserAgent => present(&record.user_agent),
            KeyPart::Field(f) => present(&record.extra[*f]),
        }
    }

    /// [`aggregate`] with this key's `--cidr4` / `--cidr6`.
    fn aggregate<'a>(&self, addr: &'a str) -> Cow<'a, str> {
        aggregate(addr, self.cidr4, self.cidr6)
    }
}

/// The field of `record` that `part` reads.
fn part_bytes<'r>(part: &KeyPart, record: &'r Record<'_>) -> &'r [u8] {
    match part {
        KeyPart::Ip => &record.addr,
        KeyPart::Xff => &record.xff,
        KeyPart::User => &record.user,
        KeyPart::UserAgent => &record.user_agent,
        KeyPart::Field(f) => &record.extra[*f],
    }
}

/// Whether `bytes` are not UTF-8.
fn not_text(bytes: &[u8]) -> bool {
    !bytes.is_ascii() && std::str::from_utf8(bytes).is_err()
}

fn present(value: &[u8]) -> Cow<'_, str> {
    value::escaped_text(value.trim_ascii())
}

#[cfg(test)]
mod reading_tests;
#[cfg(test)]
mod tests;
