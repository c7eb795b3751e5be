//! Interning strings to dense ids, with every name stored once in one text
//! buffer: memory is the names' bytes plus about 9 bytes per name (a 4-byte
//! end offset, a 4-byte id in the table and its control byte, at the table's
//! load), whatever their number, and interning allocates nothing but
//! amortised buffer growth. The table holds ids only: when it is full it is
//! rebuilt at twice the size by hashing the names in id order, one pass over
//! the text as it lies in memory, so growing it jumps around no text.

mod id_table;

use std::hash::Hasher;

use rustc_hash::FxHasher;

use self::id_table::IdTable;
use super::Id;

/// Maps strings to dense ids (in order of first interning) and back.
#[derive(Debug, Default, Clone)]
pub struct Interner {
    /// Every name, one after another.
    text: String,
    /// Where each name ends in `text`, modulo 2^32 (see [`end_of`]); name `i`
    /// starts where name `i - 1` ends.
    ends: Vec<u32>,
    /// The ids from which the ends are one more 2^32 further: one entry per
    /// 4 GiB of text, so empty for any table that fits in less.
    wraps: Vec<Id>,
    /// The ids, found by the hash of their name.
    table: IdTable,
}

/// The hash of a name, as the table uses it.
fn hash_name(name: &[u8]) -> u64 {
    let mut hasher = FxHasher::default();
    hasher.write(name);
    let h = hasher.finish();
    // Folded to 32 bits and spread over 64, so that the table's top bits (its
    // control tags) and low bits (its positions) both depend on every byte.
    u64::from((h ^ (h >> 32)) as u32).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Names whose table lines are asked for together, ahead of their lookups.
const AHEAD: usize = 16;

/// The ids `0..n` in blocks of [`AHEAD`].
fn blocks(n: usize) -> impl Iterator<Item = std::ops::Range<Id>> {
    (0..n).step_by(AHEAD).map(move |start| {
        let end = (start + AHEAD).min(n);
        start as Id..end as Id
    })
}

/// How far ahead of a read [`Interner::prefetch_ahead`] asks for where a
/// name lies, and for its text.
const PLACE_AHEAD: usize = 16;
const TEXT_AHEAD: usize = 8;

/// Asks for the cache line at `at` without waiting for it.
#[inline(always)]
fn prefetch(at: *const i8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache and never faults.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// How many 4 GiB wraps come at or before name `i`.
#[inline]
fn wraps_before(wraps: &[Id], i: usize) -> u64 {
    if wraps.is_empty() {
        0
    } else {
        wraps.partition_point(|&w| w as usize <= i) as u64
    }
}

/// Where name `i` ends in the text: its stored end plus 2^32 for every wrap
/// at or before `i`.
#[inline]
fn end_of(ends: &[u32], wraps: &[Id], i: usize) -> usize {
    // 2^32 per wrap: on a 32-bit target the text never reaches it.
    (wraps_before(wraps, i) << 32 | u64::from(ends[i])) as usize
}

/// Where name `id` lies in the text: read from the ends alone, inline, for
/// a text below 4 GiB (every lookup compares a name, so this is on the path
/// of every interned event).
#[inline(always)]
fn span(ends: &[u32], wraps: &[Id], id: Id) -> (usize, usize) {
    let i = id as usize;
    if !wraps.is_empty() {
        return wrapped_span(ends, wraps, i);
    }
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    (start, ends[i] as usize)
}

/// [`span`] of name `i` in a text of 4 GiB or more.
#[cold]
#[inline(never)]
fn wrapped_span(ends: &[u32], wraps: &[Id], i: usize) -> (usize, usize) {
    let start = if i == 0 {
        0
    } else {
        end_of(ends, wraps, i - 1)
    };
    (start, end_of(ends, wraps, i))
}

#[inline]
fn bytes_of<'t>(text: &'t str, ends: &[u32], wraps: &[Id], id: Id) -> &'t [u8] {
    let (start, end) = span(ends, wraps, id);
    &text.as_bytes()[start..end]
}

impl Interner {
    /// An empty interner with room for about `names` names of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> Self {
        Interner {
            text: String::with_capacity(bytes),
            ends: Vec::with_capacity(names),
            wraps: Vec::new(),
            table: IdTable::with_capacity(names),
        }
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> Id {
        self.restore_lookups();
        let hash = hash_name(name.as_bytes());
        self.find_or_add(name.as_bytes(), hash, |_| Some(name))
            .expect("a name given as text is added as it is")
    }

    /// The id of `bytes` read as UTF-8 with invalid sequences shown as U+FFFD
    /// (what `intern(&String::from_utf8_lossy(bytes))` gives), adding it when
    /// new. A name seen before is found by its bytes without validating them
    /// again: every stored name is valid UTF-8, so bytes that are not never
    /// match one and take the lossy way.
    pub fn intern_lossy(&mut self, bytes: &[u8]) -> Id {
        self.restore_lookups();
        let hash = hash_name(bytes);
        match self.find_or_add(bytes, hash, |b| std::str::from_utf8(b).ok()) {
            Some(id) => id,
            None => self.intern(&String::from_utf8_lossy(bytes)),
        }
    }

