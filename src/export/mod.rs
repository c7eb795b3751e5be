//! `rlctl export`: a policy's rules as configuration for a gateway product, one
//! file per product behind [`Exporter`], plus what they all share: the rule's
//! shape in product-neutral terms ([`Shape`]), the client key as request
//! attributes ([`ClientPart`]), response-header advice, safe identifiers and
//! comment text. Each exporter turns every rule into a fragment of data and
//! writes it through a shared emitter: [`conf`] for line-based files (nginx,
//! HAProxy), [`yaml`] for YAML with comments (Envoy, Traefik, Kong), serde for
//! JSON (AWS WAF).
//!
//! # Safe conversions
//!
//! No product implements every algorithm of a policy. Where a product cannot
//! express a rule exactly, the exporter picks the closest setting that is
//! never stricter: given the same requests admitted so far, it admits every
//! request the policy admits, and may admit somewhat more (a looser limit is
//! a tuning matter; rejecting a legitimate client is an outage). Decisions
//! can still differ request by request once the gateway has admitted one the
//! policy rejects, as that request spends capacity. Every such choice is
//! stated in a comment of the output (in `Notes` for JSON). The bounds used:
//!
//! - A rule admits at most C requests at once from an idle client (its
//!   *capacity*): the burst B for token-bucket and GCRA (default L), B + 1 for
//!   leaky-bucket (nginx convention, default B = 0), L for sliding-log, 2L for
//!   fixed-window and sliding-counter (L at the end of one window, L more at the
//!   start of the next).
//! - In any span of P seconds, a rule admits at most C + ⌈L·P/W⌉ − 1 requests
//!   (a full bucket plus its refill); sliding-log at most L·⌈P/W⌉, fixed-window
//!   and sliding-counter at most L·(⌈P/W⌉ + 1). [`Shape::most_in_span`] takes
//!   the smallest that applies.
//! - In an epoch-aligned window of P seconds (Kong's fixed windows), the window
//!   algorithms admit at most L·P/W when W divides P and L when P divides W
//!   ([`Shape::most_in_aligned_window`]).
//!
//! Known exceptions, accepted and stated: nginx keeps rates in whole
//! milli-requests per second (truncating, e.g. 40r/m to 0.666 r/s), and
//! products keyed on a header put requests without it in one shared bucket.
//!
//! Exporters never interpolate policy text unescaped: names become
//! [`identifiers`], comments go through [`comment`], strings are quoted for
//! their format, and routes or methods a product cannot quote are refused.

pub mod aws_waf;
pub mod conf;
pub mod envoy;
pub mod exempt;
pub mod haproxy;
mod haproxy_exempt;
pub mod key;
pub mod kong;
mod kong_exempt;
pub mod kong_plan;
pub mod nginx;
mod nginx_exempt;
mod shape;
pub mod traefik;
mod traefik_exempt;
pub mod yaml;

pub use key::{ClientPart, client_parts, field_part};
pub use shape::{Family, Shape, mul_div_ceil};

use crate::policy::{CheckedPolicy, CheckedRule, Exemption};

/// The client count `--clients` defaults to when sizing per-client state.
pub const DEFAULT_CLIENTS: u64 = 10_000;

/// The most `--clients` takes: a billion. HAProxy's stick-table `size` and
/// Envoy's `max_dynamic_descriptors` are 32-bit (a larger size makes
/// `haproxy -c` fail); nginx's zone for it is about 120 GB, which nginx
/// must be able to map.
pub const MAX_CLIENTS: u64 = 1_000_000_000;

/// Why a policy cannot be exported to a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExportError {
    /// The rule itself is unusable (e.g. a burst of 0 admits nothing).
    #[error("rule `{rule}`: {message}")]
    Rule { rule: String, message: String },
    /// The target product cannot express this rule even approximately.
    #[error("{target} cannot express rule `{rule}`: {message}")]
    Unsupported {
        target: &'static str,
        rule: String,
        message: String,
    },
    /// The target product lacks something the options ask for.
    #[error("{target}: {message}")]
    Target {
        target: &'static str,
        message: String,
    },
}

/// Settings that apply to every rule of an export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportOptions {
    /// Count would-be rejections without rejecting (where the product can).
    pub dry_run: bool,
    /// Expected number of distinct clients, for sizing per-client state.
    pub clients: u64,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            dry_run: false,
            clients: DEFAULT_CLIENTS,
        }
    }
}

