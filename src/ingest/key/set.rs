//! The keys an ingestion reads: the client key of `--key` and the keys of
//! policy rules, exemptions and gateway readings beside it, sharing one list
//! of `field:NAME` fields for the parser to capture.

use super::{KeyPart, KeyReading, KeySpec};

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

    /// Every key, the primary one first.
    fn all(&self) -> impl Iterator<Item = &KeySpec> {
        std::iter::once(&self.primary).chain(&self.extra)
    }

    /// The key whose text is `text`, the primary one or another.
    pub fn by_text(&self, text: &str) -> Option<&KeySpec> {
        self.all().find(|k| k.text == text)
    }

    /// Adds another key (once per distinct text); returns its index in `extra`.
    pub fn add(&mut self, spec: KeySpec) -> usize {
        if let Some(i) = self.extra.iter().position(|k| {
            k.text == spec.text
                && k.cidr4 == spec.cidr4
                && k.cidr6 == spec.cidr6
                && k.reading == spec.reading
        }) {
            return i;
        }
        let spec = self.share_fields(spec);
        self.extra.push(spec);
        self.extra.len() - 1
    }

    /// Adds the keys a policy's rules and exemptions count by (`used`; the
    /// primary key is not added again), and every key, the primary one
    /// included, as each of `readings` derives it where that can differ
    /// ([`KeySpec::read_as`]), for a replay as the products reading so.
    pub fn add_policy_keys<'k>(
        &mut self,
        used: impl IntoIterator<Item = &'k KeySpec>,
        readings: &[KeyReading],
    ) {
        for key in used {
            if key.text != self.primary.text {
                self.add(key.clone());
            }
        }
        let read: Vec<KeySpec> = (self.all())
            .flat_map(|key| readings.iter().filter_map(|&r| key.read_as(r)))
            .collect();
        for key in read {
            self.add(key);
        }
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
        self.all()
            .any(|spec| spec.parts.contains(&KeyPart::UserAgent))
    }

    /// True when any key reads `$http_x_forwarded_for` (`xff`).
    pub fn uses_xff(&self) -> bool {
        self.all().any(|spec| spec.parts.contains(&KeyPart::Xff))
    }

    /// Moves the fields of `spec` into the shared list, renumbering its parts.
    fn share_fields(&mut self, mut spec: KeySpec) -> KeySpec {
        for part in &mut spec.parts {
            if let KeyPart::Field(i) = part {
                *i = self.field_index(&spec.fields[*i]);
            }
        }
        spec.fields = self.fields.clone();
        spec
    }
}
