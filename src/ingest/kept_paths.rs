//! Which events keep their path ([`KeptPaths`]): what policy routes match,
//! and what a gateway replay reads a path otherwise than as logged by.

/// Which events keep their path, what policy routes match (the others have
/// path id 0, and no path is interned for them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeptPaths {
    /// None: for commands that never route on paths.
    None,
    /// Those of requests a `--route` rule named (`rlctl analyze`: a rule's
    /// wider scope reads them, see `analysis::rule_scope`).
    Routed,
    /// Every event's.
    All,
    /// Those a product might read otherwise than as logged
    /// ([`KeptPaths::may_read_otherwise`]): what finds the requests a
    /// gateway answers itself (nginx: a path it cannot read as `$uri`) when
    /// no route reads paths. The others have path id 0, `/`, which every
    /// product reads as it is.
    Unusual,
}

/// The bytes that make a path unusual by themselves
/// ([`KeptPaths::may_read_otherwise`]): an escape's `%`, `#`, a space, a
/// control byte, a byte from 0x7f up, and ``"<>\^`{|}``.
const UNUSUAL_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b <= b' ' as usize
            || b >= 0x7f
            || matches!(
                b as u8,
                b'%' | b'#' | b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            );
        b += 1;
    }
    table
};

impl KeptPaths {
    /// Whether this keeps the path `path` (up to its query, or with a query
    /// a product refuses: [`Self::keeps_queries`]) of a request that a route
    /// rule named or not (`routed`).
    pub fn keeps(self, path: &[u8], routed: impl FnOnce() -> bool) -> bool {
        match self {
            KeptPaths::None => false,
            KeptPaths::All => true,
            KeptPaths::Routed => routed(),
            KeptPaths::Unusual => Self::may_read_otherwise(path),
        }
    }

    /// Whether the paths kept are a replay's, which keeps a query that a
    /// product would refuse with its path (`endpoint::replayed_path`): every
    /// path, or the unusual ones. A rule's wider scope (`Routed`) reads
    /// paths as the policy does, without their queries.
    pub fn keeps_queries(self) -> bool {
        matches!(self, KeptPaths::All | KeptPaths::Unusual)
    }

    /// Whether a product might read `path` otherwise than as logged: it
    /// holds an escape, a `#`, `//`, a dot segment, a space, a control byte,
    /// a byte from 0x7f up or one of ``"<>\^`{|}`` (Go escapes the path anew
    /// then, which turns `!()*[]` into escapes Traefik's routing path keeps),
    /// or it does not start with `/` (the empty path included). Every other
    /// path is the same as nginx's `$uri` and Traefik's routing path, and one
    /// HAProxy and Envoy take (see `crate::simulate::gateway::request_names`).
    ///
    /// One pass over the path, a table lookup per byte: it runs on every
    /// line of a gateway replay.
    pub fn may_read_otherwise(path: &[u8]) -> bool {
        path.first() != Some(&b'/')
            || path.iter().enumerate().any(|(i, &b)| {
                UNUSUAL_BYTES[b as usize]
                    || (b == b'/' && matches!(path.get(i + 1), Some(b'/' | b'.')))
            })
    }

    /// The paths a replay reads: every one when a rule or exemption has a
    /// route (`routed`), else the unusual ones when a gateway answers some
    /// requests itself by their path (`answered`), else none.
    pub fn for_replay(routed: bool, answered: bool) -> Self {
        match (routed, answered) {
            (true, _) => KeptPaths::All,
            (false, true) => KeptPaths::Unusual,
            (false, false) => KeptPaths::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::KeptPaths;
    /// Whether a product might read `path` otherwise than as logged, as
    /// [`KeptPaths::may_read_otherwise`] was first written: the definition.
    fn unusual_by_definition(path: &[u8]) -> bool {
        path.first() != Some(&b'/')
            || memchr::memchr2(b'%', b'#', path).is_some()
            || path.windows(2).any(|w| w == b"//" || w == b"/.")
            || path
                .iter()
                .any(|&b| b <= b' ' || b >= 0x7f || b"\"<>\\^`{|}".contains(&b))
    }

    #[test]
    fn every_byte_alone_is_unusual_as_the_definition_says() {
        for b in 0..=255u8 {
            for path in [vec![b'/', b'a', b, b'b'], vec![b'/', b], vec![b]] {
                let unusual = KeptPaths::may_read_otherwise(&path);
                assert_eq!(unusual, unusual_by_definition(&path), "{path:?}");
            }
        }
    }

    proptest! {
        /// One pass with a table finds the unusual paths the definition names,
        /// among paths of usual bytes with one byte of any value put in.
        #[test]
        fn unusual_paths_are_those_the_definition_names(
            usual in "/?[a/.!()*?\\[\\]]{0,12}",
            byte in any::<u8>(),
            at in any::<prop::sample::Index>(),
        ) {
            let mut path = usual.into_bytes();
            path.insert(at.index(path.len() + 1), byte);
            prop_assert_eq!(
                KeptPaths::may_read_otherwise(&path),
                unusual_by_definition(&path)
            );
        }
    }
}
