//! The recommended policy: a global rule and one rule per endpoint with a
//! recommendation of its own, as a [`Policy`] or as the TOML that
//! `rlctl analyze --write-policy` writes. Writing the file is the caller's.
//!
//! Given how the policy names the routes file of the run (`--routes` or
//! `--write-routes`), the TOML names it too, and the rule of an endpoint
//! named by one of its templates says `template = "/api/orders/:id"`
//! rather than that template's regex.

use super::{AnalysisSettings, AnalyzeRun, EndpointRecommendation};
use crate::discover::{self, Segment, Template, TemplateSet};
use crate::policy::{self, Policy, Rule};
use crate::recommend::Recommendation;
use crate::text::time::format_rfc3339;
use crate::text::{counted, escape, path_regex};

/// The recommendation as a policy: a global rule, then one rule per endpoint that
/// has its own recommendation (static files aside: they rarely want a limit of their own).
pub fn recommended_policy(run: &AnalyzeRun, settings: &AnalysisSettings) -> Option<Policy> {
    recommended(run, settings, None).map(|(policy, ..)| policy)
}

/// [`recommended_policy`] with the endpoints that got no rule although they
/// have a recommendation of their own (see [`recommended`]).
pub fn recommended_policy_and_unruled(
    run: &AnalyzeRun,
    settings: &AnalysisSettings,
) -> Option<(Policy, Vec<String>)> {
    recommended(run, settings, None).map(|(policy, unruled, _)| (policy, unruled))
}

/// [`recommended_policy`], naming the routes file as `routes` says when
/// given; with the endpoints that got no rule although they have a
/// recommendation of their own (a name that is no method and path template,
/// a route limited to a host, a path that is not UTF-8 once decoded).
fn recommended(
    run: &AnalyzeRun,
    settings: &AnalysisSettings,
    routes: Option<&str>,
) -> Option<(Policy, Vec<String>, Vec<String>)> {
    let overall = run.recommendation.as_ref()?;
    let key = settings.ingest.keys.primary.text.clone();
    let templates = run.templates.as_ref().filter(|_| routes.is_some());
    let rule = |name: String, method, (route, template), r: &Recommendation| Rule {
        name,
        method,
        route,
        template,
        client: None,
        key: key.clone(),
        limit: r.rate.clone(),
        burst: settings.algorithm.has_burst().then_some(r.burst),
        algorithm: settings.algorithm.to_string(),
        exempt: false,
    };
    let mut rules = vec![rule("global".into(), None, (None, None), overall)];
    let (mut unruled, mut shared) = (Vec::new(), Vec::new());
    let mut taken = std::collections::HashSet::from(["global".to_string()]);
    for e in run
        .endpoint_recommendations
        .iter()
        .filter(|e| !policy::is_static_asset(&e.endpoint))
    {
        let Some(found) = rule_route(&e.endpoint, settings) else {
            unruled.push(e.endpoint.clone());
            continue;
        };
        let template = templates
            .filter(|_| !found.routed)
            .and_then(|set| listed(set, &e.endpoint));
        let route = match template {
            Some(template) => (None, Some(template)),
            None => (Some(found.regex), None),
        };
        let method = found.method;
        // Endpoints whose names differ only in punctuation (`/a-b`, `/a_b`)
        // would give two rules one name, which no policy may have.
        let base = policy::rule_name(&e.endpoint);
        let name = (1..)
            .map(|n| match n {
                1 => base.clone(),
                n => format!("{base}-{n}"),
            })
            .find(|name| taken.insert(name.clone()))
            .expect("a free name");
        shared.extend(shared_route_note(&name, e));
        rules.push(rule(name, method, route, e.for_rule()));
    }
    let policy = Policy {
        routes: routes.map(str::to_string),
        rules,
    };
    Some((policy, unruled, shared))
}

/// How the rule of an endpoint in the recommended policy matches requests.
pub(super) struct RuleRoute {
    /// Only this method (none: any).
    pub method: Option<String>,
    /// The regex on the path.
    pub regex: String,
    /// A `--route` rule named the endpoint (its pattern is the regex).
    pub routed: bool,
}

/// The rule route of `endpoint`: a `--route` rule's pattern, or its path read
/// as a template ([`endpoint_route`]); `None` when it can have no rule (a
/// route limited to a host, which a rule cannot be; a name that is no method
/// and path). The policy and a rule's wider scope ([`super::rule_scope`])
/// both match by it.
pub(super) fn rule_route(endpoint: &str, settings: &AnalysisSettings) -> Option<RuleRoute> {
    match settings.ingest.routes.iter().find(|r| r.name == endpoint) {
        Some(r) if r.host.is_some() => None,
        Some(r) => Some(RuleRoute {
            method: None,
            regex: r.pattern.as_str().to_string(),
            routed: true,
        }),
        None => {
            let (method, regex) = endpoint_route(endpoint, settings.recommend.routes.as_ref())?;
            Some(RuleRoute {
                method,
                regex,
                routed: false,
            })
        }
    }
}

