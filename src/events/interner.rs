//! Interning strings to dense ids, with every name stored once in one text
//! buffer: memory is the names' bytes plus about 13 bytes per name (a 4-byte
//! end offset, the name's 4-byte hash, a 4-byte id in the table and its
//! control byte, at the table's load), whatever their number, and interning
//! allocates nothing but amortised buffer growth. The table holds ids only:
//! when it is full it is rebuilt at twice the size from the kept hashes, in
//! id order, reading no text; interning another interner's names
//! ([`Interner::intern_all`]) reuses its hashes too.

mod id_table;

use std::hash::Hasher;

use rustc_hash::FxHasher;

use self::id_table::IdTable;
use super::Id;
use crate::text::cache::prefetch;

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
    /// Each name's [`hash32`].
    hashes: Vec<u32>,
    /// The ids, found by the hash of their name.
    table: IdTable,
}

/// A name's hash folded to 32 bits (what a table of hashes per name stores,
/// as discovery's index of paths does).
pub fn hash32(name: &[u8]) -> u32 {
    let mut hasher = FxHasher::default();
    hasher.write(name);
    let h = hasher.finish();
    (h ^ (h >> 32)) as u32
}

/// A 32-bit hash spread over 64 bits, so that a hash table's top bits (its
/// control tags) and low bits (its positions) both depend on every byte.
pub fn spread_hash(hash: u32) -> u64 {
    u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
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
            hashes: Vec::with_capacity(names),
            table: IdTable::with_capacity(names),
        }
    }

    /// The id of `name`, adding it when new.
    pub fn intern(&mut self, name: &str) -> Id {
        self.restore_lookups();
        let hash = hash32(name.as_bytes());
        self.find_or_add(name.as_bytes(), hash, |_| Some(name))
            .expect("a name given as text is added as it is")
    }

    /// The id of `bytes` read as UTF-8 with invalid sequences shown as U+FFFD
    /// (what `intern(&String::from_utf8_lossy(bytes))` gives), adding it when
    /// new. A name seen before is found by its bytes without validating them
    /// again: every stored name is valid UTF-8, so bytes that are not never
    /// match one and take the lossy way.
    pub fn intern_lossy(&mut self, bytes: &[u8]) -> Id {
        self.intern_or(bytes, |b| String::from_utf8_lossy(b).into_owned())
    }

    /// [`Self::intern_lossy`], bytes that are not UTF-8 read as `as_text`
    /// writes them.
    pub fn intern_or(&mut self, bytes: &[u8], as_text: impl FnOnce(&[u8]) -> String) -> Id {
        self.restore_lookups();
        let hash = hash32(bytes);
        match self.find_or_add(bytes, hash, |b| std::str::from_utf8(b).ok()) {
            Some(id) => id,
            None => self.intern(&as_text(bytes)),
        }
    }

    /// The id of `name`, whose table hash ([`spread_hash`] of its [`hash32`])
    /// is `hash`.
    fn find(&self, name: &[u8], hash: u64) -> Option<Id> {
        let Interner {
            text, ends, wraps, ..
        } = self;
        self.table
            .find(hash, |id| bytes_of(text, ends, wraps, id) == name)
    }

    /// The id of `name` (whose [`hash32`] is `hash`), found or added; when
    /// it is new and `as_text` gives no text for it, nothing is added and the
    /// answer is `None`.
    fn find_or_add<'n>(
        &mut self,
        name: &'n [u8],
        hash: u32,
        as_text: impl FnOnce(&'n [u8]) -> Option<&'n str>,
    ) -> Option<Id> {
        // Grown here, by the names in id order, the table never grows by itself.
        if self.table.len() == self.table.capacity() {
            self.grow_table();
        }
        if let Some(id) = self.find(name, spread_hash(hash)) {
            return Some(id);
        }
        let name = as_text(name)?;
        let Interner {
            text,
            ends,
            wraps,
            hashes,
            table,
        } = self;
        let id = Id::try_from(ends.len()).expect("more than 4 billion distinct names");
        text.push_str(name);
        let end = text.len() as u64;
        while (end >> 32) as usize > wraps.len() {
            wraps.push(id);
        }
        ends.push(end as u32);
        hashes.push(hash);
        table.insert(spread_hash(hash), id);
        Some(id)
    }

    /// The ids of every name of `names`, in its id order, adding the new ones
    /// in that order: what interning them one by one gives (their hashes
    /// taken from `names`, not computed again). The names are looked up
    /// [`AHEAD`] at a time, each step of the lookups asked for ahead for the
    /// whole block so that their cache misses overlap: the table lines, then
    /// the place of the name each lookup compares first, then its text.
    pub fn intern_all(&mut self, names: &Interner) -> Vec<Id> {
        self.restore_lookups();
        // Kept, unless `names` released its lookups.
        let computed: Vec<u32>;
        let all_hashes = if names.hashes.len() == names.len() {
            &names.hashes
        } else {
            computed = names.names().map(|n| hash32(n.as_bytes())).collect();
            &computed
        };
        let mut ids = Vec::with_capacity(names.len());
        let mut candidates = [None; AHEAD];
        for block in blocks(names.len()) {
            let hashes = &all_hashes[block.start as usize..block.end as usize];
            for &hash in hashes {
                self.table.prefetch(spread_hash(hash));
            }
            for (candidate, &hash) in candidates.iter_mut().zip(hashes) {
                *candidate = self.table.first_candidate(spread_hash(hash));
                if let Some(id) = *candidate {
                    prefetch(self.ends.as_ptr().wrapping_add(id as usize).cast());
                }
            }
            for &id in candidates.iter().take(block.len()).flatten() {
                let (start, _) = span(&self.ends, &self.wraps, id);
                prefetch(self.text.as_ptr().wrapping_add(start).cast());
            }
            for (&hash, id) in hashes.iter().zip(block) {
                let name = names.name(id);
                let found = self.find_or_add(name.as_bytes(), hash, |_| Some(name));
                ids.push(found.expect("a name given as text is added as it is"));
            }
        }
        ids
    }

    /// Rebuilds the table with room for twice the names from their kept
    /// hashes, in id order (the table lines of [`AHEAD`] names asked for at
    /// a time); also what restores a released table.
    fn grow_table(&mut self) {
        let mut grown = IdTable::with_capacity((self.ends.len() * 2).max(16));
        for block in blocks(self.ends.len()) {
            let hashes = &self.hashes[block.start as usize..block.end as usize];
            for &hash in hashes {
                grown.prefetch(spread_hash(hash));
            }
            for (&hash, id) in hashes.iter().zip(block) {
                grown.insert(spread_hash(hash), id);
            }
        }
        self.table = grown;
    }

    /// The id of `name` if it was interned (after [`Self::release_lookups`]
    /// and until the next `intern`, found by reading the names in turn).
    pub fn get(&self, name: &str) -> Option<Id> {
        if self.lookups_released() {
            return self.names().position(|n| n == name).map(|i| i as Id);
        }
        self.find(name.as_bytes(), spread_hash(hash32(name.as_bytes())))
    }

    /// Frees the lookup table and the hashes, keeping every name and id: for
    /// a table whose names are read by id from now on (a million distinct
    /// names hold about 14 MB of them). The next `intern` builds them again.
    pub fn release_lookups(&mut self) {
        self.table = IdTable::default();
        self.hashes = Vec::new();
    }

    fn lookups_released(&self) -> bool {
        self.table.len() != self.ends.len()
    }

    fn restore_lookups(&mut self) {
        if self.lookups_released() {
            if self.hashes.len() != self.ends.len() {
                self.hashes = self.names().map(|n| hash32(n.as_bytes())).collect();
            }
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
            + (self.ends.capacity() + self.hashes.capacity()) * std::mem::size_of::<u32>()
            + self.wraps.capacity() * std::mem::size_of::<Id>()
            + self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests;
