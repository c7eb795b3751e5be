use super::*;

/// What [`canonical_address`] did before its fast check: parse, write, compare.
fn canonical_by_std(text: &str) -> bool {
    match text.parse::<std::net::Ipv6Addr>() {
        Ok(v6) => v6.to_ipv4_mapped().is_none() && v6.to_string() == text,
        Err(_) => false,
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

    /// The one-pass check accepts exactly the canonical texts: every address
    /// as the standard library writes it, and none of the other spellings
    /// of it (zeros spelled out, leading zeros, upper case, `::` elsewhere).
    #[test]
    fn the_fast_check_is_the_standard_one(
        groups in proptest::collection::vec(
            proptest::prop_oneof![3 => proptest::strategy::Just(0u16), 1 => proptest::strategy::Just(0xffff_u16), 4 => proptest::prelude::any::<u16>()],
            8,
        ),
        spelling in 0usize..5,
        cut in 0usize..8,
        len in 0usize..8,
    ) {
        let v6 = std::net::Ipv6Addr::from(<[u16; 8]>::try_from(groups.as_slice()).unwrap());
        let text = match spelling {
            0 => v6.to_string(),
            1 => groups.iter().map(|g| format!("{g:x}")).collect::<Vec<_>>().join(":"),
            2 => groups.iter().map(|g| format!("{g:04x}")).collect::<Vec<_>>().join(":"),
            3 => v6.to_string().to_uppercase(),
            // `::` for groups cut..cut+len, whether they are zeros or not.
            _ => {
                let end = (cut + len).min(8);
                let part = |s: &[u16]| s.iter().map(|g| format!("{g:x}")).collect::<Vec<_>>().join(":");
                format!("{}::{}", part(&groups[..cut]), part(&groups[end..]))
            }
        };
        proptest::prop_assert_eq!(written_canonically(text.as_bytes()), canonical_by_std(&text), "{}", text);
    }

    /// Any text the fast check accepts is one the standard library writes so,
    /// on texts made of the pieces addresses are made of (so that many parse).
    #[test]
    fn the_fast_check_accepts_no_junk(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec![
                "0", "1", "a", "ffff", "FFFF", "db8", "2001", "0db8", "10000",
                ":", ":", "::", ".", "192.0.2.7", "%eth0", "-",
            ]),
            0..9,
        ),
    ) {
        let text = pieces.concat();
        proptest::prop_assert_eq!(written_canonically(text.as_bytes()), canonical_by_std(&text), "{}", text);
    }
}
