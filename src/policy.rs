//! Rate-limit policies as TOML: written by `rlctl analyze --write-policy`, read by
//! `simulate`, `report` and `export`.
//!
//! ```toml
//! [[rule]]
//! name = "global"
//! key = "ip"                # as --key: ip, xff, user, field:NAME, joined with +
//! limit = "40/1m"           # as --limit
//! burst = 7                 # optional; algorithms without a burst ignore it
//! algorithm = "token-bucket"
//!
//! [[rule]]
//! name = "get-api-search"
//! method = "GET"            # optional: only this method
//! route = "^/api/search$"   # optional: regex on the path without its query string
//! key = "ip"
//! limit = "20/1m"
//! algorithm = "token-bucket"
//! ```
//!
//! A rule may name its paths by an endpoint template instead of a regex, and
//! the policy the routes file the templates come from (see [`routes`]):
//!
//! ```toml
//! routes = "routes.txt"      # optional; relative to the policy file
//!
//! [[rule]]
//! name = "get-api-orders-id"
//! method = "GET"
//! template = "/api/orders/:id"   # instead of `route`
//! limit = "20/1m"
//! ```
//!
//! A request is checked against every rule that matches it, unless an
//! exemption matches it first (see [`exempt`]):
//!
//! ```toml
//! [[rule]]
//! name = "health-check"
//! route = "^/healthz$"      # a path, a client (`client = "10.0.0.7"`, a value
//! exempt = true             # of the rule's key), or both; no limit
//! ```

use std::path::Path;

use regex::Regex;
use serde::{Deserialize, Serialize};

mod endpoint;
pub mod exempt;
pub mod routes;

pub use endpoint::{endpoint_match, is_static_asset, rule_name};

use crate::ingest::key::KeySpec;
use crate::simulate::{AlgorithmKind, AlgorithmSpec, SpecError};
use crate::units::{Limit, UnitError};
pub use exempt::{CheckedPolicy, Exemption};

/// Errors reading a policy.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("policy {path}{at} is not valid TOML for a policy: {message}")]
    Toml {
        path: String,
        /// `:LINE:COLUMN` where the parser stopped, or empty.
        at: String,
        message: String,
    },
    #[error("policy {path}, rule `{rule}`: {message}")]
    Rule {
        path: String,
        rule: String,
        message: String,
    },
    #[error("policy {path} has no [[rule]]")]
    Empty { path: String },
    #[error("policy {path}: routes {message}")]
    Routes { path: String, message: String },
}

/// A policy file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The routes file the rules' templates come from, relative to the policy
    /// file: `simulate` and `report` name endpoints by it (as `--routes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routes: Option<String>,
    #[serde(rename = "rule", default)]
    pub rules: Vec<Rule>,
}

/// One rule as written in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    /// Only this HTTP method (absent: any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// A regex on the path without its query string (absent: every path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    /// An endpoint template (`/api/orders/:id`) instead of `route`: the paths
    /// its regex matches (see [`crate::discover::template`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<String>,
    /// Only this value of the key (exempt rules only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default = "default_key")]
    pub key: String,
    /// Requests per window; empty only in an exempt rule.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub limit: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u64>,
    #[serde(default = "default_algorithm")]
    pub algorithm: String,
    /// The requests it matches are never limited (by any rule).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exempt: bool,
}

fn default_key() -> String {
    "ip".into()
}

fn default_algorithm() -> String {
    "token-bucket".into()
}

/// A rule with every field checked and parsed.
#[derive(Debug, Clone)]
pub struct CheckedRule {
    pub name: String,
    pub method: Option<String>,
    pub route: Option<Regex>,
    pub key: KeySpec,
    /// Algorithm, limit and burst (a burst only for algorithms that have one).
    pub spec: AlgorithmSpec,
}

