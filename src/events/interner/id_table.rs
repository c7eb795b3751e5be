//! The interner's lookup table: ids found by the hash of their name, laid out
//! as a SwissTable (one control byte per bucket holding 7 bits of the hash,
//! read eight at a time, next to an array of ids), the layout `hashbrown`
//! uses, at the same 5 bytes a bucket and the same load of at most 7/8.
//!
//! It is written here for one thing `hashbrown` does not offer: the buckets a
//! coming lookup will read can be prefetched. In a table of a million names
//! every lookup is a cache miss or two; the interner looks up a batch of
//! names one after another, and asking for the lines of the names a few
//! places ahead lets those misses overlap instead of waiting one by one.
//! Names are never removed, so there are no tombstones.

use super::Id;

/// Control bytes read and matched at a time.
const GROUP: usize = 8;
/// The control byte of an empty bucket (a full one holds 7 bits of its hash).
const EMPTY: u8 = 0x80;
/// The fewest buckets of a table that has any.
const MIN_BUCKETS: usize = 16;

/// Ids by hash; the caller says which id is which name.
#[derive(Debug, Clone)]
pub(super) struct IdTable {
    /// One byte per bucket, then the first [`GROUP`] again, so that a group
    /// read at any bucket needs no wrapping.
    ctrl: Vec<u8>,
    /// The id in each full bucket.
    slots: Vec<Id>,
    /// Ids held.
    items: usize,
}

impl Default for IdTable {
    fn default() -> Self {
        IdTable {
            ctrl: vec![EMPTY; GROUP],
            slots: Vec::new(),
            items: 0,
        }
    }
}

/// `byte` in every byte of a word.
const fn repeat(byte: u8) -> u64 {
    u64::from_ne_bytes([byte; 8])
}

/// The 7 bits of a hash kept in its bucket's control byte (its top bits,
/// while the low bits choose the bucket).
fn tag(hash: u64) -> u8 {
    (hash >> 57) as u8
}

/// The bytes of a group equal to `byte`, as the high bit of each byte: a
/// full bucket may be flagged wrongly (just after a real match), none is
/// missed; the caller compares names anyway.
fn matching(group: u64, byte: u8) -> u64 {
    let x = group ^ repeat(byte);
    x.wrapping_sub(repeat(0x01)) & !x & repeat(0x80)
}

/// The empty buckets of a group (only an empty control byte has its high bit).
fn empty(group: u64) -> u64 {
    group & repeat(0x80)
}

/// The bucket within a group of the lowest flagged byte.
fn first(bits: u64) -> usize {
    (bits.trailing_zeros() / 8) as usize
}

impl IdTable {
    /// A table with room for `capacity` ids before it is full.
    pub(super) fn with_capacity(capacity: usize) -> Self {
        if capacity == 0 {
            return IdTable::default();
        }
        let buckets = (capacity * 8)
            .div_ceil(7)
            .next_power_of_two()
            .max(MIN_BUCKETS);
        IdTable {
            ctrl: vec![EMPTY; buckets + GROUP],
            // Zeroed memory: pages of a large table are mapped as ids land in them.
            slots: vec![0; buckets],
            items: 0,
        }
    }

    fn mask(&self) -> usize {
        self.slots.len().wrapping_sub(1)
    }

    /// How many ids it can hold (7/8 of its buckets).
    pub(super) fn capacity(&self) -> usize {
        self.slots.len() / 8 * 7
    }

    pub(super) fn len(&self) -> usize {
        self.items
    }

    /// Bytes allocated.
    pub(super) fn allocation_size(&self) -> usize {
        self.ctrl.capacity() + self.slots.capacity() * std::mem::size_of::<Id>()
    }

    /// The control bytes of the group at bucket `pos`, first bucket lowest.
    fn group_at(&self, pos: usize) -> u64 {
        let bytes = self.ctrl[pos..pos + GROUP]
            .first_chunk::<GROUP>()
            .expect("a group is GROUP bytes");
        u64::from_le_bytes(*bytes)
    }

    /// The groups a hash probes, in turn (triangular steps, which visit every
    /// group of a power-of-two table once).
    fn probe(&self, hash: u64) -> impl Iterator<Item = usize> {
        let mask = self.mask();
        let mut pos = hash as usize & mask;
        let mut stride = 0;
        std::iter::from_fn(move || {
            let at = pos;
            stride += GROUP;
            pos = (pos + stride) & mask;
            Some(at)
        })
    }

