//! The endpoint of a raw request in SQL: the rules of
//! [`crate::ingest::endpoint`] translated into one dialect's regular
//! expressions, so that a table in the user's lake gets the endpoints `rlctl
//! analyze` would give the same requests.
//!
//! - a method that is not 1 to 20 of `A-Z`, `-`, `_` with a letter among them
//!   gives `(invalid request)` (`-` is how Envoy and ALB log a missing one),
//!   and so does a method with no path (`"GET"`, `"GET ?q=1"`);
//! - the path is the target without `http(s)://host` and without its query
//!   string or fragment (`http://host` alone is `/`);
//! - `--route REGEX=NAME` rules are tried on that path in order (the regex is
//!   handed to the engine as it is: Java syntax for Spark and Trino, RE2 for
//!   the others); a rule written `@HOST REGEX=NAME` also needs the `host`
//!   column (`--host COL`, trimmed, without its port, lower case) to be HOST;
//! - else `METHOD /path` with id-like segments as `:id`: all digits; a UUID; 16
//!   or more hex digits with a digit; 20 or more of `A-Za-z0-9-_=~` with a
//!   digit, a lower-case and an upper-case letter;
//! - with `--routes FILE`, that endpoint's normalised path mapped onto the
//!   file's templates ([`super::templates`]); the normalised path is then a
//!   column of its own (`norm_path`), read by every template's test.
//!
//! Patterns end in `\z` (end of text) rather than `$`, which Java also lets match
//! before a final line break.

use super::dialect::SqlDialect;
use super::templates;
use crate::discover::Template;
use crate::ingest::endpoint::INVALID_REQUEST;

/// A `--route` rule as text: the regex, the endpoint name, and the virtual
/// host it is limited to (lower case, no port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    pub pattern: String,
    pub name: String,
    pub host: Option<String>,
}

/// The column holding the virtual host (lower case, without a port).
pub const HOST: &str = "host";

/// The virtual host of `expr` as `ingest::key::without_port` reads it, lower
/// case: `[v6]:port` and `[v6]` → `v6`; `name:port` (one colon, digits
/// after it) → `name`; anything else as it is; all trimmed.
pub fn host_without_port(d: &dyn SqlDialect, expr: &str) -> String {
    let h = format!("TRIM({expr})");
    format!(
        "LOWER(CASE WHEN {bracketed} THEN {inner} WHEN {with_port} THEN {name} ELSE {h} END)",
        bracketed = d.matches(&h, r"^\[[^\]]*\]"),
        inner = d.group1(&h, r"^\[([^\]]*)\]"),
        with_port = d.matches(&h, r"^[^:]+:[0-9]+\z"),
        name = d.group1(&h, "^([^:]+):"),
    )
}

/// The target without its query string or fragment: what policy routes match
/// (`path` of `rlctl convert`).
pub fn path_without_query(d: &dyn SqlDialect, target: &str) -> String {
    d.group1(target, "^([^?#]*)")
}

/// The path the endpoint rules see: no origin, no query string, no fragment.
/// An origin is any scheme, in any case, then `://` and the host, as
/// `ingest::endpoint` reads one (found by review: `HTTP://h/x` kept its
/// origin in the queries).
pub fn route_path(d: &dyn SqlDialect, target: &str) -> String {
    // The authority ends at `/`, `?` or `#`, as `strip_origin` reads it.
    const ORIGIN: &str = "[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*";
    format!(
        "CASE WHEN {} THEN '/' ELSE {} END",
        d.matches(target, &format!("^{ORIGIN}\\z")),
        d.group1(target, &format!("^(?:{ORIGIN})?([^?#]*)"))
    )
}

