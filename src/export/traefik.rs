//! Traefik: one `rateLimit` middleware per rule and the routers that attach
//! them, as dynamic configuration (YAML, file provider, Traefik v3 rules).
//!
//! Traefik's rateLimit is a token bucket (`average` per `period`, `burst` =
//! bucket size), so L/W and C carry over exactly. It keys on one source only
//! (an IP strategy or one request header), so combined keys are refused, and
//! it has no dry-run mode. Traefik picks one router per request: each router
//! lists every middleware of the rules that apply to its requests. Each
//! exemption is a router of higher priority without them
//! ([`super::traefik_exempt`]).

use super::traefik_exempt;
use super::yaml::{Map, Value, plain, string};
use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, comment_block, conf,
    dashed, describe, free_name, route,
};
use crate::policy::{CheckedRule, Exemption};
use crate::text::counted;
use crate::units::Window;

/// The Traefik exporter.
pub struct Traefik;

/// A Go duration for a window: `1m`, `1h`, `90s`.
pub fn period(window: Window) -> String {
    let s = window.secs();
    if s.is_multiple_of(3600) {
        format!("{}h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{}m", s / 60)
    } else {
        format!("{s}s")
    }
}

/// A string literal in a Traefik rule: a Go raw string in backticks, or a
/// double-quoted Go string when the text holds a backtick.
pub fn rule_literal(text: &str) -> String {
    if text.contains('`') {
        format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        format!("`{text}`")
    }
}

/// The `sourceCriterion` of a key (none for the connection's address), and a
/// note; or why Traefik cannot key on it.
fn source_criterion(parts: &[ClientPart]) -> Result<(Option<Map>, &'static str), String> {
    let [part] = parts else {
        return Err(
            "Traefik keys on one source (an IP strategy or one header); use a single-part key"
                .into(),
        );
    };
    let header = |name: &str| {
        let mut criterion = Map::new();
        criterion.set("requestHeaderName", string(name));
        Some(criterion)
    };
    Ok(match part {
        ClientPart::Address => (
            None,
            "  Source: Traefik's default, the connection's address.",
        ),
        ClientPart::ForwardedFor => {
            let mut strategy = Map::new();
            strategy.set("depth", plain(1));
            let mut criterion = Map::new();
            criterion.set("ipStrategy", strategy);
            (
                Some(criterion),
                "  Source: X-Forwarded-For at depth 1 (from the right): set depth to the number of proxies that append to it before Traefik.",
            )
        }
        ClientPart::User => (
            header("Authorization"),
            "  Source: the Authorization header, one bucket per credential (the closest to $remote_user); requests without it share one bucket.",
        ),
        ClientPart::Header(h) => (
            header(h),
            "  Source: the header; requests without it share one bucket (the empty value).",
        ),
        other => {
            return Err(format!(
                "Traefik's rateLimit cannot key on {other}; use ip, xff, user or a header"
            ));
        }
    })
}

/// One rule's middleware: its comment lines and `rateLimit` settings.
fn middleware(rule: &CheckedRule) -> Result<(Vec<String>, Map), ExportError> {
    let shape = Shape::of(rule)?;
    let parts = client_parts(rule)?;
    let (criterion, source_note) =
        source_criterion(&parts).map_err(|message| ExportError::Unsupported {
            target: "traefik",
            rule: rule.name.clone(),
            message,
        })?;
    let limit = rule.spec.limit;
    let notes = vec![
        describe(rule),
        format!(
            "  average {} per period {} = {limit} exactly.",
            limit.requests,
            period(limit.window),
        ),
        format!(
            "  burst (Traefik's bucket size): {}, so burst = {}.",
            shape.capacity_note, shape.capacity
        ),
        source_note.to_string(),
    ];
    let mut rate_limit = Map::new();
    rate_limit
        .set("average", plain(limit.requests))
        .set("period", plain(period(limit.window)))
        .set("burst", plain(shape.capacity));
    if let Some(criterion) = criterion {
        rate_limit.set("sourceCriterion", criterion);
    }
    let mut settings = Map::new();
    settings.set("rateLimit", rate_limit);
    Ok((notes, settings))
}

/// One router the export writes for rate-limited requests: the rule whose
/// method and route its Traefik rule picks (`None`: `rl-all`, every other
/// request), that rule's text, and the rules whose middlewares it chains, in
/// the chain's order. Traefik builds each router's middlewares on their own
/// (`buildHTTPHandler` in pkg/server/router/router.go), so a rule's buckets
/// are kept per router: `rlctl simulate --gateway traefik` replays these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    /// The rule whose router this is, or `None` for `rl-all`.
    pub router_of: Option<usize>,
    /// The router's Traefik rule.
    pub rule: String,
    /// The rules whose middlewares it carries, in order.
    pub middlewares: Vec<usize>,
}

