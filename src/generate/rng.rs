//! The generator's own random numbers: xoshiro256** seeded through splitmix64,
//! with uniform, exponential, normal and lognormal sampling.
//!
//! Written out here, not taken from a crate, so that one seed gives byte-identical
//! logs forever, whatever crate versions or platform the build uses. For the same
//! reason the samplers never call the platform's `ln`/`exp`/`sin`/`cos` (libm
//! results may differ in the last bit between C libraries): [`ln`] and [`exp`]
//! below use only `+ - * /`, which IEEE 754 rounds exactly the same everywhere,
//! and the normal sampler is Box-Muller in Marsaglia's polar form, which needs
//! only `ln` and the (exactly rounded) `sqrt`.

/// A deterministic pseudo-random generator (xoshiro256**).
#[derive(Debug, Clone)]
pub struct Rng {
    state: [u64; 4],
}

/// One step of splitmix64: advances `state` and returns a well-mixed word.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole state is expanded from `seed` by splitmix64.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let state = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { state }
    }

    /// An independent generator for sub-stream `stream` of `seed` (one per client,
    /// one per burst...), so streams do not shift when another one draws more.
    pub fn derive(seed: u64, stream: u64) -> Self {
        let mut sm = stream ^ 0xD1B5_4A32_D192_ED03;
        Rng::new(seed ^ splitmix64(&mut sm))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.state;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1), with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [lo, hi).
    pub fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in [0, n) (Lemire's multiply-shift; `n` must be > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform integer in [lo, hi].
    pub fn between(&mut self, lo: u32, hi: u32) -> u32 {
        lo + self.below(u64::from(hi - lo) + 1) as u32
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// One element of a non-empty slice, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Index drawn with probability proportional to `weights` (not all zero).
    pub fn weighted<I>(&mut self, weights: I) -> usize
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: Clone,
    {
        let weights = weights.into_iter();
        let total: u64 = weights.clone().map(u64::from).sum();
        let mut ticket = self.below(total);
        let mut last = 0;
        for (i, w) in weights.enumerate() {
            if ticket < u64::from(w) {
                return i;
            }
            ticket -= u64::from(w);
            last = i;
        }
        last
    }

    /// Exponential with the given rate (mean 1 / rate): Poisson inter-arrival gaps.
    pub fn exponential(&mut self, rate: f64) -> f64 {
        -ln(1.0 - self.uniform()) / rate
    }

    /// Standard normal (mean 0, standard deviation 1): Box-Muller, polar form.
    pub fn normal(&mut self) -> f64 {
        loop {
            let u = 2.0 * self.uniform() - 1.0;
            let v = 2.0 * self.uniform() - 1.0;
            let s = u * u + v * v;
            if s > 0.0 && s < 1.0 {
                return u * (-2.0 * ln(s) / s).sqrt();
            }
        }
    }

    /// Lognormal with the given median and shape: `median * e^(sigma * N(0, 1))`.
    pub fn lognormal(&mut self, median: f64, sigma: f64) -> f64 {
        median * exp(sigma * self.normal())
    }
}

/// fdlibm's split of ln 2: the high part has trailing zero bits, so `k * LN2_HI`
/// is exact for every exponent `k` used here.
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

/// Natural logarithm of a positive finite `x`, from basic IEEE operations only
/// (error below 2e-16 relative). Returns NaN for `x <= 0`.
pub fn ln(x: f64) -> f64 {
    if x.is_nan() || x <= 0.0 {
        return f64::NAN;
    }
    if x.is_infinite() {
        return x;
    }
    let (mut x, mut k) = (x, 0i64);
    if x < f64::MIN_POSITIVE {
        x *= (1u64 << 54) as f64;
        k = -54;
    }
    let bits = x.to_bits();
    k += ((bits >> 52) & 0x7ff) as i64 - 1023;
    // Mantissa m in [1, 2), then moved to [sqrt(1/2), sqrt(2)) so |s| <= 0.1716.
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        k += 1;
    }
    // ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...), s = (m - 1) / (m + 1).
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut series = 0.0;
    for odd in (3..=25).rev().step_by(2) {
        series = (series + 1.0 / f64::from(odd)) * s2;
    }
    let ln_m = 2.0 * s + 2.0 * s * series;
    let k = k as f64;
    k * LN2_HI + (ln_m + k * LN2_LO)
}

