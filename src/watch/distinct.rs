//! Counting distinct clients in a fixed amount of memory: exact up to
//! [`EXACT_LIMIT`] clients (their 64-bit hashes), then a HyperLogLog sketch of
//! 2^[`PRECISION`] one-byte registers (Flajolet et al. 2007, with linear
//! counting for small cardinalities; relative standard error 1.04/√4096 ≈ 1.6%).
//!
//! Keys are hashed with SipHash-1-3 under fixed keys (`DefaultHasher::new`),
//! so counts are the same from one run to the next.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

/// Clients counted exactly before switching to the sketch.
pub const EXACT_LIMIT: usize = 1024;
/// Register index bits of the sketch.
pub const PRECISION: u32 = 12;
const REGISTERS: usize = 1 << PRECISION;

/// The hash a key is counted by.
pub fn key_hash(key: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

/// A set of client hashes that stops growing at [`EXACT_LIMIT`].
#[derive(Debug, Clone)]
pub enum Distinct {
    /// Every hash seen.
    Exact(HashSet<u64>),
    /// The sketch's registers.
    Sketch(Box<[u8]>),
}

impl Default for Distinct {
    fn default() -> Self {
        Distinct::Exact(HashSet::new())
    }
}

fn sketch_insert(registers: &mut [u8], hash: u64) {
    let index = (hash >> (64 - PRECISION)) as usize;
    let rest = hash << PRECISION;
    let rank = (rest.leading_zeros() + 1).min(64 - PRECISION + 1) as u8;
    registers[index] = registers[index].max(rank);
}

fn estimate(registers: &[u8]) -> u64 {
    let m = REGISTERS as f64;
    let zeros = registers.iter().filter(|&&r| r == 0).count();
    let sum: f64 = registers.iter().map(|&r| (-f64::from(r)).exp2()).sum();
    let raw = 0.7213 / (1.0 + 1.079 / m) * m * m / sum;
    let value = if raw <= 2.5 * m && zeros > 0 {
        m * (m / zeros as f64).ln()
    } else {
        raw
    };
    value.round() as u64
}

impl Distinct {
    /// Adds a client by its [`key_hash`].
    pub fn insert(&mut self, hash: u64) {
        match self {
            Distinct::Exact(set) => {
                set.insert(hash);
                if set.len() > EXACT_LIMIT {
                    let mut registers = vec![0u8; REGISTERS].into_boxed_slice();
                    set.iter().for_each(|&h| sketch_insert(&mut registers, h));
                    *self = Distinct::Sketch(registers);
                }
            }
            Distinct::Sketch(registers) => sketch_insert(registers, hash),
        }
    }

    /// How many distinct clients (exact while below the limit).
    pub fn count(&self) -> u64 {
        match self {
            Distinct::Exact(set) => set.len() as u64,
            Distinct::Sketch(registers) => estimate(registers),
        }
    }

    /// True when the count is exact.
    pub fn is_exact(&self) -> bool {
        matches!(self, Distinct::Exact(_))
    }

    /// The union of several sets: exact when every part is exact.
    pub fn union<'a>(parts: impl IntoIterator<Item = &'a Distinct>) -> Distinct {
        let mut exact: HashSet<u64> = HashSet::new();
        let mut registers: Option<Box<[u8]>> = None;
        for part in parts {
            match part {
                Distinct::Exact(set) => exact.extend(set),
                Distinct::Sketch(r) => {
                    let merged = registers.get_or_insert_with(|| r.clone());
                    merged
                        .iter_mut()
                        .zip(r.iter())
                        .for_each(|(m, &x)| *m = (*m).max(x));
                }
            }
        }
        match registers {
            None => Distinct::Exact(exact),
            Some(mut merged) => {
                exact.iter().for_each(|&h| sketch_insert(&mut merged, h));
                Distinct::Sketch(merged)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(keys: impl IntoIterator<Item = String>) -> Distinct {
        let mut d = Distinct::default();
        keys.into_iter().for_each(|k| d.insert(key_hash(&k)));
        d
    }

    #[test]
    fn exact_up_to_the_limit() {
        let d = of((0..EXACT_LIMIT).chain(0..10).map(|i| format!("10.0.0.{i}")));
        assert!(d.is_exact());
        assert_eq!(d.count(), EXACT_LIMIT as u64);
    }

    #[test]
    fn the_sketch_stays_within_a_few_percent() {
        for n in [2_000u64, 50_000, 300_000] {
            let d = of((0..n).map(|i| format!("client-{i}")));
            assert!(!d.is_exact());
            let error = (d.count() as f64 - n as f64).abs() / n as f64;
            assert!(error < 0.05, "{n}: {} ({error})", d.count());
        }
    }

    #[test]
    fn unions_are_exact_when_every_part_is() {
        let a = of((0..600).map(|i| format!("k{i}")));
        let b = of((300..900).map(|i| format!("k{i}")));
        let u = Distinct::union([&a, &b]);
        assert!(u.is_exact());
        assert_eq!(u.count(), 900);
        // With a sketch among the parts: close to the true union.
        let big = of((0..20_000).map(|i| format!("k{i}")));
        let u = Distinct::union([&a, &big, &b]);
        let error = (u.count() as f64 - 20_000.0).abs() / 20_000.0;
        assert!(error < 0.05, "{}", u.count());
    }
}