/// The priority written for `rl-all`: the lowest, below every rule's router.
/// Left to Traefik's default (the rule's length), ``PathPrefix(`/`)`` (16
/// bytes) outranked ``Method(`GET`)`` (13), so a rule with a method and no
/// route never took a request while a rule for every request wrote `rl-all`
/// (found by review).
pub const RL_ALL_PRIORITY: usize = 1;

impl Chain {
    /// The router's priority: `rl-all`'s [`RL_ALL_PRIORITY`], written; a
    /// rule's router has Traefik's default, its rule's length in bytes
    /// (`GetRulePriority` in pkg/muxer/http/mux.go). The highest that
    /// matches takes the request.
    pub fn priority(&self) -> usize {
        match self.router_of {
            Some(_) => self.rule.len(),
            None => RL_ALL_PRIORITY,
        }
    }
}

/// The routers for rules with these `scopes` (method, route), in the order
/// written: one per rule with a method or route, carrying the middlewares of
/// every rule that applies to its requests, then `rl-all` for the rest.
pub fn chains(scopes: &[Scope]) -> Vec<Chain> {
    let everywhere: Vec<usize> = (0..scopes.len())
        .filter(|&i| scopes[i] == (None, None))
        .collect();
    let mut chains = Vec::new();
    for (i, (m, r)) in scopes.iter().enumerate() {
        let (rule_text, also) = match (m, r) {
            (None, None) => continue,
            (Some(m), None) => (format!("Method({})", rule_literal(m)), Vec::new()),
            (m, Some(r)) => {
                let path = format!("PathRegexp({})", rule_literal(r));
                let method_only: Vec<usize> = (0..scopes.len())
                    .filter(|&j| m.is_some() && scopes[j].1.is_none() && &scopes[j].0 == m)
                    .collect();
                match m {
                    Some(m) => (
                        format!("Method({}) && {path}", rule_literal(m)),
                        method_only,
                    ),
                    None => (path, method_only),
                }
            }
        };
        let mut middlewares: Vec<usize> = everywhere.iter().chain(&also).copied().collect();
        middlewares.push(i);
        chains.push(Chain {
            router_of: Some(i),
            rule: rule_text,
            middlewares,
        });
    }
    if !everywhere.is_empty() {
        chains.push(Chain {
            router_of: None,
            rule: "PathPrefix(`/`)".into(),
            middlewares: everywhere,
        });
    }
    chains
}

/// The middleware name of each rule: `rl-` and its identifier.
pub fn middleware_names(rules: &[CheckedRule]) -> Vec<String> {
    middleware_names_of(rules.iter().map(|r| r.name.as_str()))
}

/// [`middleware_names`] of rules with these names.
pub fn middleware_names_of<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    (super::identifiers_besides(names, Default::default()).iter())
        .map(|id| format!("rl-{}", dashed(id)))
        .collect()
}

/// The name of each of `chains` (a rule's middleware name for its router,
/// `rl-all` unless a rule's router is called so), from the middleware
/// `names` of the rules.
pub fn router_names(chains: &[Chain], names: &[String]) -> Vec<String> {
    let mut written: Vec<String> = Vec::new();
    for chain in chains {
        let name = match chain.router_of {
            Some(i) => names[i].clone(),
            None => free_name("rl-all", '-', |name| written.iter().any(|w| w == name)),
        };
        written.push(name);
    }
    written
}

/// A rule's method and route.
pub type Scope = (Option<String>, Option<String>);

/// The scope of each rule (its route refused as the export refuses it).
pub fn scopes(rules: &[CheckedRule]) -> Result<Vec<Scope>, ExportError> {
    (rules.iter())
        .map(|rule| Ok((rule.method.clone(), route(rule)?.map(str::to_string))))
        .collect()
}

