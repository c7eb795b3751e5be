//! A rule's route as the product matches it ([`RouteMatcher`]), and the
//! routes of several rules at once ([`RouteSet`]): as Unicode text, or, for
//! nginx and HAProxy, on the path's bytes as PCRE without UTF mode does.

use regex::{Regex, RegexSet};

use crate::simulate::gateway::NameReading;

/// A route as the product matches it: as Unicode text, or (nginx, HAProxy)
/// on the path's bytes as PCRE without UTF mode does
/// ([`crate::text::pcre_bytes::bytes_matcher`]; a route that cannot be
/// written for them, which `export` refuses, is matched as text).
#[derive(Debug, Clone)]
pub(super) enum RouteMatcher {
    Text(Regex),
    Bytes(regex::bytes::Regex),
}

impl RouteMatcher {
    pub(super) fn new(route: &Regex, reading: NameReading) -> Self {
        match reading.routes_on_bytes() {
            true => crate::text::pcre_bytes::bytes_matcher(route.as_str())
                .map_or_else(|_| RouteMatcher::Text(route.clone()), RouteMatcher::Bytes),
            false => RouteMatcher::Text(route.clone()),
        }
    }

    pub(super) fn is_match(&self, path: &str) -> bool {
        match self {
            RouteMatcher::Text(re) => re.is_match(path),
            RouteMatcher::Bytes(re) => re.is_match(path.as_bytes()),
        }
    }

    /// The pattern matched (for nginx and HAProxy, as written for them).
    fn pattern(&self) -> &str {
        match self {
            RouteMatcher::Text(re) => re.as_str(),
            RouteMatcher::Bytes(re) => re.as_str(),
        }
    }
}

/// The routes of several rules, matched at once where a set can be built
/// (else each on its own).
pub(super) enum RouteSet {
    Text(RegexSet),
    Bytes(regex::bytes::RegexSet),
    Each(Vec<RouteMatcher>),
}

impl RouteSet {
    pub(super) fn new(routed: &[(usize, &Regex)], reading: NameReading) -> Self {
        let each: Vec<RouteMatcher> = (routed.iter())
            .map(|(_, re)| RouteMatcher::new(re, reading))
            .collect();
        let patterns = || each.iter().map(RouteMatcher::pattern);
        let on_bytes = |m: &RouteMatcher| matches!(m, RouteMatcher::Bytes(_));
        let set = if each.iter().all(on_bytes) {
            (regex::bytes::RegexSetBuilder::new(patterns()).unicode(false))
                .build()
                .ok()
                .map(RouteSet::Bytes)
        } else if !each.iter().any(on_bytes) {
            RegexSet::new(patterns()).ok().map(RouteSet::Text)
        } else {
            None
        };
        set.unwrap_or(RouteSet::Each(each))
    }

    /// The `bit` of each route (by its index among those given) that
    /// matches `path`, ORed.
    pub(super) fn bits(&self, path: &str, bit: impl Fn(usize) -> u64) -> u64 {
        let of =
            |matched: &mut dyn Iterator<Item = usize>| matched.fold(0, |bits, i| bits | bit(i));
        match self {
            RouteSet::Text(set) => of(&mut set.matches(path).into_iter()),
            RouteSet::Bytes(set) => of(&mut set.matches(path.as_bytes()).into_iter()),
            RouteSet::Each(each) => of(&mut (each.iter().enumerate())
                .filter(|(_, m)| m.is_match(path))
                .map(|(i, _)| i)),
        }
    }
}
