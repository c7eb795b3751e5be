//! Hints to the CPU's cache: asking for memory before it is read, so that
//! the wait for it overlaps other work.

/// Asks for the cache line at `at` without waiting for it.
#[inline(always)]
pub fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch only hints the cache and never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// The bytes of a buffer read front to back, asked for `AHEAD` bytes before
/// they are read: [`ReadAhead::reached`] is told how far reading got.
///
/// Within a page the processor's own prefetcher follows such a stream; it
/// stops at each 4 KiB page boundary, where reading a memory-mapped file
/// then waits on memory (and on the page's address translation).
pub struct ReadAhead<'a, const AHEAD: usize> {
    bytes: &'a [u8],
    /// Bytes asked for so far.
    asked: usize,
}

impl<'a, const AHEAD: usize> ReadAhead<'a, AHEAD> {
    pub fn new(bytes: &'a [u8]) -> Self {
        ReadAhead { bytes, asked: 0 }
    }

    /// Reading has got to byte `at`: asks for the cache lines up to `AHEAD` bytes on.
    #[inline(always)]
    pub fn reached(&mut self, at: usize) {
        let want = at.saturating_add(AHEAD).min(self.bytes.len());
        while self.asked < want {
            prefetch(self.bytes[self.asked..].as_ptr());
            self.asked += CACHE_LINE;
        }
    }
}

/// Bytes per cache line.
const CACHE_LINE: usize = 64;

#[cfg(test)]
mod tests {
    use super::ReadAhead;

    #[test]
    fn asks_for_each_line_once_and_never_past_the_end() {
        let bytes = vec![0u8; 1000];
        let mut ahead = ReadAhead::<256>::new(&bytes);
        ahead.reached(0);
        assert_eq!(ahead.asked, 256);
        ahead.reached(100);
        assert_eq!(ahead.asked, 384);
        ahead.reached(900);
        assert_eq!(
            ahead.asked, 1024,
            "stops at the first line at or past the end"
        );
        ahead.reached(usize::MAX);
        assert_eq!(ahead.asked, 1024);
    }
}
