//! Where the bytes that delimit combined fields (space, `"`, `\`, `[`, `]`)
//! are in a line, as one bit per byte: found 32 bytes at a time with AVX2
//! when the processor has it (checked at run time), else 16 at a time with
//! SSE2 (every x86-64 processor has it), byte by byte elsewhere. Reading the
//! fields is then a matter of finding the next set bit, not of scanning bytes.

/// The longest line [`Marks::of`] takes; longer ones go to the general reader.
pub const MAX_LINE: usize = 512;
const WORDS: usize = MAX_LINE / 64;

/// A set of byte positions below [`MAX_LINE`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Bits([u64; WORDS]);

impl Bits {
    fn set(&mut self, at: usize) {
        self.0[at / 64] |= 1 << (at % 64);
    }

    /// The first position at or after `from`.
    #[inline(always)]
    pub fn next(&self, from: usize) -> Option<usize> {
        let mut word = from / 64;
        let mut bits = *self.0.get(word)? & (u64::MAX << (from % 64));
        loop {
            if bits != 0 {
                return Some(word * 64 + bits.trailing_zeros() as usize);
            }
            word += 1;
            bits = *self.0.get(word)?;
        }
    }
}

/// The delimiters of one line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Marks {
    pub space: Bits,
    pub quote: Bits,
    /// `[` and `]` (told apart by reading the byte).
    pub bracket: Bits,
    /// True when the line has a backslash.
    pub backslash: bool,
}

impl Marks {
    /// The marks of `line`, or `None` when it is longer than [`MAX_LINE`].
    #[cfg(test)]
    pub fn of(line: &[u8]) -> Option<Marks> {
        let mut marks = Marks::default();
        marks.fill(line).then_some(marks)
    }

    /// Sets `self` (all clear on entry) to the marks of `line`, in place;
    /// false (and `self` untouched) when `line` is longer than [`MAX_LINE`].
    #[inline]
    pub fn fill(&mut self, line: &[u8]) -> bool {
        if line.len() > MAX_LINE {
            return false;
        }
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the processor has AVX2 (checked just above).
                unsafe { avx2(line, self) };
            } else {
                sse2(line, self);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        bytewise(line, self);
        true
    }
}

/// [`Marks::fill`] one byte at a time (the reference, and other processors).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn bytewise(line: &[u8], m: &mut Marks) {
    for (at, &b) in line.iter().enumerate() {
        match b {
            b' ' => m.space.set(at),
            b'"' => m.quote.set(at),
            b'[' | b']' => m.bracket.set(at),
            b'\\' => m.backslash = true,
            _ => {}
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn sse2(line: &[u8], m: &mut Marks) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    // The last 16 bytes (or fewer), zero-padded, so that every load reads 16 bytes.
    let tail_at = line.len().saturating_sub(1) / 16 * 16;
    let mut tail = [0u8; 16];
    tail[..line.len() - tail_at].copy_from_slice(&line[tail_at..]);
    // SAFETY: SSE2 is part of x86-64. Each load reads 16 bytes: inside `line`
    // for the blocks before `tail_at`, inside `tail` for the last.
    unsafe {
        let [space, quote, open, close, backslash] =
            [b' ', b'"', b'[', b']', b'\\'].map(|b| _mm_set1_epi8(b as i8));
        let mut backslashes = _mm_setzero_si128();
        for (word, at) in (0..line.len()).step_by(64).enumerate() {
            let mut found = [0u64; 3];
            for part in 0..4 {
                let block = at + part * 16;
                let bytes = if block < tail_at {
                    _mm_loadu_si128(line.as_ptr().add(block).cast::<__m128i>())
                } else if block == tail_at {
                    _mm_loadu_si128(tail.as_ptr().cast::<__m128i>())
                } else {
                    break;
                };
                let mask = |byte| u64::from(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, byte)) as u16);
                found[0] |= mask(space) << (part * 16);
                found[1] |= mask(quote) << (part * 16);
                found[2] |= (mask(open) | mask(close)) << (part * 16);
                backslashes = _mm_or_si128(backslashes, _mm_cmpeq_epi8(bytes, backslash));
            }
            (m.space.0[word], m.quote.0[word], m.bracket.0[word]) = (found[0], found[1], found[2]);
        }
        m.backslash = _mm_movemask_epi8(backslashes) != 0;
    }
}

