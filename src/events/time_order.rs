//! The order that sorts rows by time, stably, in time linear in the rows.
//!
//! Each row becomes one 64-bit word: its time (less the earliest, in seconds
//! when every time is a whole number of seconds from the earliest) above its
//! row number. Words are unique and compare as (time, row), which is the
//! stable order. A counting pass spreads the words into at most
//! 2^[`BUCKET_BITS`] buckets by the top bits of their time, keeping row
//! order within each; each bucket, small enough to stay in cache, is then
//! sorted on its own by the time bits below (a stable counting sort a byte
//! at a time), the buckets in parallel.
//!
//! Rows in a few time-sorted runs (servers' logs one after another) are
//! merged instead ([`merge`]); times that do not pack into 64 bits beside
//! the row number (a span of millennia in milliseconds) are put in order by
//! a comparison sort.
//! Rows out of order only within short stretches never come here: they are
//! put in order in place ([`super::stretches`]).

mod merge;

use rayon::prelude::*;

use crate::units::Millis;

/// Bits of time the counting pass buckets by: 2,048 counts, which stay in
/// the first-level cache while the rows are spread.
const BUCKET_BITS: u32 = 11;

/// Rows that come in at most this many time-sorted runs are merged
/// ([`merge`]): cheaper than the counting passes.
const FEW_RUNS: usize = 32;

/// The rows of a table in time order; rows with equal times keep their
/// input order.
pub enum TimeOrder {
    /// Row numbers in order.
    Rows(Vec<u32>),
    /// Packed words in order (see the module docs).
    Words { words: Vec<u64>, packing: Packing },
}

impl TimeOrder {
    /// The time order of rows whose times are `ts` (at most 2^32 rows).
    pub fn of(ts: &[Millis]) -> TimeOrder {
        Self::packed_past(ts, FEW_RUNS)
    }

    /// The time order: merged when `ts` comes in at most `few_runs` runs,
    /// else packed when it packs.
    fn packed_past(ts: &[Millis], few_runs: usize) -> TimeOrder {
        let descents = ts.par_windows(2).filter(|w| w[1] < w[0]).count();
        if descents < few_runs {
            let mut starts: Vec<usize> = (1..ts.len())
                .into_par_iter()
                .filter(|&i| ts[i] < ts[i - 1])
                .collect();
            starts.insert(0, 0);
            return TimeOrder::Rows(merge::merged(ts, &starts));
        }
        // Packing reads every time three times: only worth it when used.
        match Packing::of(ts) {
            Some(packing) => TimeOrder::Words {
                words: packing.sorted_words(ts),
                packing,
            },
            None => {
                let mut order: Vec<u32> = (0..ts.len() as u32).collect();
                order.par_sort_by_key(|&i| ts[i as usize]);
                TimeOrder::Rows(order)
            }
        }
    }

    /// `values` (one per row) in this order.
    pub fn permute<T: Copy + Send + Sync>(&self, values: &[T]) -> Vec<T> {
        let mut out = Vec::new();
        self.permute_into(values, &mut out);
        out
    }

    /// `values` (one per row) in this order, written into `out` (whose
    /// memory is reused), on every core.
    pub fn permute_into<T: Copy + Send + Sync>(&self, values: &[T], out: &mut Vec<T>) {
        match self {
            TimeOrder::Rows(order) => order
                .par_iter()
                .map(|&i| values[i as usize])
                .collect_into_vec(out),
            TimeOrder::Words { words, packing } => words
                .par_iter()
                .map(|&w| values[packing.row(w)])
                .collect_into_vec(out),
        }
    }

    /// The times `ts` in this order (read from the words when packed, after
    /// `ts` is freed).
    pub fn sorted_times(&self, ts: Vec<Millis>) -> Vec<Millis> {
        match self {
            TimeOrder::Rows(_) => self.permute(&ts),
            TimeOrder::Words { words, packing } => {
                drop(ts);
                words.par_iter().map(|&w| packing.time(w)).collect()
            }
        }
    }
}

/// How a row's time and number pack into one word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packing {
    earliest: Millis,
    /// 1000 when every time is whole seconds from the earliest, else 1.
    unit: u64,
    /// Bits of the row number, at the bottom of the word.
    row_bits: u32,
    /// Bits of time below a bucket's.
    low_bits: u32,
    buckets: usize,
}

