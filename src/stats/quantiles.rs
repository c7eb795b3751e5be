//! Distributions of request counts and their nearest-rank quantiles.
//!
//! Counts are recorded in an HDR histogram with 3 significant digits, which keeps
//! every count below 2048 exact (larger counts within 0.1%). Quantiles follow the
//! nearest-rank definition: the q-quantile of n samples is the smallest count c
//! such that at least ceil(q·n) samples are ≤ c. Ranks are computed in integers,
//! so no floating-point rounding can move a quantile.

use hdrhistogram::Histogram;
use serde::Serialize;

/// The quantiles rlctl reports, as exact fractions (numerator, denominator).
pub const QUANTILES: [(&str, u64, u64); 5] = [
    ("p50", 1, 2),
    ("p90", 9, 10),
    ("p95", 19, 20),
    ("p99", 99, 100),
    ("p999", 999, 1000),
];

/// How many samples a p99.9 needs before it rests on more than a handful of values.
pub const MIN_SAMPLES_FOR_P999: u64 = 1000;

/// Counts the histogram holds exactly: with 3 significant digits every count
/// below 2^11 has a bucket of its own.
const EXACT_BELOW: u64 = 2048;
/// Distinct counts held as a list before they go into a histogram.
const FEW_COUNTS: usize = 32;

/// A distribution of counts (one sample per client-window, per client-second, ...).
///
/// A histogram takes 16 KB however few its samples, and a report holds
/// three for each endpoint it lists: so a distribution of a few distinct
/// counts, all below 2048 (where the histogram is exact), is a
/// short list instead, and becomes a histogram only when a count would make
/// it long or inexact. Both give the same figures.
#[derive(Debug, Clone)]
pub struct CountDistribution {
    counts: Counts,
    max: u64,
}

#[derive(Debug, Clone)]
enum Counts {
    /// (count, samples with that count), ascending by count, every count
    /// below [`EXACT_BELOW`] and at most [`FEW_COUNTS`] of them.
    Few(Vec<(u64, u64)>),
    Many(Box<Histogram<u64>>),
}

impl Default for CountDistribution {
    fn default() -> Self {
        CountDistribution {
            counts: Counts::Few(Vec::new()),
            max: 0,
        }
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("3 significant digits is valid")
}

impl CountDistribution {
    /// Adds one sample.
    pub fn record(&mut self, count: u64) {
        self.record_n(count, 1);
    }

    /// Adds `n` samples of the same count (an exact histogram row).
    pub fn record_n(&mut self, count: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.max = self.max.max(count);
        if let Counts::Few(rows) = &mut self.counts {
            match rows.binary_search_by_key(&count, |r| r.0) {
                Ok(i) => return rows[i].1 += n,
                Err(i) if count < EXACT_BELOW && rows.len() < FEW_COUNTS => {
                    return rows.insert(i, (count, n));
                }
                Err(_) => {
                    let mut hist = histogram();
                    for &(c, k) in rows.iter() {
                        hist.record_n(c, k)
                            .expect("auto-resizing histogram accepts any u64");
                    }
                    self.counts = Counts::Many(Box::new(hist));
                }
            }
        }
        if let Counts::Many(hist) = &mut self.counts {
            hist.record_n(count, n)
                .expect("auto-resizing histogram accepts any u64");
        }
    }

    /// (count, samples) in ascending order of count: the histogram's buckets
    /// (each read as the highest count it holds), or the exact list.
    fn buckets(&self) -> Box<dyn Iterator<Item = (u64, u64)> + '_> {
        match &self.counts {
            Counts::Few(rows) => Box::new(rows.iter().copied()),
            Counts::Many(hist) => Box::new(
                hist.iter_recorded()
                    .map(|b| (b.value_iterated_to(), b.count_at_value())),
            ),
        }
    }

    /// Number of samples.
    pub fn samples(&self) -> u64 {
        match &self.counts {
            Counts::Few(rows) => rows.iter().map(|r| r.1).sum(),
            Counts::Many(hist) => hist.len(),
        }
    }