/// One gateway product's configuration format.
pub trait Exporter {
    /// The product's name, as `--target` spells it.
    fn target(&self) -> &'static str;
    /// The configuration for `rules` with `exemptions` (requests no rule
    /// limits), ready to paste (comments included). A product that cannot
    /// express an exemption refuses it, naming the rule and what to do.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError>;
    /// The configuration for `rules` alone.
    fn render(&self, rules: &[CheckedRule], opts: &ExportOptions) -> Result<String, ExportError> {
        self.render_with(rules, &[], opts)
    }
    /// The configuration for a policy with its exemptions.
    fn render_policy(
        &self,
        policy: &CheckedPolicy,
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        self.render_with(&policy.rules, &policy.exemptions, opts)
    }
}

/// The products `rlctl export --target` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// nginx `limit_req_zone` / `limit_req` (http {} context).
    Nginx,
    /// Envoy local rate limit HTTP filter (YAML).
    Envoy,
    /// Traefik rateLimit middleware (dynamic configuration, YAML).
    Traefik,
    /// Kong rate-limiting plugin (decK declarative YAML).
    Kong,
    /// HAProxy stick tables (frontend and backend sections).
    Haproxy,
    /// AWS WAF rate-based rules (JSON).
    AwsWaf,
}

impl Target {
    /// Every product, in `--target`'s order.
    pub const ALL: [Target; 6] = [
        Target::Nginx,
        Target::Envoy,
        Target::Traefik,
        Target::Kong,
        Target::Haproxy,
        Target::AwsWaf,
    ];

    /// The exporter for this product.
    pub fn exporter(self) -> Box<dyn Exporter> {
        match self {
            Target::Nginx => Box::new(nginx::Nginx),
            Target::Envoy => Box::new(envoy::Envoy),
            Target::Traefik => Box::new(traefik::Traefik),
            Target::Kong => Box::new(kong::Kong),
            Target::Haproxy => Box::new(haproxy::Haproxy),
            Target::AwsWaf => Box::new(aws_waf::AwsWaf),
        }
    }
}

/// The rule's route regex, refused when it holds control characters (no path does,
/// and several formats cannot quote them).
pub fn route(rule: &CheckedRule) -> Result<Option<&str>, ExportError> {
    route_text(&rule.name, rule.route.as_ref())
}

/// A rule's or an exemption's route regex as text, refused when it holds control
/// characters or line breaks.
pub(crate) fn route_text<'a>(
    name: &str,
    route: Option<&'a regex::Regex>,
) -> Result<Option<&'a str>, ExportError> {
    let Some(r) = route else {
        return Ok(None);
    };
    let text = r.as_str();
    if text
        .chars()
        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(ExportError::Rule {
            rule: name.to_string(),
            message: "the route regex holds a control character or line break; write it as an escape (\\n, \\x00)".into(),
        });
    }
    Ok(Some(text))
}

/// A rule's or an exemption's route (see [`route_text`]) as `target` (nginx,
/// HAProxy: PCRE without UTF mode) matches it on a path's bytes
/// ([`crate::text::pcre_bytes`]).
pub(crate) fn byte_route(
    target: &'static str,
    name: &str,
    route: Option<&str>,
) -> Result<Option<String>, ExportError> {
    route
        .map(|r| {
            crate::text::pcre_bytes::translate(r).map_err(|message| ExportError::Unsupported {
                target,
                rule: name.to_string(),
                message,
            })
        })
        .transpose()
}

/// Response headers that tell clients this rule's limit (IETF draft
/// `RateLimit-Policy: L;w=W` and the common `X-RateLimit-Limit: L`).
pub fn header_advice(rule: &CheckedRule) -> String {
    let l = rule.spec.limit;
    format!(
        "RateLimit-Policy: {};w={}  X-RateLimit-Limit: {}",
        l.requests,
        l.window.secs(),
        l.requests
    )
}

/// One line describing the rule as the policy states it.
pub fn describe(rule: &CheckedRule) -> String {
    let scope = match (&rule.method, &rule.route) {
        (None, None) => "every request".to_string(),
        (Some(m), None) => format!("{m} requests"),
        (None, Some(r)) => format!("paths matching {}", r.as_str()),
        (Some(m), Some(r)) => format!("{m} on paths matching {}", r.as_str()),
    };
    let burst = rule
        .spec
        .burst
        .map(|b| format!(" burst {b}"))
        .unwrap_or_default();
    format!(
        "rule `{}`: {scope}, key {}, {} {}{burst}",
        rule.name, rule.key.text, rule.spec.limit, rule.spec.kind
    )
}

