//! Which methods and paths a rule or an exemption picks, decided once per
//! distinct name (of a table or a chunk) rather than once per request, and
//! which requests the product answers itself by their HTTP version.

use rayon::prelude::*;
use regex::{Regex, RegexSet};

use crate::events::{EventTable, Id, Interner, Protocol, ProtocolSet};
use crate::simulate::gateway::NameReading;

/// Per method id and per path id, whether a `method` and `route` pick it.
#[derive(Debug, Clone)]
pub struct NameFilter {
    method_ok: Vec<bool>,
    /// `None` when there is no route: every path.
    route_ok: Option<Vec<bool>>,
    itself: AnsweredItself,
}

impl NameFilter {
    /// The filter of `method` (`None`: every method) and `route` (`None`:
    /// every path) over these `methods` and `paths` names, read as `reading`
    /// says (the policy's: methods in any case, paths as logged).
    pub fn new(
        methods: &Interner,
        paths: &Interner,
        (method, route): (Option<&str>, Option<&Regex>),
        reading: NameReading,
    ) -> Self {
        // A request the product answers itself meets no rule, routed or not.
        let route_ok = (route.is_some() || reading.answers_some_itself()).then(|| {
            (paths.names())
                .map(|p| {
                    reading
                        .path(p)
                        .is_some_and(|p| route.is_none_or(|re| re.is_match(&p)))
                })
                .collect()
        });
        NameFilter {
            method_ok: methods
                .names()
                .map(|m| {
                    reading.reads_method(m)
                        && method.is_none_or(|want| reading.method_picks(want, m))
                })
                .collect(),
            route_ok,
            itself: AnsweredItself::new(methods, paths, reading),
        }
    }

    /// Whether a request with this method and path id, sent with this HTTP
    /// version, is picked.
    pub fn picks(&self, method: Id, path: Id, protocol: Protocol) -> bool {
        self.picks_names(method, path) && !self.itself.answers(method, path, protocol)
    }

    /// Whether the method and the route each pick these ids.
    fn picks_names(&self, method: Id, path: Id) -> bool {
        self.method_ok[method as usize] && self.route_ok.as_ref().is_none_or(|ok| ok[path as usize])
    }

    /// Whether every method and path of the names, sent with any of
    /// `protocols`, is picked.
    pub fn picks_all(&self, protocols: ProtocolSet) -> bool {
        let all = |ok: &[bool]| ok.iter().all(|&ok| ok);
        all(&self.method_ok)
            && self.route_ok.as_deref().is_none_or(all)
            && self.itself.answers_none(protocols)
    }
}

/// What a product answers itself beyond what each name alone tells: a
/// method and path id it answers together though it routes each with
/// others ([`NameReading::answered_together`]), and HTTP versions.
#[derive(Debug, Clone, Copy)]
pub(super) struct AnsweredItself {
    together: Option<(Id, Id)>,
    refused: ProtocolSet,
}

impl AnsweredItself {
    /// What `reading` answers itself among these names.
    pub(super) fn new(methods: &Interner, paths: &Interner, reading: NameReading) -> Self {
        let together = reading
            .answered_together()
            .and_then(|(method, path)| Some((methods.get(method)?, paths.get(path)?)));
        AnsweredItself {
            together,
            refused: reading.refused_protocols(),
        }
    }

    /// Whether it answers a request with this method and path id, sent
    /// with this HTTP version.
    fn answers(self, method: Id, path: Id, protocol: Protocol) -> bool {
        self.together == Some((method, path)) || self.refused.contains(protocol)
    }

    /// Whether it answers none of the requests of the names, sent with any
    /// of `protocols`.
    pub(super) fn answers_none(self, protocols: ProtocolSet) -> bool {
        self.together.is_none() && !self.refused.meets(protocols)
    }
}

/// The names [`picked_alike`] compares: a table's methods, paths and HTTP
/// versions.
pub fn names_of(table: &EventTable) -> (&Interner, &Interner, ProtocolSet) {
    (&table.methods, &table.paths, table.protocols())
}

