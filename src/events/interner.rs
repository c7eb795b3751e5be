//! Interning strings to dense ids, with every name stored once in one text
//! buffer: memory is the names' bytes plus about 16 bytes per name, whatever
//! their number, and interning allocates nothing but amortised buffer growth.
//! The table keeps a 32-bit hash beside each id, so growing it rehashes no text.

use std::hash::Hasher;

use hashbrown::HashTable;
use rustc_hash::FxHasher;

use super::Id;

/// Maps strings to dense ids (in order of first interning) and back.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    /// Every name, one after another.
    text: String,
    /// Where each name ends in `text`; name `i` starts where name `i - 1` ends.
    ends: Vec<usize>,
    /// Ids with the hash of their name (so growing the table rehashes no text).
    table: HashTable<Slot>,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    id: Id,
    hash: u32,
}

/// The 32-bit hash of a name.
fn hash_name(name: &[u8]) -> u32 {
    let mut hasher = FxHasher::default();
    hasher.write(name);
    let h = hasher.finish();
    (h ^ (h >> 32)) as u32
}

/// Spreads a 32-bit hash over the 64 bits the table uses.
fn table_hash(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Interner {
    /// An empty interner with room for about `names` names of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Self {
        Interner {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(names),
            table: HashTable::with_capacity(names),
        }
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> Id {
        let hash = hash_name(name.as_bytes());
        match self.find(name.as_bytes(), hash) {
            Some(id) => id,
            None => self.insert_new(name, hash),
        }
    }

    /// The id of `bytes` read as UTF-8 with invalid sequences shown as U+FFFD
    /// (what `intern(&String::from_utf8_lossy(bytes))` gives), adding it when
    /// new. A name seen before is found by its bytes without validating them
    /// again: every stored name is valid UTF-8, so bytes that are not never
    /// match one and take the lossy way.
    pub fn intern_lossy(&mut self, bytes: &[u8]) -> Id {
        let hash = hash_name(bytes);
        if let Some(id) = self.find(bytes, hash) {
            return id;
        }
        match std::str::from_utf8(bytes) {
            Ok(name) => self.insert_new(name, hash),
            Err(_) => self.intern(&String::from_utf8_lossy(bytes)),
        }
    }

    fn find(&self, name: &[u8], hash: u32) -> Option<Id> {
        self.table
            .find(table_hash(hash), |slot| {
                slot.hash == hash && bytes_of(&self.text, &self.ends, slot.id) == name
            })
            .map(|slot| slot.id)
    }

    /// Adds `name`, which is not interned yet and hashes to `hash`.
    fn insert_new(&mut self, name: &str, hash: u32) -> Id {
        let Interner { text, ends, table } = self;
        let id = Id::try_from(ends.len()).expect("more than 4 billion distinct names");
        text.push_str(name);
        ends.push(text.len());
        table.insert_unique(table_hash(hash), Slot { id, hash }, |slot| {
            table_hash(slot.hash)
        });
        id
    }

    /// The id of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<Id> {
        self.find(name.as_bytes(), hash_name(name.as_bytes()))
    }

    /// The name behind `id`.
    pub fn name(&self, id: Id) -> &str {
        let (start, end) = span(&self.ends, id);
        &self.text[start..end]
    }

    /// How many distinct names.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when nothing was interned.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// All names in id order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).map(|i| self.name(i as Id))
    }

    /// Bytes held by this interner (names, offsets and table), for memory accounting.
    pub fn heap_bytes(&self) -> usize {
        self.text.capacity()
            + self.ends.capacity() * std::mem::size_of::<usize>()
            + self.table.allocation_size()
    }
}

fn span(ends: &[usize], id: Id) -> (usize, usize) {
    let i = id as usize;
    (if i == 0 { 0 } else { ends[i - 1] }, ends[i])
}

fn bytes_of<'t>(text: &'t str, ends: &[usize], id: Id) -> &'t [u8] {
    let (start, end) = span(ends, id);
    &text.as_bytes()[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_in_first_seen_order() {
        let mut i = Interner::default();
        assert_eq!(i.intern("a"), 0);
        assert_eq!(i.intern("b"), 1);
        assert_eq!(i.intern("a"), 0);
        assert_eq!(i.intern(""), 2);
        assert_eq!(i.intern(""), 2);
        assert_eq!(i.name(1), "b");
        assert_eq!(i.name(2), "");
        assert_eq!(i.get("c"), None);
        assert_eq!(i.get("b"), Some(1));
        assert_eq!(i.names().collect::<Vec<_>>(), ["a", "b", ""]);
    }

    #[test]
    fn many_names_survive_growth() {
        let mut i = Interner::default();
        for n in 0..10_000 {
            assert_eq!(i.intern(&format!("/api/users/{n}")), n);
        }
        for n in (0..10_000).rev() {
            assert_eq!(i.intern(&format!("/api/users/{n}")), n);
            assert_eq!(i.name(n), format!("/api/users/{n}"));
        }
        assert_eq!(i.len(), 10_000);
    }

    proptest::proptest! {
        /// Interning bytes lossily gives the ids and names that interning
        /// their `from_utf8_lossy` text gives, whatever the mix of valid and
        /// invalid UTF-8 (and of text that already holds U+FFFD).
        #[test]
        fn lossy_interning_equals_interning_the_lossy_text(
            names in proptest::collection::vec(
                proptest::sample::select(vec![
                    b"a".to_vec(), b"".to_vec(), b"\xff".to_vec(), "\u{fffd}".as_bytes().to_vec(),
                    b"a\xffb".to_vec(), "a\u{fffd}b".as_bytes().to_vec(), "é".as_bytes().to_vec(),
                    b"\xc3".to_vec(), b"Mozilla/5.0".to_vec(),
                ]),
                0..40,
            )
        ) {
            let (mut lossy, mut text) = (Interner::default(), Interner::default());
            for name in &names {
                let want = text.intern(&String::from_utf8_lossy(name));
                proptest::prop_assert_eq!(lossy.intern_lossy(name), want);
            }
            proptest::prop_assert_eq!(lossy.names().collect::<Vec<_>>(), text.names().collect::<Vec<_>>());
        }
    }
}