impl Exporter for Traefik {
    fn target(&self) -> &'static str {
        "traefik"
    }

    /// The dynamic configuration of `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        if opts.dry_run {
            return Err(ExportError::Target {
                target: "traefik",
                message:
                    "Traefik's rateLimit middleware has no dry-run mode; export without --dry-run"
                        .into(),
            });
        }
        let names = middleware_names(rules);
        let mut middlewares = Map::new();
        for (rule, name) in rules.iter().zip(&names) {
            let (notes, settings) = middleware(rule)?;
            middlewares.comments(&notes).set(name.clone(), settings);
        }
        let chains = chains(&scopes(rules)?);
        let mut routers_map = Map::new();
        for router in traefik_exempt::routers(exemptions, rules)? {
            let mut settings = Map::new();
            settings
                .set("rule", string(router.rule))
                .set("priority", plain(router.priority))
                .note("above every rate-limited router")
                .set("service", plain("backend"))
                .note("your service; no rateLimit middleware");
            routers_map
                .comments(&router.notes)
                .set(router.name, settings);
        }
        for (chain, name) in chains.iter().zip(router_names(&chains, &names)) {
            let mut settings = Map::new();
            let list = chain.middlewares.iter().map(|&j| string(names[j].clone()));
            settings.set("rule", string(chain.rule.clone()));
            if chain.router_of.is_none() {
                settings
                    .set("priority", plain(RL_ALL_PRIORITY))
                    .note("below every rule's router");
            }
            settings
                .set("service", plain("backend"))
                .note("your service")
                .set("middlewares", Value::FlowSeq(list.collect()));
            let note = match chain.router_of {
                Some(i) => format!("requests of rule {}", rules[i].name),
                None => "every other request".into(),
            };
            routers_map.comment(note).set(name, settings);
        }
        let mut http = Map::new();
        http.set("middlewares", middlewares)
            .set("routers", routers_map);
        let mut doc = Map::new();
        doc.set("http", http);
        let first = format!(
            "rlctl export --target traefik: {} as rateLimit middlewares (Traefik v3).",
            counted(rules.len(), "rule")
        );
        let head = conf::head(
            &[
                &first,
                "Traefik picks one router per request (the longest rule first): each router below",
                "carries the middlewares of every rule that applies to its requests. Buckets are",
                "per router and per Traefik instance; idle buckets are forgotten after a few",
                "seconds and restart full. Traefik may delay a request up to half a refill",
                "interval instead of rejecting it. Replace service: backend with your service.",
                "Safe conversions: rate and burst carry over exactly (token bucket).",
            ],
            &["Response headers describing each rule (e.g. a headers middleware):"],
            rules,
        );
        Ok(template_safe(&(comment_block("# ", &head) + &doc.render())))
    }
}

/// `yaml` with every `{{` written `{\x7B`: Traefik reads a file of dynamic
/// configuration as a Go template before it reads the YAML
/// (`CreateConfiguration` in pkg/provider/file/file.go of traefik/traefik),
/// so a policy's `{{` would be run (or fail the file); every string from a
/// policy is double-quoted, where YAML reads `\x7B` back as `{`, and in a
/// comment it is only shown so.
fn template_safe(yaml: &str) -> String {
    yaml.replace("{{", "{\\x7B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    #[test]
    fn periods_are_go_durations() {
        assert_eq!(period("1m".parse().unwrap()), "1m");
        assert_eq!(period("1d".parse().unwrap()), "24h");
        assert_eq!(period("90s".parse().unwrap()), "90s");
    }

    #[test]
    fn a_policys_double_braces_are_not_a_go_template() {
        let text = "[[rule]]\nname='g{{x}}'\nlimit='4/1m'\nroute='^/a\\{\\{b$'\n[[rule]]\nname='e'\nexempt=true\nkey='field:http_x_api_key'\nclient='k{{.x}}{{{'\n";
        let policy = Policy::parse_policy(text, "p").unwrap();
        let out = Traefik
            .render_policy(&policy, &ExportOptions::default())
            .unwrap();
        assert!(!out.contains("{{"), "{out}");
        let yaml: serde_norway::Value = serde_norway::from_str(&out).unwrap();
        let routers = &yaml["http"]["routers"];
        assert_eq!(
            routers["rl-exempt-e"]["rule"].as_str(),
            Some("Header(`x-api-key`, `k{{.x}}{{{`)")
        );
    }

    #[test]
    fn rule_literals_cannot_break_out() {
        assert_eq!(rule_literal("^/a$"), "`^/a$`");
        assert_eq!(rule_literal("^/a`\"\\d$"), r#""^/a`\"\\d$""#);
    }

    #[test]
    fn burst_is_the_bucket_size_and_combined_keys_are_refused() {
        let rules = Policy::parse("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7", "p").unwrap();
        let out = Traefik.render(&rules, &ExportOptions::default()).unwrap();
        assert!(
            out.contains("average: 40\n        period: 1m\n        burst: 7\n"),
            "{out}"
        );
        let rules = Policy::parse("[[rule]]\nname='g'\nkey='ip+user'\nlimit='40/1m'", "p").unwrap();
        let err = Traefik
            .render(&rules, &ExportOptions::default())
            .unwrap_err();
        assert!(err.to_string().contains("one source"), "{err}");
        let dry = ExportOptions {
            dry_run: true,
            ..Default::default()
        };
        let rules = Policy::parse("[[rule]]\nname='g'\nlimit='40/1m'", "p").unwrap();
        assert!(
            Traefik
                .render(&rules, &dry)
                .unwrap_err()
                .to_string()
                .contains("dry-run")
        );
    }
}