    /// The id with this hash for which `is` holds.
    #[inline]
    pub(super) fn find(&self, hash: u64, mut is: impl FnMut(Id) -> bool) -> Option<Id> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.mask();
        let tag = tag(hash);
        for pos in self.probe(hash) {
            let group = self.group_at(pos);
            let mut hits = matching(group, tag);
            while hits != 0 {
                let id = self.slots[(pos + first(hits)) & mask];
                if is(id) {
                    return Some(id);
                }
                hits &= hits - 1;
            }
            if empty(group) != 0 {
                return None;
            }
        }
        unreachable!("the probe sequence never ends")
    }

    /// Adds `id` under `hash`; the table must not hold it yet and must have
    /// room (`len() < capacity()`).
    pub(super) fn insert(&mut self, hash: u64, id: Id) {
        assert!(self.items < self.capacity(), "insert into a full table");
        let mask = self.mask();
        let bucket = self
            .probe(hash)
            .find_map(|pos| {
                let free = empty(self.group_at(pos));
                (free != 0).then(|| (pos + first(free)) & mask)
            })
            .expect("a table below capacity has an empty bucket");
        let tag = tag(hash);
        self.ctrl[bucket] = tag;
        if bucket < GROUP {
            self.ctrl[mask + 1 + bucket] = tag;
        }
        self.slots[bucket] = id;
        self.items += 1;
    }

    /// The first id a lookup of `hash` compares, if any (the first in its
    /// first group whose tag matches): a hint for asking ahead for that
    /// name's memory.
    #[inline]
    pub(super) fn first_candidate(&self, hash: u64) -> Option<Id> {
        if self.slots.is_empty() {
            return None;
        }
        let pos = hash as usize & self.mask();
        let hits = matching(self.group_at(pos), tag(hash));
        (hits != 0).then(|| self.slots[(pos + first(hits)) & self.mask()])
    }

    /// Asks for the memory a lookup of `hash` reads first (its first group
    /// of control bytes and of ids) without waiting for it.
    #[inline]
    pub(super) fn prefetch(&self, hash: u64) {
        if !self.slots.is_empty() {
            let pos = hash as usize & self.mask();
            super::prefetch(self.ctrl[pos..].as_ptr().cast());
            super::prefetch(self.slots[pos..].as_ptr().cast());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy;

    #[test]
    fn the_empty_table_finds_nothing_and_has_no_room() {
        let table = IdTable::default();
        assert_eq!(table.find(42, |_| true), None);
        assert_eq!((table.len(), table.capacity()), (0, 0));
        table.prefetch(42);
        assert_eq!(table.first_candidate(42), None);
        assert_eq!(IdTable::with_capacity(0).capacity(), 0);
    }

    #[test]
    fn capacity_is_seven_eighths_of_a_power_of_two() {
        assert_eq!(IdTable::with_capacity(1).capacity(), 14);
        assert_eq!(IdTable::with_capacity(14).capacity(), 14);
        assert_eq!(IdTable::with_capacity(15).capacity(), 28);
        assert_eq!(IdTable::with_capacity(1 << 20).slots.len(), 1 << 21);
    }

    #[test]
    fn a_full_table_of_equal_hashes_finds_every_id() {
        // Every id under one hash: one long probe through every group.
        let mut table = IdTable::with_capacity(14);
        for id in 0..14 {
            table.insert(7, id);
        }
        for id in 0..14 {
            assert_eq!(table.find(7, |found| found == id), Some(id));
        }
        assert_eq!(table.find(7, |_| false), None);
        assert_eq!(table.find(1 << 57 | 7, |_| true), None);
        // The first compared is the first inserted; another tag has none.
        assert_eq!(table.first_candidate(7), Some(0));
        assert_eq!(table.first_candidate(1 << 57 | 7), None);
    }

    proptest::proptest! {
        /// Whatever the hashes (few distinct tags and buckets among them, so
        /// that groups fill and wrap), every inserted id is found under its
        /// hash, and a hash nothing was inserted under finds nothing.
        #[test]
        fn finds_what_was_inserted(
            hashes in proptest::collection::vec(
                (0u64..4, 0u64..64).prop_map(|(top, low)| top << 57 | low),
                0..200,
            ),
        ) {
            let mut table = IdTable::with_capacity(hashes.len());
            for (id, &hash) in hashes.iter().enumerate() {
                table.insert(hash, id as Id);
            }
            proptest::prop_assert_eq!(table.len(), hashes.len());
            for (id, &hash) in hashes.iter().enumerate() {
                let found = table.find(hash, |other| other == id as Id);
                proptest::prop_assert_eq!(found, Some(id as Id));
            }
            proptest::prop_assert_eq!(table.find(5 << 57 | 3, |_| true), None);
        }
    }
}