/// The class of each delimiter in [`avx2`]'s lookup: a byte's class is
/// `LOW[low nibble] & HIGH[high nibble]`, exactly one of these for the five
/// delimiters and 0 for every other byte (a byte of 0x80 or more reads 0 from
/// `LOW`, as `vpshufb` gives for an index with its top bit set).
#[cfg(target_arch = "x86_64")]
const SPACE: i8 = 1;
#[cfg(target_arch = "x86_64")]
const QUOTE: i8 = 2;
#[cfg(target_arch = "x86_64")]
const BRACKET: i8 = 4;
#[cfg(target_arch = "x86_64")]
const BACKSLASH: i8 = 8;
/// By low nibble: ` ` 0x20, `"` 0x22, `[` 0x5B, `\` 0x5C, `]` 0x5D.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
const LOW: [i8; 16] = [SPACE, 0, QUOTE, 0, 0, 0, 0, 0, 0, 0, 0, BRACKET, BACKSLASH, BRACKET, 0, 0];
/// By high nibble: 0x2_ holds the space and the quote, 0x5_ the brackets and
/// the backslash.
#[cfg(target_arch = "x86_64")]
#[rustfmt::skip]
const HIGH: [i8; 16] = [0, 0, SPACE | QUOTE, 0, 0, BRACKET | BACKSLASH, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/// [`Marks::fill`] 32 bytes at a time: one table lookup per nibble classifies
/// every byte, then one comparison per class gives its bits.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2(line: &[u8], m: &mut Marks) {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
        _mm256_srli_epi16,
    };
    let len = line.len();
    // A line shorter than 32 bytes is read from a zero-padded copy.
    let mut short = [0u8; 32];
    if len < 32 {
        short[..len].copy_from_slice(line);
    }
    // SAFETY: AVX2 is present (the caller's contract). Each load reads 32
    // bytes: whole blocks at offsets `o` with `o + 32 <= len`, inside `line`;
    // the last, partial block from `len - 32` (inside `line`, as `len >= 32`)
    // or from `short`. `word` stays below WORDS as `len <= MAX_LINE`.
    unsafe {
        let table = |t: &[i8; 16]| _mm256_loadu_si256([*t, *t].as_ptr().cast::<__m256i>());
        let (low, high) = (table(&LOW), table(&HIGH));
        let nibble = _mm256_set1_epi8(0x0f);
        let [space, quote, bracket] = [SPACE, QUOTE, BRACKET].map(|c| _mm256_set1_epi8(c));
        let mut classes = _mm256_setzero_si256();
        // The class of each of the 32 bytes at `from`.
        let mut classify = |from: *const u8| {
            let bytes = _mm256_loadu_si256(from.cast::<__m256i>());
            let class = _mm256_and_si256(
                _mm256_shuffle_epi8(low, bytes),
                _mm256_shuffle_epi8(high, _mm256_and_si256(_mm256_srli_epi16(bytes, 4), nibble)),
            );
            classes = _mm256_or_si256(classes, class);
            class
        };
        // The bytes of class `c` among 32 classes, one bit each.
        let bits = |class, c| _mm256_movemask_epi8(_mm256_cmpeq_epi8(class, c)) as u32;
        let at = |offset: usize| line.as_ptr().add(offset);
        // Whole words of 64 bytes, each written once.
        let mut word = 0;
        while 64 * word + 64 <= len {
            let (a, b) = (classify(at(64 * word)), classify(at(64 * word + 32)));
            let pair = |c| u64::from(bits(a, c)) | u64::from(bits(b, c)) << 32;
            m.space.0[word] = pair(space);
            m.quote.0[word] = pair(quote);
            m.bracket.0[word] = pair(bracket);
            word += 1;
        }
        // Then at most one whole block of 32 bytes, and the partial one.
        let mut done = 64 * word;
        if done + 32 <= len {
            let a = classify(at(done));
            m.space.0[word] = u64::from(bits(a, space));
            m.quote.0[word] = u64::from(bits(a, quote));
            m.bracket.0[word] = u64::from(bits(a, bracket));
            done += 32;
        }
        if done < len {
            // The last 32 bytes of the line, of which the first `skip` were done.
            let (class, skip) = if len >= 32 {
                (classify(at(len - 32)), 32 - (len - done) as u32)
            } else {
                (classify(short.as_ptr()), 0)
            };
            let shift = done % 64;
            m.space.0[word] |= u64::from(bits(class, space) >> skip) << shift;
            m.quote.0[word] |= u64::from(bits(class, quote) >> skip) << shift;
            m.bracket.0[word] |= u64::from(bits(class, bracket) >> skip) << shift;
        }
        let backslashes = _mm256_cmpeq_epi8(
            _mm256_and_si256(classes, _mm256_set1_epi8(BACKSLASH)),
            _mm256_set1_epi8(BACKSLASH),
        );
        m.backslash = _mm256_movemask_epi8(backslashes) != 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn marks_are_the_bytes_positions(line in prop::collection::vec(
            prop::sample::select(vec![b' ', b'"', b'\\', b'[', b']', b'a', 0, 0xff, 0xa0, 0xdc]), 0..=MAX_LINE + 2)
        ) {
            match Marks::of(&line) {
                None => prop_assert!(line.len() > MAX_LINE),
                Some(marks) => {
                    let kernel = |fill: &dyn Fn(&mut Marks)| {
                        let mut m = Marks::default();
                        fill(&mut m);
                        m
                    };
                    prop_assert_eq!(&marks, &kernel(&|m| bytewise(&line, m)));
                    #[cfg(target_arch = "x86_64")]
                    {
                        prop_assert_eq!(&kernel(&|m| sse2(&line, m)), &marks);
                        if std::arch::is_x86_feature_detected!("avx2") {
                            // SAFETY: the processor has AVX2.
                            prop_assert_eq!(&kernel(&|m| unsafe { avx2(&line, m) }), &marks);
                        }
                    }
                    let from = line.len() / 3;
                    prop_assert_eq!(
                        marks.space.next(from),
                        line.iter().skip(from).position(|&b| b == b' ').map(|i| from + i)
                    );
                }
            }
        }
    }

    /// Every byte value, alone and among others, in lines of every length
    /// up to 100 (each kernel's whole blocks, its partial block and its
    /// zero-padded short line).
    #[test]
    fn every_byte_is_marked_as_bytewise_marks_it() {
        for byte in 0..=255u8 {
            for len in 0..100 {
                let line: Vec<u8> = (0..len)
                    .map(|i| {
                        if i % 3 == 0 {
                            byte
                        } else {
                            [b'a', b' ', b'\\'][i % 3]
                        }
                    })
                    .collect();
                let mut want = Marks::default();
                bytewise(&line, &mut want);
                assert_eq!(Marks::of(&line).as_ref(), Some(&want), "{byte:#x}, {len}");
                #[cfg(target_arch = "x86_64")]
                {
                    let mut got = Marks::default();
                    sse2(&line, &mut got);
                    assert_eq!(got, want, "{byte:#x}, {len}");
                }
            }
        }
    }

    #[test]
    fn next_crosses_words_and_stops_at_the_end() {
        let mut bits = Bits::default();
        bits.set(3);
        bits.set(130);
        assert_eq!(bits.next(0), Some(3));
        assert_eq!(bits.next(4), Some(130));
        assert_eq!(bits.next(131), None);
        assert_eq!(bits.next(MAX_LINE), None);
    }
}
