//! Which methods and paths a rule or an exemption picks, decided once per
//! distinct name (of a table or a chunk) rather than once per request.

use regex::Regex;

use crate::events::{Id, Interner};

/// Per method id and per path id, whether a `method` and `route` pick it.
#[derive(Debug, Clone)]
pub struct NameFilter {
    method_ok: Vec<bool>,
    /// `None` when there is no route: every path.
    route_ok: Option<Vec<bool>>,
}

impl NameFilter {
    /// The filter of `method` (any case; `None`: every method) and `route`
    /// (`None`: every path) over these `methods` and `paths` names.
    pub fn new(
        methods: &Interner,
        paths: &Interner,
        method: Option<&str>,
        route: Option<&Regex>,
    ) -> Self {
        NameFilter {
            method_ok: methods
                .names()
                .map(|m| method.is_none_or(|want| want.eq_ignore_ascii_case(m)))
                .collect(),
            route_ok: route.map(|re| paths.names().map(|p| re.is_match(p)).collect()),
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
