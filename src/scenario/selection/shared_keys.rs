//! The key every rule that applies to an event counts by, for rules whose
//! selections never give one event two keys: what a replay of several rules
//! prepares from their key columns, without the columns.

use rayon::prelude::*;

use super::{Selection, key_ids};
use crate::events::{EventTable, Id};
use crate::scenario::plan::KeyRef;
use crate::simulate::NOT_APPLICABLE;

/// For rules counting by `keys` with these `selections` (one each, at most
/// 64), per event the key every rule that applies to it counts by
/// ([`NOT_APPLICABLE`] where none applies) and a bit per rule that applies:
/// what a replay prepares from their key columns, without the columns. `None`
/// when two rules that apply to one event count by different keys.
pub(crate) fn shared_keys(
    table: &EventTable,
    keys: &[KeyRef],
    selections: &[&Selection],
) -> Option<(Vec<u32>, Vec<u64>)> {
    shared_keys_in_blocks(table, keys, selections, SHARED_KEYS_BLOCK)
}

/// Events per block of [`shared_keys`], whose blocks are worked out in parallel.
const SHARED_KEYS_BLOCK: usize = 1 << 16;

/// [`shared_keys`], the events in blocks of `block` worked out in parallel
/// (each block's rows of each rule in turn, as the rules' rows are read one
/// rule after the other for all events: a block agrees wherever all do).
pub(super) fn shared_keys_in_blocks(
    table: &EventTable,
    keys: &[KeyRef],
    selections: &[&Selection],
    block: usize,
) -> Option<(Vec<u32>, Vec<u64>)> {
    if keys.len() > 64 {
        return None;
    }
    let columns: Vec<&[Id]> = keys.iter().map(|&key| key_ids(table, key)).collect();
    let mut shared = vec![NOT_APPLICABLE; table.len()];
    let mut applying = vec![0u64; table.len()];
    let agreed = (shared.par_chunks_mut(block))
        .zip(applying.par_chunks_mut(block))
        .enumerate()
        .all(|(b, (shared, applying))| {
            let (start, end) = (b * block, b * block + shared.len());
            (columns.iter().zip(selections).enumerate()).all(|(r, (ids, selection))| {
                let mut visit = |row: usize| {
                    let key = ids[row]; // NO_KEY is NOT_APPLICABLE
                    let slot = &mut shared[row - start];
                    if key == NOT_APPLICABLE {
                        return true;
                    }
                    if *slot != NOT_APPLICABLE && *slot != key {
                        return false;
                    }
                    *slot = key;
                    applying[row - start] |= 1u64 << r;
                    true
                };
                match selection.subset() {
                    None => (start..end).all(&mut visit),
                    Some(subset) => {
                        let first = subset.rows.partition_point(|&row| (row as usize) < start);
                        (subset.rows[first..].iter())
                            .take_while(|&&row| (row as usize) < end)
                            .all(|&row| visit(row as usize))
                    }
                }
            })
        });
    agreed.then_some((shared, applying))
}