    /// The nearest-rank quantile num/den (0 when empty).
    pub fn quantile(&self, num: u64, den: u64) -> u64 {
        let n = self.samples();
        if n == 0 {
            return 0;
        }
        let rank = (u128::from(num) * u128::from(n))
            .div_ceil(u128::from(den))
            .max(1);
        let mut seen: u128 = 0;
        for (count, samples) in self.buckets() {
            seen += u128::from(samples);
            if seen >= rank {
                return count.min(self.max);
            }
        }
        self.max
    }

    /// All reported quantiles.
    pub fn quantiles(&self) -> Quantiles {
        let q = |i: usize| self.quantile(QUANTILES[i].1, QUANTILES[i].2);
        Quantiles {
            samples: self.samples(),
            p50: q(0),
            p90: q(1),
            p95: q(2),
            p99: q(3),
            p999: q(4),
            max: self.max,
        }
    }

    /// (count, samples with that count) for every recorded count, ascending.
    pub fn rows(&self) -> Vec<(u64, u64)> {
        self.buckets().collect()
    }

    /// This distribution without `removed` (a sub-multiset of its samples) and
    /// with `max` as its largest remaining sample (the caller knows it exactly).
    pub fn without(&self, removed: &[u64], max: u64) -> CountDistribution {
        let counts = match &self.counts {
            Counts::Few(rows) => {
                let mut rows = rows.clone();
                for &s in removed {
                    let i = rows
                        .binary_search_by_key(&s, |r| r.0)
                        .expect("removed samples are a sub-multiset of the recorded ones");
                    rows[i].1 -= 1;
                }
                rows.retain(|r| r.1 > 0);
                Counts::Few(rows)
            }
            Counts::Many(hist) => {
                let mut taken = histogram();
                for &s in removed {
                    taken
                        .record(s)
                        .expect("auto-resizing histogram accepts any u64");
                }
                let mut hist = hist.clone();
                hist.subtract(&taken)
                    .expect("removed samples are a sub-multiset of the recorded ones");
                Counts::Many(hist)
            }
        };
        CountDistribution { counts, max }
    }

    /// How many samples are strictly greater than `limit`.
    pub fn count_above(&self, limit: u64) -> u64 {
        self.buckets()
            .filter(|&(count, _)| count > limit)
            .map(|(_, samples)| samples)
            .sum()
    }
}

