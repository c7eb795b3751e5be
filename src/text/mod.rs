//! The lowest layer of plain helpers every other module may use: escaping of
//! log-derived text ([`escape`]), atomic file writes ([`atomic`]), calendar
//! arithmetic and date formatting ([`time`]), counts with their noun
//! ([`counted`]), and hints to the processor's cache ([`cache`]).
//!
//! It owns no domain types and imports nothing from the rest of the crate but
//! [`crate::units`]: ingestion, export, frames and rendering all sit above it.

pub mod atomic;
pub mod cache;
pub mod escape;
pub mod time;

/// `n` and the noun, plural unless `n` is 1: `1 client`, `2 clients`.
pub fn counted(n: impl TryInto<u64>, noun: &str) -> String {
    match n.try_into().unwrap_or(u64::MAX) {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counted_is_singular_for_one_only() {
        assert_eq!(super::counted(0u64, "client"), "0 clients");
        assert_eq!(super::counted(1u64, "client"), "1 client");
        assert_eq!(super::counted(2u32, "sample"), "2 samples");
        assert_eq!(super::counted(1usize, "rule"), "1 rule");
    }
}
