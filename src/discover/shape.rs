//! How a collapsed path segment reads in a template. Cardinality decides that
//! a position is a parameter ([`super::trie`]); this module only names it.
//!
//! - A segment with a hash-like token and other text keeps the other text:
//!   `app.206277e0.js` → `app.:hash.js`. Tokens are the maximal runs of ASCII
//!   letters and digits; a token is hash-like when it has at least 6
//!   characters and both a digit and a letter, or at least 8 characters that
//!   are all hex digits. A percent escape (`%20`) is never part of a token:
//!   it separates two, whatever character it encodes.
//! - Any other segment is one whole parameter, named after the majority shape
//!   of the values it collapsed: `:id` (has a digit), `:slug` (letters joined
//!   by `-`), else `:name`; ties go to `:id`, then `:slug`. The hex digits of
//!   a percent escape count as neither digits nor letters.

/// The key of the parameter a collapsed segment goes to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ParamKey {
    /// A segment with literal text around hash-like tokens (`app.:hash.js`).
    Skeleton(String),
    /// The whole segment.
    Whole,
}

/// The shape of one whole-segment value, for naming the parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueShape {
    Id,
    Slug,
    Name,
}

/// Where `segment` goes once its position is a parameter.
///
/// Most segments are one whole parameter: each token is classed in one pass
/// over its bytes, and the skeleton is written only for a segment that has one.
pub fn param_key(segment: &str) -> ParamKey {
    let bytes = segment.as_bytes();
    let (mut hashed, mut literal) = (false, false);
    let mut i = 0;
    while i < bytes.len() {
        if is_escape_at(bytes, i) {
            literal = true;
            i += ESCAPE_LEN;
            if hashed {
                return ParamKey::Skeleton(skeleton(segment));
            }
            continue;
        }
        let start = i;
        // Classes seen in the token, and those every byte of it has (a token
        // ends at `%`, which has no class).
        let (mut any, mut all) = (0, HEX);
        while let Some(&b) = bytes.get(i) {
            let class = CLASS[b as usize];
            if class == 0 {
                break;
            }
            any |= class;
            all &= class;
            i += 1;
        }
        if i == start {
            literal = true;
            i += 1;
        } else if token_is_hash_like(i - start, any, all) {
            hashed = true;
        } else {
            literal = true;
        }
        if hashed && literal {
            return ParamKey::Skeleton(skeleton(segment));
        }
    }
    ParamKey::Whole
}

/// Byte classes of ASCII letters and digits (0: any other byte).
const DIGIT: u8 = 1;
const LETTER: u8 = 2;
const HEX: u8 = 4;
const CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        class[b] = if c.is_ascii_digit() {
            DIGIT | HEX
        } else if c.is_ascii_hexdigit() {
            LETTER | HEX
        } else if c.is_ascii_alphabetic() {
            LETTER
        } else {
            0
        };
        b += 1;
    }
    class
};

/// [`is_hash_like`] of a token of `len` bytes, given the classes any of its
/// bytes has and those all of them have.
fn token_is_hash_like(len: usize, any: u8, all: u8) -> bool {
    (len >= 6 && any & DIGIT != 0 && any & LETTER != 0) || (len >= 8 && all & HEX != 0)
}

/// The segment with each hash-like token written `:hash`.
fn skeleton(segment: &str) -> String {
    let mut skeleton = String::with_capacity(segment.len());
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        if is_escape_at(bytes, i) {
            i += ESCAPE_LEN;
            skeleton.push_str(&segment[start..i]);
            continue;
        }
        // A token, or a run of other bytes up to the next token or escape
        // (both start at an ASCII byte: the slices fall on char boundaries).
        let alphanumeric = bytes[i].is_ascii_alphanumeric();
        i += 1;
        while i < bytes.len()
            && bytes[i].is_ascii_alphanumeric() == alphanumeric
            && !is_escape_at(bytes, i)
        {
            i += 1;
        }
        let run = &segment[start..i];
        if alphanumeric && is_hash_like(run) {
            skeleton.push_str(":hash");
        } else {
            skeleton.push_str(run);
        }
    }
    skeleton
}

/// Bytes of a percent escape: `%` and two hex digits.
const ESCAPE_LEN: usize = 3;

/// Whether a percent escape (`%` and two hex digits) starts at `bytes[i]`.
fn is_escape_at(bytes: &[u8], i: usize) -> bool {
    bytes[i] == b'%'
        && bytes
            .get(i + 1..i + ESCAPE_LEN)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
}

/// The bytes of `segment` outside its percent escapes.
fn outside_escapes(segment: &str) -> impl Iterator<Item = u8> + '_ {
    let bytes = segment.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && is_escape_at(bytes, i) {
            i += ESCAPE_LEN;
        }
        let b = bytes.get(i).copied();
        i += 1;
        b
    })
}

