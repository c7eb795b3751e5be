//! How a collapsed path segment reads in a template. Cardinality decides that
//! a position is a parameter ([`super::trie`]); this module only names it.
//!
//! - A segment with a hash-like token and other text keeps the other text:
//!   `app.206277e0.js` → `app.:hash.js`. Tokens are the maximal runs of ASCII
//!   letters and digits; a token is hash-like when it has at least 6
//!   characters and both a digit and a letter, or at least 8 characters that
//!   are all hex digits.
//! - Any other segment is one whole parameter, named after the majority shape
//!   of the values it collapsed: `:id` (has a digit), `:slug` (letters joined
//!   by `-`), else `:name`; ties go to `:id`, then `:slug`.

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
pub fn param_key(segment: &str) -> ParamKey {
    let mut skeleton = String::with_capacity(segment.len());
    let (mut hashed, mut literal) = (false, false);
    let bytes = segment.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_alphanumeric() {
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
            while i < bytes.len() && !bytes[i].is_ascii_alphanumeric() {
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

/// Whether a token of letters and digits looks like a hash.
pub fn is_hash_like(token: &str) -> bool {
    let b = token.as_bytes();
    let digit = b.iter().any(u8::is_ascii_digit);
    let letter = b.iter().any(u8::is_ascii_alphabetic);
    (b.len() >= 6 && digit && letter) || (b.len() >= 8 && b.iter().all(u8::is_ascii_hexdigit))
}

/// The shape of a whole-segment value.
pub fn value_shape(segment: &str) -> ValueShape {
    if segment.bytes().any(|b| b.is_ascii_digit()) {
        ValueShape::Id
    } else if segment.contains('-') && segment.bytes().any(|b| b.is_ascii_alphabetic()) {
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
    }

    #[test]
    fn whole_parameters_are_named_by_their_values() {
        assert_eq!(value_shape("4f9c2a1e"), ValueShape::Id);
        assert_eq!(value_shape("how-to-cook"), ValueShape::Slug);
        assert_eq!(value_shape("alice"), ValueShape::Name);
        assert_eq!(whole_name(3, 3, 3), ":id");
        assert_eq!(whole_name(1, 5, 2), ":slug");
        assert_eq!(whole_name(1, 2, 5), ":name");
    }
}
