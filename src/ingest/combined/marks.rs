//! Where the bytes that delimit combined fields (space, `"`, `\`, `[`, `]`)
//! are in a line, as one bit per byte: found 16 bytes at a time with SSE2
//! (every x86-64 processor has it), byte by byte elsewhere. Reading the
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
    #[inline]
    pub fn of(line: &[u8]) -> Option<Marks> {
        if line.len() > MAX_LINE {
            return None;
        }
        #[cfg(target_arch = "x86_64")]
        return Some(sse2(line));
        #[cfg(not(target_arch = "x86_64"))]
        return Some(bytewise(line));
    }
}

/// [`Marks::of`] one byte at a time (the reference, and other processors).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn bytewise(line: &[u8]) -> Marks {
    let mut m = Marks::default();
    for (at, &b) in line.iter().enumerate() {
        match b {
            b' ' => m.space.set(at),
            b'"' => m.quote.set(at),
            b'[' | b']' => m.bracket.set(at),
            b'\\' => m.backslash = true,
            _ => {}
        }
    }
    m
}

#[cfg(target_arch = "x86_64")]
fn sse2(line: &[u8]) -> Marks {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    let mut m = Marks::default();
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
    m
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
                    prop_assert_eq!(&marks, &bytewise(&line));
                    let from = line.len() / 3;
                    prop_assert_eq!(
                        marks.space.next(from),
                        line.iter().skip(from).position(|&b| b == b' ').map(|i| from + i)
                    );
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