/// Whether a token of letters and digits looks like a hash.
pub fn is_hash_like(token: &str) -> bool {
    let b = token.as_bytes();
    let digit = b.iter().any(u8::is_ascii_digit);
    let letter = b.iter().any(u8::is_ascii_alphabetic);
    (b.len() >= 6 && digit && letter) || (b.len() >= 8 && b.iter().all(u8::is_ascii_hexdigit))
}

/// The shape of a whole-segment value.
pub fn value_shape(segment: &str) -> ValueShape {
    if outside_escapes(segment).any(|b| b.is_ascii_digit()) {
        ValueShape::Id
    } else if segment.contains('-') && outside_escapes(segment).any(|b| b.is_ascii_alphabetic()) {
        ValueShape::Slug
    } else {
        ValueShape::Name
    }
}

/// The placeholder of a whole parameter whose values had these shape counts.
pub fn whole_name(ids: u64, slugs: u64, names: u64) -> &'static str {
    if ids >= slugs && ids >= names {
        ":id"
    } else if slugs >= names {
        ":slug"
    } else {
        ":name"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key as first written (the skeleton built for every segment, then
    /// kept or dropped): the definition [`param_key`] must agree with.
    fn param_key_reference(segment: &str) -> ParamKey {
        let mut skeleton = String::with_capacity(segment.len());
        let (mut hashed, mut literal) = (false, false);
        let bytes = segment.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if is_escape_at(bytes, i) {
                skeleton.push_str(&segment[i..i + 3]);
                literal = true;
                i += 3;
            } else if bytes[i].is_ascii_alphanumeric() {
                let start = i;
                while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                    i += 1;
                }
                let token = &segment[start..i];
                if is_hash_like(token) {
                    skeleton.push_str(":hash");
                    hashed = true;
                } else {
                    skeleton.push_str(token);
                    literal = true;
                }
            } else {
                let start = i;
                i += 1;
                while i < bytes.len()
                    && !bytes[i].is_ascii_alphanumeric()
                    && !is_escape_at(bytes, i)
                {
                    i += 1;
                }
                skeleton.push_str(&segment[start..i]);
                literal = true;
            }
        }
        if hashed && literal {
            ParamKey::Skeleton(skeleton)
        } else {
            ParamKey::Whole
        }
    }

    proptest::proptest! {
        /// Segments of hex runs, words, digits and separators (ASCII and not).
        #[test]
        fn param_key_agrees_with_the_reference(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    "[0-9a-f]{1,12}",
                    "[a-zA-Z0-9]{1,10}",
                    "[a-z]{1,8}",
                    "[-._~é:]{1,3}",
                    "%[0-9a-fA-Fg]{0,2}",
                ],
                0..6,
            ),
        ) {
            let segment = parts.concat();
            proptest::prop_assert_eq!(param_key(&segment), param_key_reference(&segment));
        }
    }

    #[test]
    fn skeletons_keep_the_text_around_hashes() {
        let skeleton = |s: &str| match param_key(s) {
            ParamKey::Skeleton(k) => k,
            ParamKey::Whole => "(whole)".into(),
        };
        assert_eq!(skeleton("app.206277e0.js"), "app.:hash.js");
        assert_eq!(skeleton("index-4f9c2a1e.js"), "index-:hash.js");
        assert_eq!(
            skeleton("chunk-vendors.deadbeef.js.map"),
            "chunk-vendors.:hash.js.map"
        );
        assert_eq!(skeleton("4f9c2a1e"), "(whole)");
        assert_eq!(skeleton("dQw4w9WgXcQ"), "(whole)");
        assert_eq!(skeleton("jquery-3.6.0.min.js"), "(whole)");
        assert_eq!(skeleton("how-to-cook-pasta"), "(whole)");
        // A percent escape separates tokens: `20scraping` is no token here.
        assert_eq!(skeleton("web%20scraping"), "(whole)");
        assert_eq!(skeleton("a%2Fb%2F4f9c2a1e.js"), "a%2Fb%2F:hash.js");
        assert_eq!(skeleton("%E2%9C%93-4f9c2a1e"), "%E2%9C%93-:hash");
        assert_eq!(skeleton("4f9c2a1e%"), ":hash%");
    }

    #[test]
    fn whole_parameters_are_named_by_their_values() {
        assert_eq!(value_shape("4f9c2a1e"), ValueShape::Id);
        assert_eq!(value_shape("how-to-cook"), ValueShape::Slug);
        assert_eq!(value_shape("alice"), ValueShape::Name);
        assert_eq!(value_shape("web%20scraping"), ValueShape::Name);
        assert_eq!(value_shape("caf%C3%A9-au-lait"), ValueShape::Slug);
        assert_eq!(value_shape("%20"), ValueShape::Name);
        assert_eq!(value_shape("page%202"), ValueShape::Id);
        assert_eq!(whole_name(3, 3, 3), ":id");
        assert_eq!(whole_name(1, 5, 2), ":slug");
        assert_eq!(whole_name(1, 2, 5), ":name");
    }
}
