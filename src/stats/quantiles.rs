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

/// A distribution of counts (one sample per client-window, per client-second, ...).
#[derive(Debug, Clone)]
pub struct CountDistribution {
    hist: Histogram<u64>,
    max: u64,
}

impl Default for CountDistribution {
    fn default() -> Self {
        CountDistribution {
            hist: Histogram::new(3).expect("3 significant digits is valid"),
            max: 0,
        }
    }
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
        self.hist
            .record_n(count, n)
            .expect("auto-resizing histogram accepts any u64");
        self.max = self.max.max(count);
    }

    /// Number of samples.
    pub fn samples(&self) -> u64 {
        self.hist.len()
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
        for bucket in self.hist.iter_recorded() {
            seen += u128::from(bucket.count_at_value());
            if seen >= rank {
                return bucket.value_iterated_to().min(self.max);
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
        self.hist
            .iter_recorded()
            .map(|b| (b.value_iterated_to(), b.count_at_value()))
            .collect()
    }

    /// This distribution without `removed` (a sub-multiset of its samples) and
    /// with `max` as its largest remaining sample (the caller knows it exactly).
    pub fn without(&self, removed: &[u64], max: u64) -> CountDistribution {
        let mut taken = CountDistribution::default();
        removed.iter().for_each(|&s| taken.record(s));
        let mut hist = self.hist.clone();
        hist.subtract(&taken.hist)
            .expect("removed samples are a sub-multiset of the recorded ones");
        CountDistribution { hist, max }
    }

    /// How many samples are strictly greater than `limit`.
    pub fn count_above(&self, limit: u64) -> u64 {
        self.hist
            .iter_recorded()
            .filter(|b| b.value_iterated_to() > limit)
            .map(|b| b.count_at_value())
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

    proptest! {
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