impl Packing {
    /// The packing of `ts`, or `None` when time and row need more than 64 bits.
    fn of(ts: &[Millis]) -> Option<Packing> {
        let (earliest, latest) = (*ts.par_iter().min()?, *ts.par_iter().max()?);
        let whole_seconds = ts.par_iter().all(|&t| t.abs_diff(earliest) % 1000 == 0);
        let unit = if whole_seconds { 1000 } else { 1 };
        let time_bits = bits(latest.abs_diff(earliest) / unit);
        let row_bits = bits(ts.len() as u64 - 1);
        if time_bits + row_bits > u64::BITS || ts.len() as u64 > 1 << u32::BITS {
            return None;
        }
        let low_bits = time_bits.saturating_sub(BUCKET_BITS);
        Some(Packing {
            earliest,
            unit,
            row_bits,
            low_bits,
            buckets: 1 << (time_bits - low_bits),
        })
    }

    fn word(&self, t: Millis, row: usize) -> u64 {
        let offset = t.abs_diff(self.earliest);
        // Written out so that the usual unit divides as a constant.
        let time = if self.unit == 1000 {
            offset / 1000
        } else {
            offset
        };
        time << self.row_bits | row as u64
    }

    fn row(&self, word: u64) -> usize {
        (word & ((1 << self.row_bits) - 1)) as usize
    }

    fn time(&self, word: u64) -> Millis {
        // The offset came from a time after the earliest: it fits back.
        self.earliest
            .wrapping_add(((word >> self.row_bits) * self.unit) as Millis)
    }

    fn bucket(&self, word: u64) -> usize {
        // Below 64: `low_bits` is below the bits of time, or both are 0.
        (word >> (self.row_bits + self.low_bits)) as usize
    }

    /// The words of `ts`, sorted. The rows are cut into one part per thread;
    /// each part counts its rows per bucket, then writes them into its own
    /// piece of each bucket, after the pieces of the parts before it, so
    /// that every bucket holds its rows in row order. The buckets are then
    /// sorted, each on its own.
    fn sorted_words(&self, ts: &[Millis]) -> Vec<u64> {
        let part_len = ts.len().div_ceil(rayon::current_num_threads()).max(1);
        let parts = ts.par_chunks(part_len).enumerate();
        let counts: Vec<Vec<usize>> = parts
            .clone()
            .map(|(part, times)| {
                let mut counts = vec![0usize; self.buckets];
                for (i, &t) in times.iter().enumerate() {
                    counts[self.bucket(self.word(t, part * part_len + i))] += 1;
                }
                counts
            })
            .collect();
        let mut words = vec![0u64; ts.len()];
        let mut pieces: Vec<Vec<&mut [u64]>> = counts
            .iter()
            .map(|_| Vec::with_capacity(self.buckets))
            .collect();
        let mut rest = words.as_mut_slice();
        for bucket in 0..self.buckets {
            for (part_pieces, part_counts) in pieces.iter_mut().zip(&counts) {
                let (piece, after) = rest.split_at_mut(part_counts[bucket]);
                part_pieces.push(piece);
                rest = after;
            }
        }
        parts.zip(pieces).for_each(|((part, times), mut pieces)| {
            let mut next = vec![0usize; self.buckets];
            for (i, &t) in times.iter().enumerate() {
                let word = self.word(t, part * part_len + i);
                let bucket = self.bucket(word);
                pieces[bucket][next[bucket]] = word;
                next[bucket] += 1;
            }
        });
        let mut buckets: Vec<&mut [u64]> = Vec::with_capacity(self.buckets);
        let mut rest = words.as_mut_slice();
        for bucket in 0..self.buckets {
            let (this, after) = rest.split_at_mut(counts.iter().map(|c| c[bucket]).sum());
            buckets.push(this);
            rest = after;
        }
        buckets
            .into_par_iter()
            .for_each_init(Vec::new, |scratch, bucket| {
                self.sort_bucket(bucket, scratch)
            });
        words
    }

    /// Sorts a bucket's words (in row order) by their time bits below the
    /// bucket's: a stable counting sort per byte, least significant first.
    fn sort_bucket(&self, bucket: &mut [u64], scratch: &mut Vec<u64>) {
        let end = self.row_bits + self.low_bits;
        let mut shift = self.row_bits;
        while shift < end {
            let mask = (1u64 << (end - shift).min(8)) - 1;
            let digit = |w: u64| ((w >> shift) & mask) as usize;
            let mut next = [0usize; 256];
            for &w in bucket.iter() {
                next[digit(w)] += 1;
            }
            if !next.contains(&bucket.len()) {
                let mut start = 0;
                for slot in next.iter_mut() {
                    (*slot, start) = (start, start + *slot);
                }
                scratch.clear();
                scratch.resize(bucket.len(), 0);
                for &w in bucket.iter() {
                    let slot = &mut next[digit(w)];
                    scratch[*slot] = w;
                    *slot += 1;
                }
                bucket.copy_from_slice(scratch);
            }
            shift += 8;
        }
    }
}