/// Whether reading names `names`' way picks the same of these `methods`
/// and `paths`, sent with these `protocols`, for `wanted` (a method and a
/// route) as the policy's reading.
pub fn picked_alike(
    (methods, paths, protocols): (&Interner, &Interner, ProtocolSet),
    wanted: (Option<&str>, Option<&Regex>),
    names: NameReading,
) -> bool {
    let filter = |reading| NameFilter::new(methods, paths, wanted, reading);
    let (read, policy) = (filter(names), filter(NameReading::default()));
    let route = |f: &NameFilter, p: usize| f.route_ok.as_ref().is_none_or(|ok| ok[p]);
    read.method_ok == policy.method_ok
        && (0..paths.len()).all(|p| route(&read, p) == route(&policy, p))
        // The reading picks no pair it answers together, nor a version it
        // refuses; the policy picks every version.
        && (read.itself.together).is_none_or(|(m, p)| !policy.picks_names(m, p))
        && !read.itself.refused.meets(protocols)
}

/// For up to 64 rules at once, bit `r` set where rule `r`'s method and route
/// pick a name: what [`NameFilter::picks`] of each rule tells, with the routes
/// matched in one pass over each path (a [`RegexSet`]) and the paths in
/// parallel.
#[derive(Debug, Clone)]
pub struct NameBits {
    /// Per method id.
    pub method: Vec<u64>,
    /// Per path id.
    pub path: Vec<u64>,
    /// The bits of a path id outside the names: the rules without a route.
    pub unnamed_path: u64,
    /// What the product answers itself: no rule's.
    itself: AnsweredItself,
}

impl NameBits {
    /// The bits of `rules` (method, route), at most 64, over these names
    /// read as `reading` says.
    ///
    /// # Panics
    /// With more than 64 rules.
    pub fn new(
        methods: &Interner,
        paths: &Interner,
        rules: &[(Option<&str>, Option<&Regex>)],
        reading: NameReading,
    ) -> Self {
        assert!(rules.len() <= 64, "at most 64 rules at once");
        let method = (methods.names())
            .map(|m| {
                let picks = |(r, (want, _)): (usize, &(Option<&str>, Option<&Regex>))| {
                    let picked = reading.reads_method(m)
                        && want.is_none_or(|want| reading.method_picks(want, m));
                    u64::from(picked) << r
                };
                rules.iter().enumerate().map(picks).fold(0, |a, b| a | b)
            })
            .collect();
        let routed: Vec<(usize, &Regex)> = (rules.iter().enumerate())
            .filter_map(|(r, (_, route))| route.map(|re| (r, re)))
            .collect();
        let unrouted = (rules.iter().enumerate())
            .filter(|(_, (_, route))| route.is_none())
            .fold(0u64, |bits, (r, _)| bits | 1u64 << r);
        let set = RegexSet::new(routed.iter().map(|(_, re)| re.as_str())).ok();
        let names: Vec<&str> = paths.names().collect();
        let path = names
            .par_iter()
            .map(|p| {
                // A path the product answers itself meets no rule.
                let Some(p) = reading.path(p) else {
                    return 0;
                };
                let p = p.as_ref();
                let matched = match &set {
                    Some(set) => {
                        (set.matches(p).iter()).fold(0u64, |bits, i| bits | 1u64 << routed[i].0)
                    }
                    // A set too large to build: each route on its own.
                    None => (routed.iter())
                        .filter(|(_, re)| re.is_match(p))
                        .fold(0u64, |bits, (r, _)| bits | 1u64 << r),
                };
                unrouted | matched
            })
            .collect();
        NameBits {
            method,
            path,
            unnamed_path: unrouted,
            itself: AnsweredItself::new(methods, paths, reading),
        }
    }

