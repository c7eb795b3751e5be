//! High-cardinality paths for `--distinct-paths N`: a pool of N raw paths that
//! the automatic endpoint rules do not recognise as parameters, the way real
//! sites produce them (cache-busted assets, short hex ids, base62 ids, slugs).
//!
//! Pool path `i` is a pure function of `i`, in one of four shapes by `i % 4`
//! (with `j = i / 4`):
//!
//! | `i % 4` | shape | example |
//! |---|---|---|
//! | 0 | cache-busted asset | `/static/app.206277e0.js` |
//! | 1 | short hex id | `/api/orders/4f9c2a1e` |
//! | 2 | base62 id | `/v/dQw4w9WgXcQ` |
//! | 3 | slug | `/blog/autumn-ember-harbor` |
//!
//! Hashes and ids are bijections of `j`, so distinct indices give distinct
//! paths. Which request asks for which index is decided in output order by
//! [`PoolAssigner`]: the k-th pool request asks for path k while k < N (every
//! pool path appears once before any repeats), later ones for a uniformly drawn
//! index, so most pool paths are rare and a log with at least N pool requests
//! holds exactly N of them.

use super::rng::{Rng, splitmix64};

/// Share of the requests of steady clients, office users and crawlers that go
/// to the pool when `--distinct-paths` is set (runaway loops, batch bursts,
/// monitors and scanners keep their own paths).
pub const POOL_SHARE: f64 = 0.25;

/// The four shapes of pool paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `/static/{name}.{8 hex}.{js|css}`
    Asset,
    /// `/api/orders/{8 hex}`
    HexId,
    /// `/v/{11 base62}`
    Base62,
    /// `/blog/{word}-{word}-{word}...`
    Slug,
}

impl Shape {
    /// The shape of pool path `i`.
    pub fn of(i: u32) -> Shape {
        match i % 4 {
            0 => Shape::Asset,
            1 => Shape::HexId,
            2 => Shape::Base62,
            _ => Shape::Slug,
        }
    }
}

const ASSETS: [(&str, &str); 6] = [
    ("app", "js"),
    ("vendor", "js"),
    ("main", "css"),
    ("runtime", "js"),
    ("checkout", "js"),
    ("theme", "css"),
];

/// Words of pool slugs (none of them in the fixed blog slugs, so a pool slug
/// never equals one of those).
pub const SLUG_WORDS: [&str; 32] = [
    "autumn", "ember", "harbor", "linen", "meadow", "copper", "velvet", "cedar", "river", "stone",
    "maple", "orbit", "pixel", "quartz", "saffron", "tundra", "violet", "willow", "amber",
    "basalt", "canyon", "delta", "fjord", "glacier", "hazel", "indigo", "juniper", "kelp",
    "lagoon", "marble", "nectar", "opal",
];

/// Appends pool path `i` to `out`.
pub fn write_path(i: u32, out: &mut Vec<u8>) {
    let j = i / 4;
    match Shape::of(i) {
        Shape::Asset => {
            let (name, ext) = ASSETS[j as usize % ASSETS.len()];
            out.extend_from_slice(b"/static/");
            out.extend_from_slice(name.as_bytes());
            out.push(b'.');
            push_hex8(out, permute32(j ^ 0x0A55_E7C0));
            out.push(b'.');
            out.extend_from_slice(ext.as_bytes());
        }
        Shape::HexId => {
            out.extend_from_slice(b"/api/orders/");
            push_hex8(out, permute32(j ^ 0x0D0E_1D5A));
        }
        Shape::Base62 => {
            out.extend_from_slice(b"/v/");
            let mut state = u64::from(j) ^ 0x6261_7365_3632_2121;
            // splitmix64's output function is a bijection of its state step.
            push_base62_11(out, splitmix64(&mut state));
        }
        Shape::Slug => {
            out.extend_from_slice(b"/blog/");
            push_slug(out, j);
        }
    }
}

/// A bijection of `u32` (xor-shift and odd multiplications, each invertible).
fn permute32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7FEB_352D);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846C_A68B);
    x ^ (x >> 16)
}

fn push_hex8(out: &mut Vec<u8>, x: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..8).rev() {
        out.push(HEX[((x >> (shift * 4)) & 0xF) as usize]);
    }
}