    fn find(&self, name: &[u8], hash: u64) -> Option<Id> {
        let Interner {
            text, ends, wraps, ..
        } = self;
        self.table
            .find(hash, |id| bytes_of(text, ends, wraps, id) == name)
    }

    /// The id of `name` (which hashes to `hash`), found or added; when it is
    /// new and `as_text` gives no text for it, nothing is added and the
    /// answer is `None`.
    fn find_or_add<'n>(
        &mut self,
        name: &'n [u8],
        hash: u64,
        as_text: impl FnOnce(&'n [u8]) -> Option<&'n str>,
    ) -> Option<Id> {
        // Grown here, by the names in id order, the table never grows by itself.
        if self.table.len() == self.table.capacity() {
            self.grow_table();
        }
        if let Some(id) = self.find(name, hash) {
            return Some(id);
        }
        let name = as_text(name)?;
        let Interner {
            text,
            ends,
            wraps,
            table,
        } = self;
        let id = Id::try_from(ends.len()).expect("more than 4 billion distinct names");
        text.push_str(name);
        let end = text.len() as u64;
        while (end >> 32) as usize > wraps.len() {
            wraps.push(id);
        }
        ends.push(end as u32);
        table.insert(hash, id);
        Some(id)
    }

    /// The ids of every name of `names`, in its id order, adding the new ones
    /// in that order: what interning them one by one gives. The table lines
    /// of the next [`AHEAD`] names are asked for before any of them is
    /// looked up, so their cache misses overlap.
    pub fn intern_all(&mut self, names: &Interner) -> Vec<Id> {
        self.restore_lookups();
        let mut ids = Vec::with_capacity(names.len());
        let mut hashes = [0u64; AHEAD];
        for block in blocks(names.len()) {
            for (hash, id) in hashes.iter_mut().zip(block.clone()) {
                *hash = hash_name(names.name(id).as_bytes());
                self.table.prefetch(*hash);
            }
            for (&hash, id) in hashes.iter().zip(block) {
                let name = names.name(id);
                let found = self.find_or_add(name.as_bytes(), hash, |_| Some(name));
                ids.push(found.expect("a name given as text is added as it is"));
            }
        }
        ids
    }

    /// Rebuilds the table with room for twice the names, hashing them in id
    /// order (the text read front to back, the table lines of [`AHEAD`]
    /// names asked for at a time); also what restores a released table.
    fn grow_table(&mut self) {
        let Interner {
            text,
            ends,
            wraps,
            table,
        } = self;
        let mut grown = IdTable::with_capacity((ends.len() * 2).max(16));
        let mut hashes = [0u64; AHEAD];
        let mut start = 0;
        for block in blocks(ends.len()) {
            for (hash, id) in hashes.iter_mut().zip(block.clone()) {
                let end = end_of(ends, wraps, id as usize);
                *hash = hash_name(&text.as_bytes()[start..end]);
                grown.prefetch(*hash);
                start = end;
            }
            for (&hash, id) in hashes.iter().zip(block) {
                grown.insert(hash, id);
            }
        }
        *table = grown;
    }

    /// The id of `name` if it was interned (after [`Self::release_lookups`]
    /// and until the next `intern`, found by reading the names in turn).
    pub fn get(&self, name: &str) -> Option<Id> {
        if self.lookups_released() {
            return self.names().position(|n| n == name).map(|i| i as Id);
        }
        self.find(name.as_bytes(), hash_name(name.as_bytes()))
    }

    /// Frees the lookup table, keeping every name and id: for a table whose
    /// names are read by id from now on (a million distinct names hold about
    /// 10 MB of table). The next `intern` builds the table again.
    pub fn release_lookups(&mut self) {
        self.table = IdTable::default();
    }

    fn lookups_released(&self) -> bool {
        self.table.len() != self.ends.len()
    }

    fn restore_lookups(&mut self) {
        if self.lookups_released() {
            self.grow_table();
        }
    }

    /// The name behind `id`.
    #[inline]
    pub fn name(&self, id: Id) -> &str {
        let (start, end) = span(&self.ends, &self.wraps, id);
        &self.text[start..end]
    }