impl CheckedRule {
    /// Whether the rule applies to a request with this method and path (query ignored).
    pub fn matches(&self, method: &str, path: &str) -> bool {
        let path = path.split(['?', '#']).next().unwrap_or_default();
        self.method
            .as_deref()
            .is_none_or(|m| m.eq_ignore_ascii_case(method))
            && self.route.as_ref().is_none_or(|r| r.is_match(path))
    }
}

impl Policy {
    /// Reads and checks a policy file.
    pub fn load(path: &Path) -> Result<Vec<CheckedRule>, PolicyError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: name.clone(),
            source,
        })?;
        let rules = Self::parse(&text, &name)?;
        routes::load(&Self::from_toml(&text, &name)?, path)?;
        Ok(rules)
    }

    /// Reads and checks a policy file, exemptions included.
    pub fn load_policy(path: &Path) -> Result<CheckedPolicy, PolicyError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: name.clone(),
            source,
        })?;
        let mut checked = Self::parse_policy(&text, &name)?;
        checked.routes = routes::load(&Self::from_toml(&text, &name)?, path)?;
        Ok(checked)
    }

    /// Parses and checks policy text, exemptions included.
    pub fn parse_policy(text: &str, origin: &str) -> Result<CheckedPolicy, PolicyError> {
        Self::from_toml(text, origin)?.checked_at(origin, &rule_lines(text))
    }

    /// Parses and checks policy text (`origin` names it in messages); a
    /// policy with exempt rules is refused (see [`Policy::parse_policy`]).
    pub fn parse(text: &str, origin: &str) -> Result<Vec<CheckedRule>, PolicyError> {
        let checked = Self::from_toml(text, origin)?.checked_at(origin, &rule_lines(text))?;
        Self::without_exemptions(checked, origin)
    }

    fn from_toml(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        toml::from_str(text).map_err(|e| PolicyError::Toml {
            path: origin.into(),
            at: e.span().map_or_else(String::new, |span| {
                let (line, column) = line_and_column(text, span.start);
                format!(":{line}:{column}")
            }),
            message: e.message().to_string(),
        })
    }

    /// Checks every rule (`origin` names the policy in messages); exempt
    /// rules are refused here, for callers that cannot honour them.
    pub fn check(&self, origin: &str) -> Result<Vec<CheckedRule>, PolicyError> {
        Self::without_exemptions(self.check_policy(origin)?, origin)
    }

    /// The rules of `checked`, refused when it has exemptions.
    fn without_exemptions(
        checked: CheckedPolicy,
        origin: &str,
    ) -> Result<Vec<CheckedRule>, PolicyError> {
        if let Some(e) = checked.exemptions.first() {
            return Err(PolicyError::Rule {
                path: origin.into(),
                rule: e.name.clone(),
                message: "exempt rules are not supported here".into(),
            });
        }
        Ok(checked.rules)
    }

    /// Checks every rule, limits and exemptions.
    pub fn check_policy(&self, origin: &str) -> Result<CheckedPolicy, PolicyError> {
        self.checked_at(origin, &[])
    }

    /// [`Policy::check_policy`], a rule's error naming `origin:LINE` where
    /// `lines` gives the line of each rule.
    fn checked_at(&self, origin: &str, lines: &[usize]) -> Result<CheckedPolicy, PolicyError> {
        if self.rules.is_empty() {
            return Err(PolicyError::Empty {
                path: origin.into(),
            });
        }
        let mut seen = std::collections::HashSet::new();
        let mut exemptions = Vec::new();
        let rules = self
            .rules
            .iter()
            .enumerate()
            .filter_map(|(i, rule)| {
                let path = match lines.get(i) {
                    Some(line) => format!("{origin}:{line}"),
                    None => origin.to_string(),
                };
                let fail = |message: String| PolicyError::Rule {
                    path: path.clone(),
                    rule: rule.name.clone(),
                    message,
                };
                if !seen.insert(rule.name.as_str()) {
                    return Some(Err(fail("two rules have this name".into())));
                }
                if rule.exempt || rule.client.is_some() {
                    return match exempt::check(rule, fail) {
                        Ok(e) => {
                            exemptions.push(e);
                            None
                        }
                        Err(e) => Some(Err(e)),
                    };
                }
                Some(self.check_rule(rule, fail))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CheckedPolicy {
            rules,
            exemptions,
            routes: None,
        })
    }

    fn check_rule(
        &self,
        rule: &Rule,
        fail: impl Fn(String) -> PolicyError,
    ) -> Result<CheckedRule, PolicyError> {
        let kind: AlgorithmKind = rule
            .algorithm
            .parse()
            .map_err(|e: SpecError| fail(e.to_string()))?;
        let limit: Limit = rule
            .limit
            .parse()
            .map_err(|e: UnitError| fail(e.to_string()))?;
        let spec = AlgorithmSpec {
            burst: rule.burst.filter(|_| kind.has_burst()),
            ..AlgorithmSpec::new(kind, limit)
        };
        spec.limiter().map_err(|e| fail(e.to_string()))?;
        Ok(CheckedRule {
            name: rule.name.clone(),
            method: checked_method(rule, &fail)?,
            route: route_regex(rule, &fail)?,
            key: KeySpec::parse(&rule.key, None, None).map_err(|e| fail(e.to_string()))?,
            spec,
        })
    }

    /// The policy as TOML, after a comment header.
    pub fn to_toml(&self, header: &[String]) -> String {
        let mut out: String = header.iter().map(|l| format!("# {l}\n")).collect();
        out.push('\n');
        out.push_str(&toml::to_string(self).expect("a policy always serializes"));
        out
    }
}