/// e^x from basic IEEE operations only (error below 3e-16 relative).
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.0 {
        return f64::INFINITY;
    }
    if x < -708.0 {
        return 0.0;
    }
    // x = k ln 2 + r with |r| <= ln 2 / 2; e^x = 2^k e^r.
    let k = (x * std::f64::consts::LOG2_E).round();
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let mut taylor = 1.0;
    for n in (1..=14).rev() {
        taylor = 1.0 + taylor * r / f64::from(n);
    }
    let scale = f64::from_bits(((k as i64 + 1023) as u64) << 52);
    taylor * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_and_xoshiro_match_their_reference_outputs() {
        // splitmix64 from state 0: first output of the published reference code.
        let mut sm = 0u64;
        assert_eq!(splitmix64(&mut sm), 0xE220_A839_7B1D_CDAF);
        // xoshiro256** from state [1, 2, 3, 4]: rotl(2 * 5, 7) * 9 = 11520, then
        // the state update of the reference implementation.
        let mut rng = Rng {
            state: [1, 2, 3, 4],
        };
        assert_eq!(rng.next_u64(), 11_520);
        assert_eq!(rng.state, [7, 0, 262_146, 211_106_232_532_992]);
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different_sequence() {
        let draw = |seed| {
            let mut r = Rng::new(seed);
            (0..64).map(|_| r.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(draw(42), draw(42));
        assert_ne!(draw(42), draw(43));
        let derived = |s| Rng::derive(42, s).next_u64();
        assert_ne!(derived(1), derived(2));
        assert_eq!(derived(7), derived(7));
    }

    #[test]
    fn ln_and_exp_agree_with_the_platform_to_a_few_ulps() {
        let mut r = Rng::new(1);
        for _ in 0..20_000 {
            let x = exp(r.uniform_in(-700.0, 700.0));
            let rel = (ln(x) - x.ln()).abs() / x.ln().abs().max(1.0);
            assert!(rel < 1e-15, "ln({x}) = {} vs {}", ln(x), x.ln());
            let y = r.uniform_in(-40.0, 40.0);
            let rel = (exp(y) - y.exp()).abs() / y.exp();
            assert!(rel < 1e-15, "exp({y}) = {} vs {}", exp(y), y.exp());
        }
        for x in [1.0, 2.0, 0.5, 1e-300, 5e-324, f64::MAX] {
            assert!(
                (ln(x) - x.ln()).abs() <= 1e-15 * x.ln().abs().max(1.0),
                "{x}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert!(ln(0.0).is_nan() && ln(-1.0).is_nan());
        assert_eq!(exp(0.0), 1.0);
    }

    #[test]
    fn samplers_have_the_right_moments() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let uniform: Vec<f64> = (0..n).map(|_| r.uniform()).collect();
        assert!(uniform.iter().all(|&u| (0.0..1.0).contains(&u)));
        assert!((mean(&uniform) - 0.5).abs() < 0.005);
        let expo: Vec<f64> = (0..n).map(|_| r.exponential(4.0)).collect();
        assert!((mean(&expo) - 0.25).abs() < 0.005);
        let normal: Vec<f64> = (0..n).map(|_| r.normal()).collect();
        let m = mean(&normal);
        let var = normal.iter().map(|z| (z - m) * (z - m)).sum::<f64>() / n as f64;
        assert!(m.abs() < 0.01 && (var - 1.0).abs() < 0.02, "{m} {var}");
        let mut logn: Vec<f64> = (0..n).map(|_| r.lognormal(0.2, 1.0)).collect();
        logn.sort_by(f64::total_cmp);
        assert!((logn[n / 2] - 0.2).abs() < 0.005, "median {}", logn[n / 2]);
    }

    #[test]
    fn integer_helpers_stay_in_range_and_follow_weights() {
        let mut r = Rng::new(3);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            assert!(r.below(10) < 10);
            let b = r.between(5, 7);
            assert!((5..=7).contains(&b));
            counts[r.weighted([1, 0, 3])] += 1;
        }
        assert_eq!(counts[1], 0);
        let share = f64::from(counts[2]) / 30_000.0;
        assert!((share - 0.75).abs() < 0.02, "{share}");
    }
}
