//! Sorting integer keys whose set bits all lie below a known bit count: a
//! least-significant-digit radix sort, a few passes that each read the keys
//! in order and write them into one of at most 2^11 runs, where a comparison
//! sort would make some twenty passes of unpredictable branches over a
//! million keys. For the (client, endpoint) pairs of a group of clients,
//! counted by sorting them ([`crate::profile`]'s facts).

/// Bits per digit at most: 2^11 counters of 4 bytes per pass, the counters of
/// every pass (at most 3 for 32 bits) within the first-level data cache.
const DIGIT_BITS: u32 = 11;
/// Below this many keys a comparison sort costs less than clearing the counters.
const SMALL: usize = 256;

/// Counters per digit value.
const BUCKETS: usize = 1 << DIGIT_BITS;
/// Passes at most: 32 bits in digits of [`DIGIT_BITS`].
const PASSES: usize = 32usize.div_ceil(DIGIT_BITS as usize);

/// Sorts `keys` ascending, every key being below 2^`bits`; `scratch` is a
/// buffer kept from one call to the next (its contents are of no account).
pub fn sort_keys(keys: &mut [u32], scratch: &mut Vec<u32>, bits: u32) {
    debug_assert!(keys.iter().all(|&k| bits >= 32 || k >> bits == 0));
    if keys.len() < SMALL || bits == 0 {
        keys.sort_unstable();
        return;
    }
    let bits = bits.min(32);
    let passes = bits.div_ceil(DIGIT_BITS) as usize;
    // Digits of equal width, at most DIGIT_BITS each.
    let width = bits.div_ceil(passes as u32);
    let mask = (1u32 << width) - 1;
    // The counts of every pass, from one read of the keys.
    let mut counts = [[0u32; BUCKETS]; PASSES];
    match passes {
        1 => histograms::<1>(keys, width, mask, &mut counts),
        2 => histograms::<2>(keys, width, mask, &mut counts),
        _ => histograms::<3>(keys, width, mask, &mut counts),
    }
    let n = keys.len();
    if scratch.len() < n {
        scratch.resize(n, 0);
    }
    let mut from_keys = true;
    for (p, count) in counts.iter_mut().enumerate().take(passes) {
        // A pass where every key has the same digit moves nothing.
        if count.iter().any(|&c| c as usize == n) {
            continue;
        }
        let mut at = 0u32;
        for c in count.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        let shift = p as u32 * width;
        let (src, dst) = if from_keys {
            (&keys[..], &mut scratch[..n])
        } else {
            (&scratch[..n], &mut keys[..])
        };
        for &k in src {
            let place = &mut count[digit(k, shift, mask)];
            dst[*place as usize] = k;
            *place += 1;
        }
        from_keys = !from_keys;
    }
    if !from_keys {
        keys.copy_from_slice(&scratch[..n]);
    }
}

/// The digit of `k` at `shift` (`mask` below [`BUCKETS`]).
#[inline]
fn digit(k: u32, shift: u32, mask: u32) -> usize {
    ((k >> shift) & mask) as usize & (BUCKETS - 1)
}

/// The counts of the first `P` digits of `keys`, one loop for all.
fn histograms<const P: usize>(
    keys: &[u32],
    width: u32,
    mask: u32,
    counts: &mut [[u32; BUCKETS]; PASSES],
) {
    for &k in keys {
        for (p, count) in counts.iter_mut().enumerate().take(P) {
            count[digit(k, p as u32 * width, mask)] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sort_keys;

    #[test]
    fn keys_of_one_digit_many_digits_and_all_bits_are_sorted() {
        let mut scratch = Vec::new();
        for bits in [1, 11, 12, 23, 32] {
            let mask = if bits == 32 {
                u32::MAX
            } else {
                (1 << bits) - 1
            };
            let mut keys: Vec<u32> = (0..5000u32)
                .map(|i| i.wrapping_mul(0x9E37_79B9) & mask)
                .collect();
            let mut want = keys.clone();
            want.sort_unstable();
            sort_keys(&mut keys, &mut scratch, bits);
            assert_eq!(keys, want, "{bits} bits");
        }
    }

    proptest::proptest! {
        #[test]
        fn radix_sorting_equals_sorting(
            bits in 0u32..=32,
            raw in proptest::collection::vec(proptest::num::u32::ANY, 0..2000),
            scratch_len in 0usize..3000,
        ) {
            let mask = if bits == 32 { u32::MAX } else { (1u32 << bits) - 1 };
            let mut keys: Vec<u32> = raw.iter().map(|&k| k & mask).collect();
            let mut want = keys.clone();
            want.sort_unstable();
            let mut scratch = vec![7; scratch_len];
            sort_keys(&mut keys, &mut scratch, bits);
            proptest::prop_assert_eq!(keys, want);
        }
    }
}