/// The method of a rule as every replay and export takes it: up to 32
/// letters, digits, `-` and `_` (what every export target can write; RFC
/// 9110 tokens may hold more, which no method in use does) in upper case, as
/// clients send the standard ones (`get` is `GET`).
fn checked_method(
    rule: &Rule,
    fail: &impl Fn(String) -> PolicyError,
) -> Result<Option<String>, PolicyError> {
    let Some(method) = &rule.method else {
        return Ok(None);
    };
    let token = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if method.is_empty() || method.len() > 32 || !method.chars().all(token) {
        return Err(fail(format!(
            "method {method:?}: expected an HTTP method such as GET or POST (leave it out for every method)"
        )));
    }
    Ok(Some(method.to_ascii_uppercase()))
}

/// The compiled route of a rule: its `route` regex, or its `template`'s.
fn route_regex(
    rule: &Rule,
    fail: &impl Fn(String) -> PolicyError,
) -> Result<Option<Regex>, PolicyError> {
    let text = match (&rule.route, &rule.template) {
        (Some(_), Some(_)) => {
            return Err(fail(
                "give a route (a regex) or a template, not both".into(),
            ));
        }
        (None, Some(t)) => Some(routes::template_regex(t).map_err(fail)?),
        (Some(r), None) if r.is_empty() => {
            return Err(fail(
                "an empty route matches every path: leave route out for that".into(),
            ));
        }
        (route, None) => route.clone(),
    };
    text.as_deref()
        .map(Regex::new)
        .transpose()
        .map_err(|e| fail(format!("bad route regex: {}", crate::text::regex_error(&e))))
}

/// The line and column (from 1, the column in characters) of byte `at` of `text`.
/// The line of each `[[rule]]` of `text` (where its table starts), or none
/// when it does not parse so.
fn rule_lines(text: &str) -> Vec<usize> {
    #[derive(Deserialize)]
    struct Spans {
        #[serde(rename = "rule", default)]
        rules: Vec<toml::Spanned<toml::Table>>,
    }
    toml::from_str::<Spans>(text).map_or_else(
        |_| Vec::new(),
        |spans| {
            (spans.rules.iter())
                .map(|r| line_and_column(text, r.span().start).0)
                .collect()
        },
    )
}

fn line_and_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..text.floor_char_boundary(at)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

#[cfg(test)]
mod proptests;

#[cfg(test)]
mod tests;
