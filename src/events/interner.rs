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
        let Interner { text, ends, table } = self;
        let found = table.find(table_hash(hash), |slot| {
            slot.hash == hash && bytes_of(text, ends, slot.id) == name.as_bytes()
        });
        if let Some(slot) = found {
            return slot.id;
        }
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
        let hash = hash_name(name.as_bytes());
        self.table
            .find(table_hash(hash), |slot| {
                slot.hash == hash && bytes_of(&self.text, &self.ends, slot.id) == name.as_bytes()
            })
            .map(|slot| slot.id)
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
}