    /// Asks for the memory that reading names in an order other than their
    /// ids' will wait on: `upcoming(k)` is the name `k` places after the one
    /// read next, if any. Called once before each read, it asks for where the
    /// name [`PLACE_AHEAD`] on lies and for the text of the one [`TEXT_AHEAD`]
    /// on (whose place was asked for earlier), so that the two misses of each
    /// read overlap those of the reads around it.
    #[inline]
    pub fn prefetch_ahead(&self, upcoming: impl Fn(usize) -> Option<Id>) {
        if let Some(id) = upcoming(PLACE_AHEAD) {
            prefetch(self.ends.as_ptr().wrapping_add(id as usize).cast());
        }
        if let Some(id) = upcoming(TEXT_AHEAD) {
            let (start, end) = span(&self.ends, &self.wraps, id);
            let text = self.text.as_ptr();
            prefetch(text.wrapping_add(start).cast());
            prefetch(text.wrapping_add(end.saturating_sub(1).max(start)).cast());
        }
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
            + self.ends.capacity() * std::mem::size_of::<u32>()
            + self.wraps.capacity() * std::mem::size_of::<Id>()
            + self.table.allocation_size()
    }
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
        // Half of them again and as many new ones, at once, into a table
        // rebuilt from released lookups.
        let mut batch = Interner::default();
        for n in 5_000..15_000 {
            batch.intern(&format!("/api/users/{n}"));
        }
        i.release_lookups();
        let want: Vec<Id> = (5_000..15_000).collect();
        assert_eq!(i.intern_all(&batch), want);
        assert_eq!(i.get("/api/users/14999"), Some(14_999));
    }

    #[test]
    fn released_lookups_keep_names_and_come_back_on_interning() {
        let mut i = Interner::default();
        for n in 0..100 {
            i.intern(&format!("/p/{n}"));
        }
        i.release_lookups();
        assert_eq!((i.len(), i.name(42)), (100, "/p/42"));
        assert_eq!((i.get("/p/7"), i.get("/q")), (Some(7), None));
        assert_eq!(i.intern("/p/99"), 99);
        assert_eq!(i.intern("/q"), 100);
        assert_eq!((i.get("/p/7"), i.get("/q")), (Some(7), Some(100)));
        assert_eq!(i.table.len(), 101);
    }

    #[test]
    fn ends_past_4_gib_count_their_wraps() {
        // Names 0 and 1 end below 2^32, name 2 past it, name 3 past 2^33.
        let ends = [10, u32::MAX, 5, 7];
        let wraps = [2, 3];
        let got: Vec<usize> = (0..4).map(|i| end_of(&ends, &wraps, i)).collect();
        let want = [10u64, u64::from(u32::MAX), (1 << 32) + 5, (2 << 32) + 7];
        if usize::BITS == 64 {
            assert_eq!(got.iter().map(|&e| e as u64).collect::<Vec<_>>(), want);
            let spans: Vec<(usize, usize)> = (0..4).map(|id| span(&ends, &wraps, id)).collect();
            let ends = got.clone();
            assert_eq!(
                spans,
                [
                    (0, ends[0]),
                    (ends[0], ends[1]),
                    (ends[1], ends[2]),
                    (ends[2], ends[3])
                ]
            );
            assert_eq!(span(&[3, 8], &[], 1), (3, 8));
        }
        assert_eq!(end_of(&ends, &[], 1), u32::MAX as usize);
    }

    proptest::proptest! {
        /// Ids, names and lookups equal those of a plain map and list,
        /// whatever the names and however often the table is rebuilt.
        #[test]
        fn interning_equals_a_map_and_a_list(
            names in proptest::collection::vec("[a-c/]{0,4}", 0..300),
            capacity in 0usize..40,
        ) {
            let mut interner = Interner::with_capacity(capacity, capacity * 3);
            let mut list: Vec<String> = Vec::new();
            let mut map = std::collections::HashMap::new();
            for name in &names {
                let want = *map.entry(name.clone()).or_insert_with(|| {
                    list.push(name.clone());
                    (list.len() - 1) as Id
                });
                proptest::prop_assert_eq!(interner.intern(name), want);
            }
            proptest::prop_assert_eq!(interner.names().collect::<Vec<_>>(), list.clone());
            for (id, name) in list.iter().enumerate() {
                proptest::prop_assert_eq!(interner.get(name), Some(id as Id));
            }
            proptest::prop_assert_eq!(interner.get("never interned"), None);
        }

        /// Interning another interner's names at once gives the ids that
        /// interning them one by one gives, old names and new mixed, the
        /// table growing within a block, and every name found afterwards.
        #[test]
        fn interning_all_equals_interning_one_by_one(
            before in proptest::collection::vec("[a-c/]{0,3}", 0..60),
            batch in proptest::collection::vec("[a-d/]{0,3}", 0..200),
            released: bool,
        ) {
            let mut local = Interner::default();
            for name in &batch {
                local.intern(name);
            }
            let (mut one, mut all) = (Interner::default(), Interner::default());
            for name in &before {
                one.intern(name);
                all.intern(name);
            }
            if released {
                all.release_lookups();
            }
            let want: Vec<Id> = local.names().map(|name| one.intern(name)).collect();
            proptest::prop_assert_eq!(all.intern_all(&local), want);
            proptest::prop_assert_eq!(all.names().collect::<Vec<_>>(), one.names().collect::<Vec<_>>());
            for (id, name) in one.names().enumerate() {
                proptest::prop_assert_eq!(all.get(name), Some(id as Id));
            }
        }

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