    /// The rules that pick a request with this method and path id, sent
    /// with this HTTP version.
    pub fn picks(&self, method: Id, path: Id, protocol: Protocol) -> u64 {
        if self.itself.answers(method, path, protocol) {
            return 0;
        }
        let path_bits = self.path.get(path as usize).copied();
        self.method[method as usize] & path_bits.unwrap_or(self.unnamed_path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::gateway::{Gateway, PathReading};

    fn interned(names: &[&str]) -> Interner {
        let mut interner = Interner::default();
        for name in names {
            interner.intern(name);
        }
        interner
    }

    #[test]
    fn a_method_and_path_answered_together_meet_no_rule() {
        // Go answers `OPTIONS *` itself; Traefik routes `GET *` and
        // `OPTIONS /a` as any other.
        let methods = interned(&["GET", "OPTIONS"]);
        let paths = interned(&["*", "/a"]);
        let traefik = NameReading {
            paths: PathReading::Traefik,
            ..NameReading::default()
        };
        let (get, options, star, a) = (0, 1, 0, 1);
        let (every, all) = ((None, None), ProtocolSet::of(Protocol::ALL));
        let filter = NameFilter::new(&methods, &paths, every, traefik);
        let picks = |m, p| filter.picks(m, p, Protocol::Http11);
        assert!(picks(get, star) && picks(options, a) && picks(get, a));
        assert!(!picks(options, star) && !filter.picks_all(all));
        let bits = NameBits::new(&methods, &paths, &[every, (Some("GET"), None)], traefik);
        let rules = |(m, p)| bits.picks(m, p, Protocol::Http11);
        assert_eq!(
            [(get, star), (options, star), (options, a)].map(rules),
            [0b11, 0, 0b01]
        );
        assert!(!picked_alike((&methods, &paths, all), every, traefik));
        // A rule for GET alone picks the same requests either way.
        assert!(picked_alike(
            (&methods, &paths, all),
            (Some("GET"), None),
            traefik
        ));
        // The policy, and a product that routes `OPTIONS *`, pick it.
        for reading in [
            NameReading::default(),
            NameReading {
                paths: PathReading::OnHaproxy,
                ..NameReading::default()
            },
        ] {
            let filter = NameFilter::new(&methods, &paths, every, reading);
            assert!(filter.picks(options, star, Protocol::Http11));
        }
    }

    #[test]
    fn a_version_the_product_answers_itself_meets_no_rule() {
        // Envoy answers HTTP/1.0, 0.9 and versions it does not know (426)
        // itself, and takes a request whose version was not logged.
        let (methods, paths) = (interned(&["GET"]), interned(&["/a"]));
        let envoy = Gateway::Envoy.name_reading();
        let every = (None, None);
        let filter = NameFilter::new(&methods, &paths, every, envoy);
        let bits = NameBits::new(&methods, &paths, &[every], envoy);
        for protocol in Protocol::ALL {
            let counted = !matches!(
                protocol,
                Protocol::Http09 | Protocol::Http10 | Protocol::Other
            );
            assert_eq!(filter.picks(0, 0, protocol), counted, "{protocol:?}");
            assert_eq!(
                bits.picks(0, 0, protocol),
                u64::from(counted),
                "{protocol:?}"
            );
            let policy = NameFilter::new(&methods, &paths, every, NameReading::default());
            assert!(policy.picks(0, 0, protocol));
        }
        let seen = |versions: &[Protocol]| ProtocolSet::of(versions.iter().copied());
        assert!(filter.picks_all(seen(&[Protocol::Http11, Protocol::Unknown])));
        assert!(!filter.picks_all(seen(&[Protocol::Http11, Protocol::Http10])));
        // Alike where no request has such a version.
        let alike = |versions| picked_alike((&methods, &paths, seen(versions)), every, envoy);
        assert!(alike(&[Protocol::Http11, Protocol::Http2]));
        assert!(!alike(&[Protocol::Http11, Protocol::Http09]));
        // HAProxy and Go under Traefik answer only a line with no version.
        for gateway in [Gateway::Haproxy, Gateway::HaproxyReqRate, Gateway::Traefik] {
            let filter = NameFilter::new(&methods, &paths, every, gateway.name_reading());
            for protocol in Protocol::ALL {
                let counted = protocol != Protocol::Http09;
                assert_eq!(
                    filter.picks(0, 0, protocol),
                    counted,
                    "{gateway:?} {protocol:?}"
                );
            }
        }
    }
}