/// Text safe inside a one-line comment of any format: control characters and
/// Unicode line breaks become visible escapes.
pub fn comment(text: &str) -> String {
    crate::text::escape::terminal(text)
        .replace('\u{2028}', "\\u{2028}")
        .replace('\u{2029}', "\\u{2029}")
}

/// Comment lines, each prefixed with `prefix` (e.g. `# `); an empty line gets the
/// bare comment marker.
pub fn comment_block(prefix: &str, lines: &[String]) -> String {
    lines
        .iter()
        .map(|l| {
            if l.is_empty() {
                format!("{}\n", prefix.trim_end())
            } else {
                format!("{prefix}{}\n", comment(l))
            }
        })
        .collect()
}

/// Longest identifier before a uniqueness suffix. nginx hashes variable names
/// in buckets of 64 bytes (`variables_hash_bucket_size`), which hold names of
/// at most 46 characters on 64-bit builds (8 bytes of pointer, the name and 2
/// bytes of length rounded up to 8, and the bucket's closing pointer): with
/// `rl_` before and `_method` after, 30 characters and a suffix fit.
const IDENTIFIER_CHARS: usize = 30;

/// One identifier per rule, from its name: lowercase ASCII letters, digits and
/// `_`, at most [`IDENTIFIER_CHARS`] and a suffix, unique (the suffix tells
/// apart names that differ only in other characters or past that length).
pub fn identifiers(rules: &[CheckedRule]) -> Vec<String> {
    identifiers_besides(
        rules.iter().map(|r| r.name.as_str()),
        std::collections::HashSet::new(),
    )
}

/// One identifier per exemption, as [`identifiers`] makes them for rules,
/// none of them what a rule's identifier spells after `exempt_`: targets name
/// an exemption's objects `…exempt-ID` beside a rule's `…-ID`, so a rule
/// `exempt-h` and an exemption `h` would share a name.
pub fn exemption_identifiers(exemptions: &[Exemption], rules: &[CheckedRule]) -> Vec<String> {
    let taken = identifiers(rules)
        .into_iter()
        .filter_map(|id| id.strip_prefix("exempt_").map(str::to_string))
        .collect();
    identifiers_besides(exemptions.iter().map(|e| e.name.as_str()), taken)
}

/// One identifier per name, as [`identifiers`] makes them for rules, none of
/// them one of `seen` (which each joins).
fn identifiers_besides<'a>(
    names: impl IntoIterator<Item = &'a str>,
    mut seen: std::collections::HashSet<String>,
) -> Vec<String> {
    names
        .into_iter()
        .map(|name| {
            let mut base: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() {
                        c.to_ascii_lowercase()
                    } else {
                        '_'
                    }
                })
                .collect();
            while base.contains("__") {
                base = base.replace("__", "_");
            }
            base = base
                .trim_matches('_')
                .chars()
                .take(IDENTIFIER_CHARS)
                .collect();
            // Cut at a `_`, the identifier would meet its suffix in `__`.
            base.truncate(base.trim_end_matches('_').len());
            if base.is_empty() {
                base = "rule".into();
            }
            let id = free_name(&base, '_', |id| seen.contains(id));
            seen.insert(id.clone());
            id
        })
        .collect()
}

/// `base`, or the first of `base` + `sep` + 2, 3, … that is not `taken`.
pub(crate) fn free_name(base: &str, sep: char, taken: impl Fn(&str) -> bool) -> String {
    std::iter::once(base.to_string())
        .chain((2..).map(|n| format!("{base}{sep}{n}")))
        .find(|name| !taken(name))
        .expect("a free name among endless ones")
}

/// An identifier with `-` for `_`, as YAML and JSON products spell names.
pub fn dashed(id: &str) -> String {
    id.replace('_', "-")
}

/// A string as a double-quoted scalar, valid in JSON and in YAML.
pub fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}

/// What `target` exports for a policy of a `limit` rule `g` and an exemption
/// `e` written with the TOML lines `exemption` (the exporters' exemption tests).
#[cfg(test)]
pub(crate) fn render_exemption(
    target: &impl Exporter,
    limit: &str,
    exemption: &str,
) -> Result<String, String> {
    let text = format!(
        "[[rule]]\nname='g'\nlimit='{limit}'\n[[rule]]\nname='e'\nexempt=true\n{exemption}"
    );
    let policy = crate::policy::Policy::parse_policy(&text, "p").unwrap();
    target
        .render_policy(&policy, &ExportOptions::default())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod exempt_proptests;
#[cfg(test)]
mod tests;