/// The segment `s`, or `:id` when it is id-like (the rules of
/// `ingest::endpoint::is_id`). The cheap tests come first, in a CASE, which
/// engines evaluate in order: most segments have no digit and fail at once.
fn segment(d: &dyn SqlDialect, s: &str) -> String {
    const HEX: &str = "[0-9a-fA-F]";
    let uuid = format!("^{HEX}{{8}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{12}}\\z");
    let m = |p: &str| d.matches(s, p);
    let len = d.length(s);
    format!(
        "CASE WHEN {len} = 36 AND {uuid} THEN ':id' \
WHEN NOT {digit} THEN {s} \
WHEN {digits} THEN ':id' \
WHEN {len} >= 16 AND {hex} THEN ':id' \
WHEN {len} >= 20 AND {b64} AND {lower} AND {upper} THEN ':id' \
ELSE {s} END",
        uuid = m(&uuid),
        digit = m("[0-9]"),
        digits = m(r"^[0-9]+\z"),
        hex = m(r"^[0-9a-fA-F]+\z"),
        b64 = m(r"^[A-Za-z0-9_=~-]+\z"),
        lower = m("[a-z]"),
        upper = m("[A-Z]"),
    )
}

/// `path` with its id-like segments replaced by `:id` (`/` for an empty path).
pub fn normalised_path(d: &dyn SqlDialect, path: &str) -> String {
    let var = "seg";
    format!(
        "CASE WHEN {path} = '' THEN '/' ELSE {} END",
        d.map_segments(path, var, &segment(d, var))
    )
}

/// How the endpoint is named: the `--route` rules and the `--routes` templates.
#[derive(Debug, Clone, Copy)]
pub struct Naming<'a> {
    pub routes: &'a [Route],
    /// In precedence order; when there are any, the normalised path is the
    /// column `norm_path` (see [`normalised_path`]).
    pub templates: &'a [Template],
}

/// The column holding the normalised path when templates are applied.
pub const NORM_PATH: &str = "norm_path";

/// The endpoint of a request with `method` (None: endpoints are paths alone)
/// and `path` (as [`route_path`] gives it); `raw_path` is the target
/// without its query ([`path_without_query`]), empty when the request line
/// has a method and no path (`"GET"`), which is `(invalid request)`.
///
/// The method check and the routes are the WHEN arms of a CASE whose ELSE is
/// the automatic endpoint. With neither a method nor a route there is no arm,
/// and the automatic endpoint stands alone: SQL has no `CASE ELSE ... END`.
pub fn endpoint(
    d: &dyn SqlDialect,
    method: Option<&str>,
    raw_path: &str,
    path: &str,
    naming: Naming<'_>,
) -> String {
    let Naming { routes, templates } = naming;
    let mut arms = String::new();
    if let Some(m) = method {
        arms.push_str(&format!(
            "\n      WHEN NOT ({} AND {}) OR {raw_path} = '' THEN {}",
            d.matches(m, r"^[A-Z_-]{1,20}\z"),
            d.matches(m, "[A-Z]"),
            d.string(INVALID_REQUEST)
        ));
    }
    for route in routes {
        let host = match &route.host {
            Some(h) => format!("{HOST} = {} AND ", d.string(h)),
            None => String::new(),
        };
        arms.push_str(&format!(
            "\n      WHEN {host}{} THEN {}",
            d.matches(path, &route.pattern),
            d.string(&route.name)
        ));
    }
    let normalised = if templates.is_empty() {
        normalised_path(d, path)
    } else {
        NORM_PATH.to_string()
    };
    if let (Some(m), false) = (method, templates.is_empty()) {
        let names = templates::routed_endpoints(routes.iter().map(|r| r.name.as_str()));
        if !names.is_empty() {
            let list: Vec<String> = names.iter().map(|n| d.string(n)).collect();
            arms.push_str(&format!(
                "
      WHEN {m} || ' ' || {normalised} IN ({}) THEN {m} || ' ' || {normalised}",
                list.join(", ")
            ));
        }
    }
    let named = templates::templated(d, &normalised, templates);
    let auto = match method {
        Some(m) => format!("{m} || ' ' || {named}"),
        None => named,
    };
    if arms.is_empty() {
        return auto;
    }
    format!("CASE{arms}\n      ELSE {auto}\n    END")
}
