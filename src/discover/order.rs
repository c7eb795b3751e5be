//! The canonical order paths are fed to the trie in: most requests first,
//! ties by path (byte order). The order defines the trie, so it is exact;
//! this module only makes it cheap for a million paths that share long
//! prefixes.
//!
//! Each path is sorted by its requests and the next eight bytes of its text
//! held in the entry (read as one big-endian integer, zero-padded, with how
//! many bytes were real), so that comparisons read no text. Paths that tie on
//! all eight bytes are sorted again on the eight after, and so on: a path's
//! text is read once per eight bytes it shares with another of its requests,
//! not once per comparison. Those reads follow the sorted order, not the
//! order paths lie in memory: each asks ahead for the paths a few entries on
//! ([`PathSource::prefetch_ahead`]).
//!
//! Exact: where two entries' integers differ, their first differing byte is
//! a real byte of both paths (the paths differ there the same way), or the
//! end of one path, whose padding zero sorts it first, as the shorter path
//! does; where the integers are equal, the path with fewer real bytes ended
//! and sorts first; with eight real bytes each, the next eight decide.

use rayon::slice::ParallelSliceMut;

use crate::events::Id;

/// A path in the order: its requests, eight bytes of its text, and who has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) requests: u64,
    /// Eight bytes of the path from the current offset, big-endian, zero-padded.
    chunk: u64,
    /// The endpoint standing for the path.
    pub(super) owner: Id,
    /// How many of the chunk's bytes are the path's (fewer: it ended).
    filled: u8,
}

impl Entry {
    pub(super) fn new(owner: Id, requests: u64) -> Self {
        Entry {
            requests,
            chunk: 0,
            owner,
            filled: 0,
        }
    }

    fn read(&mut self, path: &[u8], offset: usize) {
        let rest = path.get(offset..).unwrap_or_default();
        (self.chunk, self.filled) = match rest.first_chunk::<8>() {
            Some(bytes) => (u64::from_be_bytes(*bytes), 8),
            None => {
                let mut bytes = [0u8; 8];
                bytes[..rest.len()].copy_from_slice(rest);
                (u64::from_be_bytes(bytes), rest.len() as u8)
            }
        };
    }

    fn key(&self) -> (std::cmp::Reverse<u64>, u64, u8) {
        (std::cmp::Reverse(self.requests), self.chunk, self.filled)
    }
}

/// Where the sort reads the path of each entry's owner.
pub(super) trait PathSource<'p> {
    fn path(&self, owner: Id) -> &'p [u8];

    /// Asks for the memory of the paths about to be read, `upcoming(k)` the
    /// owner `k` places after the next (see `Interner::prefetch_ahead`);
    /// nothing by default.
    fn prefetch_ahead(&self, _upcoming: impl Fn(usize) -> Option<Id>) {}
}

impl<'p, F: Fn(Id) -> &'p [u8]> PathSource<'p> for F {
    fn path(&self, owner: Id) -> &'p [u8] {
        self(owner)
    }
}

/// Runs at least this long are sorted in parallel.
const PARALLEL_RUN: usize = 1 << 14;

/// Sorts `entries` (distinct paths, each `paths.path(owner)`) most requests first,
/// ties by path; every path has the same `offset` bytes first.
pub(super) fn sort<'p>(entries: &mut [Entry], paths: &impl PathSource<'p>, offset: usize) {
    // Runs still to sort, with the offset their paths agree up to.
    let mut todo = vec![(0..entries.len(), offset)];
    while let Some((range, mut offset)) = todo.pop() {
        let run = &mut entries[range.clone()];
        if run.len() < 2 {
            continue;
        }
        // Eight bytes every path of the run has are skipped before any sort,
        // so that the paths are read in the order they came in, not sorted.
        loop {
            for i in 0..run.len() {
                paths.prefetch_ahead(|k| run.get(i + k).map(|e| e.owner));
                let entry = &mut run[i];
                entry.read(paths.path(entry.owner), offset);
            }
            let first = (run[0].chunk, run[0].filled);
            if first.1 == 8 && run.iter().all(|e| (e.chunk, e.filled) == first) {
                offset += 8;
            } else {
                break;
            }
        }
        if run.len() >= PARALLEL_RUN {
            run.par_sort_unstable_by_key(Entry::key);
        } else {
            run.sort_unstable_by_key(Entry::key);
        }
        let mut start = 0;
        while start < run.len() {
            let first = run[start];
            let end = start
                + run[start..]
                    .iter()
                    .position(|e| e.key() != first.key())
                    .unwrap_or(run.len() - start);
            if end - start > 1 && first.filled == 8 {
                todo.push((range.start + start..range.start + end, offset + 8));
            }
            start = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::sample::select;

    /// Sorts the paths given with their requests, returning their indices.
    fn sorted(rows: &[(Vec<u8>, u64)], offset: usize) -> Vec<Id> {
        let mut entries: Vec<Entry> = rows
            .iter()
            .enumerate()
            .map(|(i, (_, n))| Entry::new(i as Id, *n))
            .collect();
        sort(&mut entries, &|i: Id| rows[i as usize].0.as_slice(), offset);
        entries.iter().map(|e| e.owner).collect()
    }

    /// The order as first written: a comparison of requests, then of texts.
    fn reference(rows: &[(Vec<u8>, u64)]) -> Vec<Id> {
        let mut order: Vec<Id> = (0..rows.len() as Id).collect();
        order.sort_by(|&a, &b| {
            let (a, b) = (&rows[a as usize], &rows[b as usize]);
            b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0))
        });
        order
    }

    proptest::proptest! {
        /// Paths of a few pieces (NUL among them, so that padding and an
        /// early end must differ), often sharing more than eight bytes.
        #[test]
        fn the_order_is_the_plain_comparison(
            prefix in proptest::collection::vec(select(vec![b'/', b'a']), 0..12),
            tails in proptest::collection::vec(
                proptest::collection::vec(
                    select(vec![&b"\0"[..], b"/", b"a", b"b\xff", b"aaaaaaa", b"/shared/"]),
                    0..8,
                ),
                1..200,
            ),
            requests in proptest::collection::vec(1u64..4, 200),
        ) {
            // Distinct paths, as discovery sorts, in the order drawn.
            let mut seen = std::collections::HashSet::new();
            let rows: Vec<(Vec<u8>, u64)> = tails
                .iter()
                .map(|tail| [prefix.as_slice(), &tail.concat()].concat())
                .filter(|path| seen.insert(path.clone()))
                .zip(requests)
                .collect();
            proptest::prop_assert_eq!(sorted(&rows, prefix.len()), reference(&rows));
        }
    }

    #[test]
    fn long_shared_prefixes_and_many_paths_sort_like_the_reference() {
        // Enough paths for the parallel sort, tied beyond the first chunks.
        let rows: Vec<(Vec<u8>, u64)> = (0..(PARALLEL_RUN as u64 * 2 + 77))
            .map(|i| {
                let path = format!(
                    "/static/shared-prefix-for-all/{:x}/{}",
                    i % 97,
                    i * 7919 % 1000
                );
                let mut path = path.into_bytes();
                path.extend(i.to_le_bytes().iter().take((i % 5) as usize));
                (path, 1 + i % 2)
            })
            .collect::<std::collections::BTreeMap<_, _>>()
            .into_iter()
            .collect();
        assert_eq!(sorted(&rows, 1), reference(&rows));
    }
}