/// Bits needed to write `n` (0 for 0).
fn bits(n: u64) -> u32 {
    u64::BITS - n.leading_zeros()
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;

    /// The order a stable comparison sort gives.
    fn reference(ts: &[Millis]) -> Vec<u32> {
        let mut order: Vec<u32> = (0..ts.len() as u32).collect();
        order.sort_by_key(|&i| ts[i as usize]);
        order
    }

    /// The rows in time order, packed whenever `ts` packs and by the
    /// comparison sort, checking that both agree and sort the times alike.
    fn time_order(ts: &[Millis]) -> Vec<u32> {
        let rows: Vec<u32> = (0..ts.len() as u32).collect();
        let [packed, compared] = [0, usize::MAX].map(|few_runs| {
            let order = TimeOrder::packed_past(ts, few_runs);
            let sorted = order.permute(&rows);
            let times: Vec<Millis> = sorted.iter().map(|&r| ts[r as usize]).collect();
            assert_eq!(order.sorted_times(ts.to_vec()), times);
            sorted
        });
        assert_eq!(packed, compared);
        packed
    }

    #[test]
    fn equal_times_keep_their_rows_in_order() {
        assert_eq!(time_order(&[5, 1, 5, 1, 3]), [1, 3, 4, 0, 2]);
        assert_eq!(time_order(&[2_000, 1_000, 2_000]), [1, 0, 2]);
        assert_eq!(time_order(&[7]), [0]);
        assert!(time_order(&[]).is_empty());
    }

    #[test]
    fn packs_seconds_as_seconds_and_gives_up_past_64_bits() {
        let seconds = Packing::of(&[1_000, 61_000, 5_000]).unwrap();
        assert_eq!((seconds.unit, seconds.row_bits), (1000, 2));
        assert_eq!(Packing::of(&[1_000, 61_001]).unwrap().unit, 1);
        assert_eq!(Packing::of(&[Millis::MIN, Millis::MAX]), None);
        let far = [Millis::MIN, Millis::MAX, 0];
        assert!(matches!(
            TimeOrder::packed_past(&far, 0),
            TimeOrder::Rows(_)
        ));
        assert_eq!(time_order(&far), [0, 2, 1]);
    }

    #[test]
    fn a_long_span_fills_every_bucket_and_sorts_within_each() {
        // 2^20 distinct milliseconds over 5,000 rows: 2,048 buckets of a few rows.
        let ts: Vec<Millis> = (0..5_000u64)
            .map(|i| (i.wrapping_mul(2_654_435_761) % (1 << 20)) as Millis - 40_000)
            .collect();
        let packing = Packing::of(&ts).unwrap();
        assert_eq!(packing.buckets, 1 << BUCKET_BITS);
        assert!(matches!(TimeOrder::of(&ts), TimeOrder::Words { .. }));
        assert_eq!(time_order(&ts), reference(&ts));
        // Ten sorted runs, one after another: merged.
        let runs: Vec<Millis> = (0..5_000).map(|i| i % 500 * 1000).collect();
        assert!(matches!(TimeOrder::of(&runs), TimeOrder::Rows(_)));
        assert_eq!(time_order(&runs), reference(&runs));
    }

    #[test]
    fn copies_of_a_log_and_interleaved_servers_merge_as_a_stable_sort() {
        // Ten copies of one log (whole seconds, many rows each), the ten
        // overlapping in time; and three servers' millisecond logs whose
        // rows interleave one by one.
        let one: Vec<Millis> = (0..3_000).map(|i| i / 7 * 1000).collect();
        let copies: Vec<Millis> = (0..10).flat_map(|_| one.iter().copied()).collect();
        assert!(matches!(TimeOrder::of(&copies), TimeOrder::Rows(_)));
        assert_eq!(time_order(&copies), reference(&copies));
        let servers: Vec<Millis> = (0..3)
            .flat_map(|s| (0..2_000).map(move |i| i * 3 + s))
            .collect();
        assert_eq!(time_order(&servers), reference(&servers));
    }

    proptest! {
        #[test]
        fn orders_as_a_stable_sort_does(
            // One kind of time per log: seconds, milliseconds around zero,
            // a span of days in milliseconds, anything (mostly unpackable).
            ts in prop_oneof![
                vec((0i64..100).prop_map(|s| s * 1000), 0..300),
                vec(-5_000i64..5_000, 0..300),
                vec(0i64..1 << 30, 0..300),
                vec(any::<i64>(), 0..300),
            ],
            whole_seconds in any::<bool>(),
        ) {
            let ts: Vec<Millis> = if whole_seconds {
                ts.iter().map(|t| t / 1000 * 1000).collect()
            } else {
                ts
            };
            prop_assert_eq!(time_order(&ts), reference(&ts));
        }
    }
}