/// Eleven base62 digits (62^11 > 2^64, so every `u64` has its own).
fn push_base62_11(out: &mut Vec<u8>, mut x: u64) {
    const DIGITS: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut digits = [0u8; 11];
    for d in digits.iter_mut().rev() {
        *d = DIGITS[(x % 62) as usize];
        x /= 62;
    }
    out.extend_from_slice(&digits);
}

/// `j` in base 32 with at least three digits, each digit a word, least
/// significant first: a canonical representation, so distinct `j` give
/// distinct slugs.
fn push_slug(out: &mut Vec<u8>, mut j: u32) {
    let base = SLUG_WORDS.len() as u32;
    let mut words = 0;
    while words < 3 || j > 0 {
        if words > 0 {
            out.push(b'-');
        }
        out.extend_from_slice(SLUG_WORDS[(j % base) as usize].as_bytes());
        j /= base;
        words += 1;
    }
}

/// Decides, in output order, which pool path each pool request asks for.
#[derive(Debug, Clone)]
pub struct PoolAssigner {
    size: u32,
    issued: u64,
    rng: Rng,
}

impl PoolAssigner {
    /// For a pool of `size` paths (at least 1).
    pub fn new(size: u32, seed: u64) -> Self {
        PoolAssigner {
            size: size.max(1),
            issued: 0,
            rng: Rng::derive(seed, 0x706F_6F6C << 32),
        }
    }

    /// The index of the next pool request.
    pub fn next_index(&mut self) -> u32 {
        let k = self.issued;
        self.issued += 1;
        if k < u64::from(self.size) {
            k as u32
        } else {
            self.rng.below(u64::from(self.size)) as u32
        }
    }
}

#[cfg(test)]
mod tests {
    use rustc_hash::FxHashSet;

    use super::*;

    fn path(i: u32) -> String {
        let mut out = Vec::new();
        write_path(i, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_shape_renders_as_documented() {
        let asset = path(0);
        let hash = asset
            .strip_prefix("/static/app.")
            .and_then(|rest| rest.strip_suffix(".js"))
            .unwrap();
        assert!(
            hash.len() == 8 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
            "{asset}"
        );
        assert!(path(4).starts_with("/static/vendor.") && path(4).ends_with(".js"));
        assert!(path(8).starts_with("/static/main.") && path(8).ends_with(".css"));
        let hex = path(1);
        let id = hex.strip_prefix("/api/orders/").unwrap();
        assert!(
            id.len() == 8 && id.bytes().all(|b| b.is_ascii_hexdigit()),
            "{hex}"
        );
        let b62 = path(2);
        let id = b62.strip_prefix("/v/").unwrap();
        assert!(
            id.len() == 11 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
            "{b62}"
        );
        assert_eq!(path(3), "/blog/autumn-autumn-autumn");
        assert_eq!(path(7), "/blog/ember-autumn-autumn");
        // 32^3 = 32768: the first slug with four words.
        assert_eq!(path(3 + 4 * 32_768), "/blog/autumn-autumn-autumn-ember");
        assert_eq!(Shape::of(5), Shape::HexId);
    }

    #[test]
    fn distinct_indices_give_distinct_paths() {
        let n = 200_000;
        let paths: FxHashSet<String> = (0..n).map(path).collect();
        assert_eq!(paths.len(), n as usize);
        // Far indices too (the bijections cover all of u32).
        let far: FxHashSet<String> = (u32::MAX - 4_000..=u32::MAX).map(path).collect();
        assert_eq!(far.len(), 4_001);
    }

    #[test]
    fn permutation_is_a_bijection_on_a_sample() {
        let images: FxHashSet<u32> = (0..1_000_000u32).map(permute32).collect();
        assert_eq!(images.len(), 1_000_000);
    }

    #[test]
    fn every_pool_path_appears_before_any_repeats() {
        let mut pool = PoolAssigner::new(5, 1);
        let first: Vec<u32> = (0..5).map(|_| pool.next_index()).collect();
        assert_eq!(first, [0, 1, 2, 3, 4]);
        let later: FxHashSet<u32> = (0..1000).map(|_| pool.next_index()).collect();
        assert_eq!(later, (0..5).collect());
    }
}