/// The method and route regex of the rule of `endpoint` (`GET
/// /api/orders/:id`), a name the run gave (not a `--route` rule's): its path
/// read as a template, unless it holds a `:NAME` inside a segment that
/// neither a template of the routes file the run read (`templates`) nor
/// rlctl's own `:hash` explains (discovery keeps frequent paths by name,
/// colons and all): that colon is the path's own, as in `/v1/jobs:cancel` (a
/// custom method in Google's API design), and the rule matches the path as
/// it is. Read as a template, `^/v1/jobs[A-Za-z0-9]+$` matched none of its
/// requests. `None` for a path that is not UTF-8 once decoded
/// ([`path_regex::decodes_to_text`]): no gateway's route would match it.
fn endpoint_route(
    endpoint: &str,
    templates: Option<&TemplateSet>,
) -> Option<(Option<String>, String)> {
    let (_, path) = discover::method_and_path(endpoint)?;
    if !path_regex::decodes_to_text(path) {
        return None;
    }
    let (method, route) = policy::endpoint_match(endpoint)?;
    let listed = templates.is_some_and(|set| listed(set, endpoint).is_some());
    if listed || !has_own_colon(path) {
        return Some((method, route));
    }
    Some((method, format!("^{}$", path_regex::literal(path))))
}

/// Whether a segment of `path` holds a `:NAME` other than `:hash` beside
/// other text: a pattern as a template, literal as discovery keeps it
/// ([`Segment::of_name`]).
fn has_own_colon(path: &str) -> bool {
    path.split('/').any(|segment| {
        matches!(
            (Segment::parse(segment), Segment::of_name(segment)),
            (Segment::Pattern(_), Segment::Literal(_))
        )
    })
}

/// The template of `set` that the path of `endpoint` (`GET /api/orders/:id`) is.
fn listed(set: &TemplateSet, endpoint: &str) -> Option<String> {
    let (_, path) = discover::method_and_path(endpoint)?;
    let wanted = Template::parse(path).ok()?;
    set.templates()
        .iter()
        .any(|t| t.precedence(&wanted) == std::cmp::Ordering::Equal)
        .then(|| path.to_string())
}

/// The recommended policy as TOML with a header saying what it rests on;
/// `routes`: how it names the routes file of the run, if any.
pub fn policy_text(
    run: &AnalyzeRun,
    settings: &AnalysisSettings,
    routes: Option<&str>,
) -> Option<String> {
    let (policy, unruled, shared) = recommended(run, settings, routes)?;
    let span = run
        .span
        .map(|(a, b)| format!("{} .. {}", format_rfc3339(a), format_rfc3339(b)))
        .unwrap_or_default();
    let mut header = vec![
        "Rate-limit policy written by `rlctl analyze --write-policy`.".to_string(),
        format!(
            "Basis: {} from {}, {span}.",
            counted(run.analysis.overall.requests, "request"),
            counted(run.analysis.overall.clients, "client")
        ),
        format!(
            "Limits are {} x the per-window p99.9 of requests per client (window {}).",
            settings.multiplier, settings.stats.window
        ),
        "Review the flagged clients in the analysis before enforcing.".to_string(),
    ];
    header.extend(prefix_note(&settings.ingest.keys.primary));
    header.extend(unruled_note(&unruled));
    header.extend(shared);
    let mut text = policy.to_toml(&header);
    text.push_str(&suggested_exemptions(
        run,
        &settings.ingest.keys.primary.text,
    ));
    Some(text)
}

/// The header line saying that clients were address prefixes (`--cidr4`,
/// `--cidr6`), which a `key` cannot say: a gateway keying on the address
/// would give each address the limit of a prefix.
fn prefix_note(key: &crate::ingest::key::KeySpec) -> Option<String> {
    let prefixes: Vec<String> = [("--cidr4", key.cidr4), ("--cidr6", key.cidr6)]
        .into_iter()
        .filter_map(|(flag, bits)| bits.map(|b| format!("{flag} {b}")))
        .collect();
    (!prefixes.is_empty()).then(|| {
        format!(
            "Clients are address prefixes ({}): replay with the same flags (rlctl simulate {} --policy FILE); a gateway keying on the address gives each address these limits.",
            prefixes.join(", "),
            prefixes.join(" ")
        )
    })
}