/// The reported figures of one distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Quantiles {
    /// Number of samples the figures rest on.
    pub samples: u64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl Quantiles {
    /// True when p99.9 rests on fewer than [`MIN_SAMPLES_FOR_P999`] samples.
    pub fn p999_is_thin(&self) -> bool {
        self.samples < MIN_SAMPLES_FOR_P999
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dist(samples: &[u64]) -> CountDistribution {
        let mut d = CountDistribution::default();
        samples.iter().for_each(|&s| d.record(s));
        d
    }

    /// The definition, computed the slow way.
    fn nearest_rank(samples: &[u64], num: u64, den: u64) -> u64 {
        let mut sorted = samples.to_vec();
        sorted.sort_unstable();
        let rank = (num * sorted.len() as u64).div_ceil(den).max(1);
        sorted[rank as usize - 1]
    }

    #[test]
    fn hand_worked_ten_samples() {
        // sorted: 1 1 2 2 3 3 4 5 9 40
        let d = dist(&[3, 1, 4, 1, 5, 9, 2, 40, 3, 2]);
        // p50: ceil(0.5*10)=5th → 3; p90: ceil(9)=9th → 9 (a float ceil(0.9*10) would give 10);
        // p95: ceil(9.5)=10th → 40; p99, p999 → 40.
        assert_eq!(
            d.quantiles(),
            Quantiles {
                samples: 10,
                p50: 3,
                p90: 9,
                p95: 40,
                p99: 40,
                p999: 40,
                max: 40
            }
        );
    }

    #[test]
    fn p999_of_a_thousand_samples_is_the_999th() {
        let samples: Vec<u64> = (1..=1000).collect();
        let q = dist(&samples).quantiles();
        assert_eq!((q.p999, q.p99, q.max), (999, 990, 1000));
        assert!(!q.p999_is_thin());
        assert!(dist(&[1]).quantiles().p999_is_thin());
    }

    #[test]
    fn empty_distribution_is_all_zero() {
        assert_eq!(
            CountDistribution::default().quantiles(),
            Quantiles::default()
        );
    }

    #[test]
    fn removing_samples_gives_the_distribution_of_the_rest() {
        let all = dist(&[1, 2, 2, 3, 900, 5000, 7]);
        let rest = all.without(&[900, 5000, 2], 7);
        assert_eq!(rest.quantiles(), dist(&[1, 2, 3, 7]).quantiles());
        assert_eq!(rest.samples(), 4);
    }

    #[test]
    fn rows_and_count_above() {
        let d = dist(&[1, 1, 5]);
        assert_eq!(d.rows(), vec![(1, 2), (5, 1)]);
        assert_eq!(d.count_above(1), 1);
    }

    #[test]
    fn the_histogram_is_exact_below_the_list_bound_only() {
        let hist = histogram();
        assert_eq!(hist.equivalent_range(EXACT_BELOW - 1), 1);
        assert_eq!(hist.equivalent_range(EXACT_BELOW), 2);
    }

    /// Rows of a plain histogram of `samples`: what a distribution gives,
    /// whether it holds them as a list or as a histogram.
    fn histogram_rows(samples: &[u64]) -> Vec<(u64, u64)> {
        let mut hist = histogram();
        samples.iter().for_each(|&s| hist.record(s).unwrap());
        hist.iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect()
    }

    proptest! {
        /// Few distinct small counts (a list), many, and large ones (a
        /// histogram), with some of the samples removed.
        #[test]
        fn a_list_and_a_histogram_give_the_same_figures(
            counts in prop::collection::vec(
                prop_oneof![4 => 0u64..40, 1 => 0u64..3000, 1 => 0u64..10_000_000],
                1..40,
            ),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..120),
            keep in prop::collection::vec(any::<bool>(), 120),
            limit in 0u64..3000,
        ) {
            let samples: Vec<u64> = picks.iter().map(|i| *i.get(&counts)).collect();
            let d = dist(&samples);
            let rows = histogram_rows(&samples);
            prop_assert_eq!(d.rows(), rows.clone());
            prop_assert_eq!(d.samples(), samples.len() as u64);
            let above: u64 = rows.iter().filter(|r| r.0 > limit).map(|r| r.1).sum();
            prop_assert_eq!(d.count_above(limit), above);
            let kept = |k: bool| -> Vec<u64> {
                samples.iter().zip(&keep).filter(|p| *p.1 == k).map(|p| *p.0).collect()
            };
            let (rest, removed) = (kept(true), kept(false));
            let max = rest.iter().copied().max().unwrap_or(0);
            let without = d.without(&removed, max);
            prop_assert_eq!(without.rows(), histogram_rows(&rest));
            prop_assert_eq!(without.quantiles(), dist(&rest).quantiles());
        }

        #[test]
        fn matches_the_definition_below_2048(samples in prop::collection::vec(0u64..2048, 1..400)) {
            let d = dist(&samples);
            for (_, num, den) in QUANTILES {
                prop_assert_eq!(d.quantile(num, den), nearest_rank(&samples, num, den));
            }
        }

        #[test]
        fn within_a_tenth_of_a_percent_above_2048(samples in prop::collection::vec(0u64..10_000_000, 1..200)) {
            let d = dist(&samples);
            for (_, num, den) in QUANTILES {
                let exact = nearest_rank(&samples, num, den) as f64;
                let got = d.quantile(num, den) as f64;
                prop_assert!((got - exact).abs() <= exact * 0.001 + 1.0, "{} vs {}", got, exact);
            }
        }
    }
}
