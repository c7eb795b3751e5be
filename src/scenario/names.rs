//! Which methods and paths a rule or an exemption picks, decided once per
//! distinct name (of a table or a chunk) rather than once per request, and
//! which requests the product answers itself by their HTTP version.

use rayon::prelude::*;
use regex::Regex;

use super::route_match::{RouteMatcher, RouteSet};

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
        let route = route.map(|re| RouteMatcher::new(re, reading));
        let route_ok = (route.is_some() || reading.answers_some_itself()).then(|| {
            (paths.names())
                .map(|p| {
                    reading
                        .path(p)
                        .is_some_and(|p| route.as_ref().is_none_or(|re| re.is_match(&p)))
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
    pub fn picks_names(&self, method: Id, path: Id) -> bool {
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
/// others ([`NameReading::answered_together`]), and HTTP versions (some
/// unless the method is `GET`).
#[derive(Debug, Clone, Copy)]
pub(super) struct AnsweredItself {
    together: Option<(Id, Id)>,
    refused: ProtocolSet,
    refused_unless_get: ProtocolSet,
    /// The id of `GET` among the methods.
    get: Option<Id>,
}

impl AnsweredItself {
    /// What `reading` answers itself among these names.
    pub(super) fn new(methods: &Interner, paths: &Interner, reading: NameReading) -> Self {
        let together = reading
            .answered_together()
            .and_then(|(method, path)| Some((methods.get(method)?, paths.get(path)?)));
        let (refused, refused_unless_get) = reading.refused_protocols();
        AnsweredItself {
            together,
            refused,
            refused_unless_get,
            get: methods.get("GET"),
        }
    }

    /// Whether it answers a request with this method and path id, sent
    /// with this HTTP version.
    fn answers(self, method: Id, path: Id, protocol: Protocol) -> bool {
        self.together == Some((method, path))
            || self.refused.contains(protocol)
            || (self.refused_unless_get.contains(protocol) && self.get != Some(method))
    }

    /// Whether it may answer some of the requests of the names sent with
    /// any of `protocols` (a version refused unless the method is `GET`
    /// counts, whatever the methods).
    fn may_answer(self, protocols: ProtocolSet) -> bool {
        self.refused.meets(protocols) || self.refused_unless_get.meets(protocols)
    }

    /// Whether it answers none of the requests of the names, sent with any
    /// of `protocols`.
    pub(super) fn answers_none(self, protocols: ProtocolSet) -> bool {
        self.together.is_none() && !self.may_answer(protocols)
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
        // may refuse; the policy picks every version.
        && (read.itself.together).is_none_or(|(m, p)| !policy.picks_names(m, p))
        && !read.itself.may_answer(protocols)
}

/// For up to 64 rules at once, bit `r` set where rule `r`'s method and route
/// pick a name: what [`NameFilter::picks`] of each rule tells, with the routes
/// matched in one pass over each path (a [`RouteSet`]) and the paths in
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
        let set = RouteSet::new(&routed, reading);
        let names: Vec<&str> = paths.names().collect();
        let path = names
            .par_iter()
            .map(|p| {
                // A path the product answers itself meets no rule.
                let Some(p) = reading.path(p) else {
                    return 0;
                };
                let p = p.as_ref();
                let matched = set.bits(p, |i| 1u64 << routed[i].0);
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
            let counted = matches!(
                protocol,
                Protocol::Unknown | Protocol::Http11 | Protocol::Http2 | Protocol::Http3
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
    }

    #[test]
    fn each_product_refuses_the_versions_its_parser_refuses() {
        use Protocol::*;
        // Per product, what it counts of a versionless line, `HTTP/1.2`,
        // `HTTP/1.10`, `HTTP/4.0` and `HTTP/1`, checked against the real
        // nginx and HAProxy, and Go's source for Traefik.
        let versions = [Http09, Http1Minor, Http1LongMinor, OtherMajor, Malformed];
        let (methods, paths) = (interned(&["GET", "POST"]), interned(&["/a"]));
        let (get, post) = (0, 1);
        let every = (None, None);
        let nginx = (
            [true, true, true, false, false],
            [false, true, true, false, false],
        );
        let haproxy = (
            [false, true, false, true, false],
            [false, true, false, true, false],
        );
        let go = (
            [false, true, false, false, false],
            [false, true, false, false, false],
        );
        let envoy = ([false; 5], [false; 5]);
        for (gateway, (counted_get, counted_post)) in [
            (Gateway::Nginx, nginx),
            (Gateway::Kong, nginx),
            (Gateway::KongRedis, nginx),
            (Gateway::Haproxy, haproxy),
            (Gateway::HaproxyReqRate, haproxy),
            (Gateway::Traefik, go),
            (Gateway::Envoy, envoy),
            (Gateway::EnvoyTimer, envoy),
            (Gateway::EnvoyRatelimit, envoy),
        ] {
            let reading = gateway.name_reading();
            let filter = NameFilter::new(&methods, &paths, every, reading);
            let bits = NameBits::new(&methods, &paths, &[every], reading);
            // HTTP/1.0, 1.1, 2 and 3, and a version not logged, reach every
            // product's rules but Envoy's.
            let common = ProtocolSet::of([Unknown, Http10, Http11, Http2, Http3]);
            let is_envoy = matches!(
                gateway,
                Gateway::Envoy | Gateway::EnvoyTimer | Gateway::EnvoyRatelimit
            );
            assert_eq!(filter.picks_all(common), !is_envoy, "{gateway:?}");
            for (i, &version) in versions.iter().enumerate() {
                for (method, counted) in [(get, counted_get[i]), (post, counted_post[i])] {
                    let what = format!("{gateway:?} {method} {version:?}");
                    assert_eq!(filter.picks(method, 0, version), counted, "{what}");
                    assert_eq!(bits.picks(method, 0, version), u64::from(counted), "{what}");
                }
                // Where a version is refused, for one method or both, a product's
                // rule does not pick what the policy's does.
                let both = counted_get[i] && counted_post[i];
                let seen = ProtocolSet::of([Http11, version]);
                assert_eq!(filter.picks_all(seen), both, "{gateway:?}");
                let alike = picked_alike((&methods, &paths, seen), every, reading);
                assert_eq!(alike, both, "{gateway:?} {version:?}");
            }
        }
    }
}
