//! Where a request target's path ends: its first `?` or `#`, found eight
//! bytes at a time in plain integer words. Targets are short (tens of
//! bytes), so this inline scan costs less than a call to a vectorised
//! search, which pays for dispatch and set-up on every target.

/// `0x01` in every byte.
const ONES: u64 = u64::from_le_bytes([1; 8]);
/// `0x80` in every byte.
const HIGHS: u64 = ONES << 7;

/// The first byte of `word` (little-endian) that is `?` or `#`.
#[inline(always)]
fn first_in_word(word: u64) -> Option<usize> {
    // A byte equal to `b` is zero in `word ^ b`; `x - 1 & !x` sets the high
    // bit of the lowest zero byte exactly (a borrow sets bits only above it).
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    let found = zero(word ^ (ONES * u64::from(b'?'))) | zero(word ^ (ONES * u64::from(b'#')));
    (found != 0).then(|| found.trailing_zeros() as usize / 8)
}

/// The eight bytes at `at`.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Where the first `?` or `#` of `bytes` is.
#[inline]
pub(super) fn path_end(bytes: &[u8]) -> Option<usize> {
    let len = bytes.len();
    if len < 8 {
        return bytes.iter().position(|&b| b == b'?' || b == b'#');
    }
    let mut at = 0;
    while at + 8 <= len {
        if let Some(i) = first_in_word(word_at(bytes, at)) {
            return Some(at + i);
        }
        at += 8;
    }
    // The last eight bytes, overlapping those already read (none of which
    // matched), when the length is not a multiple of eight.
    (at < len)
        .then(|| first_in_word(word_at(bytes, len - 8)))
        .flatten()
        .map(|i| len - 8 + i)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]

        /// The word scan finds what a scan of the bytes finds.
        #[test]
        fn the_path_ends_at_the_first_query_or_fragment(
            bytes in proptest::collection::vec(
                // `?` and `#` rare enough that long targets often have neither;
                // their neighbours and 0x00, 0x80 and 0xff for the borrows.
                prop_oneof![
                    24 => any::<u8>(),
                    1 => Just(b'?'),
                    1 => Just(b'#'),
                    2 => prop::sample::select(vec![b'>', b'@', b'"', b'$', 0, 0x80, 0xff, 0xbf, 0xa3]),
                ],
                0..40,
            ),
        ) {
            let by_bytes = bytes.iter().position(|&b| b == b'?' || b == b'#');
            prop_assert_eq!(super::path_end(&bytes), by_bytes);
            prop_assert_eq!(super::path_end(&bytes), memchr::memchr2(b'?', b'#', &bytes));
        }
    }
}