/// The header lines that name the endpoints left without a rule (log text,
/// escaped so that it cannot end the comment).
fn unruled_note(unruled: &[String]) -> Vec<String> {
    const LISTED: usize = 10;
    if unruled.is_empty() {
        return Vec::new();
    }
    let mut note = vec![format!(
        "No rule for {} endpoint(s) with a recommendation of their own (the global rule still covers them): a name that is not a method and a path template, a route limited to a host, or a path that is not UTF-8 once decoded, which no gateway's route matches as logged:",
        unruled.len()
    )];
    note.extend(
        unruled
            .iter()
            .take(LISTED)
            .map(|e| format!("  {}", crate::text::escape::terminal(e))),
    );
    if unruled.len() > LISTED {
        note.push(format!("  and {} more", unruled.len() - LISTED));
    }
    note
}

/// The header lines naming, when rule `rule` of endpoint `e` also matches
/// other reported endpoints (`/p/:id` also counts the `/p/about` that
/// discovery kept by name, as a gateway checks every rule that matches),
/// those endpoints: its limit rests on all of their requests
/// ([`super::rule_scope`]), not its own endpoint's alone.
fn shared_route_note(rule: &str, e: &EndpointRecommendation) -> Vec<String> {
    const LISTED: usize = 5;
    let Some(scope) = &e.rule_scope else {
        return Vec::new();
    };
    let requests: u64 = scope.others.iter().map(|(_, n)| n).sum();
    let mut note = vec![format!(
        "Rule {rule}'s route also matches {} other reported endpoint(s) ({requests} requests), so its limit rests on their requests and its own ({} for {} alone); endpoints beyond the reported ones are not counted in:",
        scope.others.len(),
        e.recommendation.rate,
        crate::text::escape::terminal(&e.endpoint),
    )];
    note.extend(
        scope
            .others
            .iter()
            .take(LISTED)
            .map(|(name, n)| format!("  {} ({n} requests)", crate::text::escape::terminal(name))),
    );
    if scope.others.len() > LISTED {
        note.push(format!("  and {} more", scope.others.len() - LISTED));
    }
    note
}

/// The exemptions the client profiles suggest (periodic probes, heavy steady
/// clients), as commented-out rules a reviewer can enable.
pub fn suggested_exemptions(run: &AnalyzeRun, key: &str) -> String {
    use crate::profile::Kind;
    let mut out = String::new();
    for p in &run.profiles {
        let Some(f) = p
            .findings
            .iter()
            .find(|f| matches!(f.kind, Kind::PeriodicProbe | Kind::HeavySteady))
        else {
            continue;
        };
        // Nothing a scanner sends is to be exempted.
        if p.findings.iter().any(|f| f.kind == Kind::Scanner) {
            continue;
        }
        if out.is_empty() {
            out.push_str("\n# Exemptions the client profiles suggest: uncomment after review.\n");
        }
        out.push_str(&format!(
            "\n# {}: {}\n# [[rule]]\n# name = {}\n# key = {}\n# client = {}\n# exempt = true\n",
            f.kind.label(),
            escape::terminal(&f.evidence),
            escape::toml_string(&format!("exempt-{}", policy::rule_name(&p.client))),
            escape::toml_string(key),
            escape::toml_string(&p.client),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::key::KeySpec;

    #[test]
    fn a_colon_of_the_path_is_matched_as_it_is() {
        let route = |e: &str| endpoint_route(e, None).unwrap().1;
        assert_eq!(route("POST /v1/jobs:cancel"), "^/v1/jobs:cancel$");
        assert_eq!(route("GET /v1/a:b/c:d"), "^/v1/a:b/c:d$");
        // rlctl's own parameters stay parameters.
        assert_eq!(
            route("GET /static/app.:hash.js"),
            r"^/static/app\.[A-Za-z0-9]+\.js$"
        );
        assert_eq!(route("GET /api/users/:id"), "^/api/users/[^/]+$");
        assert_eq!(route("GET /t/12:30"), "^/t/12:30$");
        // A template of the run's routes file is one, whatever its names.
        let set = TemplateSet::new(vec![Template::parse("/files/report-:year.pdf").unwrap()]);
        let (_, listed) = endpoint_route("GET /files/report-:year.pdf", Some(&set)).unwrap();
        assert_eq!(listed, r"^/files/report\-[A-Za-z0-9]+\.pdf$");
    }

    #[test]
    fn a_policy_of_address_prefixes_says_so() {
        let key = |cidr4, cidr6| KeySpec::parse("ip", cidr4, cidr6).unwrap();
        assert_eq!(prefix_note(&key(None, None)), None);
        let note = prefix_note(&key(Some(24), Some(64))).unwrap();
        assert!(
            note.starts_with("Clients are address prefixes (--cidr4 24, --cidr6 64): replay with the same flags (rlctl simulate --cidr4 24 --cidr6 64 --policy FILE)"),
            "{note}"
        );
    }
}
