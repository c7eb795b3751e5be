//! Which methods and paths a rule or an exemption picks, decided once per
//! distinct name (of a table or a chunk) rather than once per request.

use rayon::prelude::*;
use regex::{Regex, RegexSet};

use crate::events::{Id, Interner};
use crate::simulate::gateway::NameReading;

/// Per method id and per path id, whether a `method` and `route` pick it.
#[derive(Debug, Clone)]
pub struct NameFilter {
    method_ok: Vec<bool>,
    /// `None` when there is no route: every path.
    route_ok: Option<Vec<bool>>,
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
        }
    }

    /// Whether a request with this method and path id is picked.
    pub fn picks(&self, method: Id, path: Id) -> bool {
        self.method_ok[method as usize] && self.route_ok.as_ref().is_none_or(|ok| ok[path as usize])
    }

    /// Whether every method and path of the names is picked.
    pub fn picks_all(&self) -> bool {
        let all = |ok: &[bool]| ok.iter().all(|&ok| ok);
        all(&self.method_ok) && self.route_ok.as_deref().is_none_or(all)
    }
}

/// Whether reading names `names`' way picks the same of these `methods`
/// and `paths` for `wanted` (a method and a route) as the policy's reading.
pub fn picked_alike(
    methods: &Interner,
    paths: &Interner,
    wanted: (Option<&str>, Option<&Regex>),
    names: NameReading,
) -> bool {
    let filter = |reading| NameFilter::new(methods, paths, wanted, reading);
    let (read, policy) = (filter(names), filter(NameReading::default()));
    let route = |f: &NameFilter, p: usize| f.route_ok.as_ref().is_none_or(|ok| ok[p]);
    read.method_ok == policy.method_ok
        && (0..paths.len()).all(|p| route(&read, p) == route(&policy, p))
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
        }
    }

    /// The rules that pick a request with this method and path id.
    pub fn picks(&self, method: Id, path: Id) -> u64 {
        let path = self.path.get(path as usize).copied();
        self.method[method as usize] & path.unwrap_or(self.unnamed_path)
    }
}
