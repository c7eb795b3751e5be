//! Kong: the OSS `rate-limiting` plugin, as decK declarative YAML.
//!
//! Kong OSS counts requests in fixed, epoch-aligned windows (second, minute,
//! hour, day). Each limit set here is the most the rule can admit in one such
//! window ([`Shape::most_in_aligned_window`]), so given the same requests
//! admitted so far Kong admits every request the policy admits; a window
//! algorithm whose W is a Kong period converts exactly. Periods within a
//! factor 60 of W are set: the short ones bound bursts, the long ones bound
//! the average.
//!
//! Kong runs one rate-limiting plugin per request (the most specific) and
//! counts per plugin: which rules become which plugin, and which route a
//! request takes, is [`super::kong_plan`]'s. Each exemption is a route whose
//! own plugin never limits ([`super::kong_exempt`]).

use super::kong_exempt;
use super::kong_plan::{Plan, Plugin, RuleSide};
use super::yaml::{Map, Seq, Value, plain, string};
use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, comment_block, conf,
    dashed, describe, free_name, identifiers, route,
};
use crate::policy::{CheckedRule, Exemption};
use crate::text::counted;

mod limits;

pub use limits::{DAY, Limits, PERIODS, limits, merge};

/// The Kong exporter.
pub struct Kong;

/// `limit_by` settings for a key and a note, or why Kong cannot key on it.
fn limit_by(parts: &[ClientPart]) -> Result<(LimitBy, &'static str), String> {
    let [part] = parts else {
        return Err(
            "Kong limits by one thing (ip, consumer, header...); use a single-part key".into(),
        );
    };
    Ok(match part {
        ClientPart::Address => (LimitBy::Ip, ""),
        ClientPart::ForwardedFor => (
            LimitBy::Ip,
            "  ip: set Kong's trusted_ips, real_ip_header X-Forwarded-For and real_ip_recursive on.",
        ),
        ClientPart::User => (
            LimitBy::Consumer,
            "  consumer: needs an auth plugin; Kong limits requests without a consumer by ip.",
        ),
        ClientPart::Header(h) => (
            LimitBy::Header(h.clone()),
            "  header: Kong limits requests without the header by ip.",
        ),
        other => {
            return Err(format!(
                "Kong's rate-limiting cannot limit by {other}; use ip, xff, user or a header"
            ));
        }
    })
}

/// Why Kong refuses `method` as a route's, if it does: its schema takes
/// capital letters only (`typedefs.http_method`, `^%u+$`, in
/// kong/db/schema/typedefs.lua), where a policy's method may also hold
/// digits, `-` and `_`.
pub(super) fn method_refused(method: &str) -> Option<String> {
    (!method.bytes().all(|b| b.is_ascii_uppercase())).then(|| {
        format!("Kong's routes take methods of capital letters only, not {method:?}; leave this rule's method out for Kong, or export it to another target")
    })
}

/// What Kong's plugin counts by.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LimitBy {
    Ip,
    Consumer,
    Header(String),
}

/// The plugin entry: one limit per period, then how it counts.
fn plugin_entry(name: &str, by: &LimitBy, limits: &Limits) -> Map {
    let mut config = Map::new();
    for (&i, &n) in limits {
        config.set(PERIODS[i].0, plain(n));
    }
    match by {
        LimitBy::Ip => config.set("limit_by", plain("ip")),
        LimitBy::Consumer => config.set("limit_by", plain("consumer")),
        LimitBy::Header(h) => config
            .set("limit_by", plain("header"))
            .set("header_name", string(h)),
    };
    config
        .set("policy", plain("local"))
        .set("fault_tolerant", plain("true"))
        .set("hide_client_headers", plain("false"));
    let mut plugin = Map::new();
    plugin
        .set("name", plain("rate-limiting"))
        .set("instance_name", string(name))
        .set("config", config);
    plugin
}

/// A Kong regex path with the policy's search semantics (Kong anchors at the start).
pub fn regex_path(route: &str) -> String {
    if route.starts_with('^') && !route.contains('|') {
        format!("~{route}")
    } else {
        format!("~.*(?:{route})")
    }
}

/// One rule as Kong sees it.
struct KongRule<'a> {
    /// The part its key reads: what the plan tells rules keyed alike by (an
    /// `ip` and an `xff` rule both become `limit_by: ip`, but Kong reads one
    /// address or the other, set where it runs).
    part: ClientPart,
    by: LimitBy,
    limits: Limits,
    notes: Vec<String>,
    method: Option<String>,
    route: Option<&'a str>,
}

fn kong_rule(rule: &CheckedRule) -> Result<KongRule<'_>, ExportError> {
    let shape = Shape::of(rule)?;
    let parts = client_parts(rule)?;
    let (by, by_note) = limit_by(&parts).map_err(|message| ExportError::Unsupported {
        target: "kong",
        rule: rule.name.clone(),
        message,
    })?;
    if let Some(message) = rule.method.as_deref().and_then(method_refused) {
        return Err(ExportError::Unsupported {
            target: "kong",
            rule: rule.name.clone(),
            message,
        });
    }
    let limits = limits(&shape);
    let mut notes = vec![describe(rule), format!("  {}.", shape.capacity_note)];
    let list: Vec<String> = limits
        .iter()
        .map(|(&i, n)| format!("{n} per {}", PERIODS[i].0))
        .collect();
    notes.push(format!(
        "  Most it admits per Kong window: {}.",
        list.join(", ")
    ));
    if !by_note.is_empty() {
        notes.push(by_note.to_string());
    }
    Ok(KongRule {
        part: parts[0].clone(),
        by,
        limits,
        notes,
        method: rule.method.clone(),
        route: route(rule)?,
    })
}

/// The route of `plugin` (a rule's, which has a method or route): its
/// plugin takes the smallest limits of the rules the plan merges into it.
fn kong_route(
    plugin: &Plugin,
    plan: &Plan,
    each: &[KongRule],
    rules: &[CheckedRule],
    ids: &[String],
) -> Map {
    let i = plugin.route_of.expect("a route's plugin");
    let rule = &each[i];
    let merged = merged_limits(plugin, each);
    let mut route = Map::new();
    route.comments(&rule.notes);
    if plugin.merged.len() > 1 {
        route.comment(format!(
            "This route's plugin takes the smallest limits of rules {} (Kong runs one per request).",
            names(rules, &plugin.merged)
        ));
    }
    let sides = sides(each);
    if let Some(j) = plan.taken_first(&sides, i) {
        // Listed first, a narrower route comes first among those with as
        // many match fields (a method or none); the same route is either's.
        let narrower = sides[j].route != sides[i].route;
        let reorder = match narrower && sides[j].method.is_some() == sides[i].method.is_some() {
            true => format!(
                " List rule `{}` before `{}` in the policy for Kong to take this route first.",
                rules[i].name, rules[j].name
            ),
            false => String::new(),
        };
        route.comment(format!(
            "NOT ENFORCED: Kong takes the route of rule `{}` first for every request this route matches.{reorder}",
            rules[j].name
        ));
    }
    let left_out = plan.left_out(plugin, &sides);
    if !left_out.is_empty() {
        route.comment(format!(
            "Kong runs this plugin alone on the requests this route takes: {} (keyed otherwise) {} not limit them.",
            names(rules, &left_out),
            if left_out.len() == 1 { "does" } else { "do" }
        ));
    }
    let path = rule.route.map(regex_path).unwrap_or_else(|| "~/".into());
    route
        .set("name", string(format!("rl-{}", ids[i])))
        .set("paths", Value::FlowSeq(vec![string(path)]));
    if let Some(m) = &rule.method {
        route.set("methods", Value::FlowSeq(vec![string(m)]));
    }
    if plan.routes.len() > 1 {
        route.set("regex_priority", plain(plan.regex_priority(i)));
    }
    // `rl-ID-route`, unless a rule `ID-route` without a route has that
    // instance name (the global plugin is `rl-ID`).
    let instance = free_name(&format!("rl-{}-route", ids[i]), '-', |name| {
        ids.iter().any(|id| format!("rl-{id}") == name)
    });
    let mut plugins = Seq::new();
    plugins.push(plugin_entry(&instance, &rule.by, &merged));
    route.set("plugins", plugins);
    route
}

/// The limits of `plugin`: the smallest of its rules' per period.
fn merged_limits(plugin: &Plugin, each: &[KongRule]) -> Limits {
    merge(
        &(plugin.merged.iter())
            .map(|&j| each[j].limits.clone())
            .collect::<Vec<_>>(),
    )
}

/// What the plan needs of each rule.
fn sides(each: &[KongRule]) -> Vec<RuleSide<ClientPart>> {
    (each.iter())
        .map(|r| RuleSide {
            key: r.part.clone(),
            method: r.method.clone(),
            route: r.route.map(str::to_string),
        })
        .collect()
}

/// The names of `rules` at `indices`, in backquotes, joined.
fn names(rules: &[CheckedRule], indices: &[usize]) -> String {
    let quoted: Vec<String> = indices
        .iter()
        .map(|&i| format!("`{}`", rules[i].name))
        .collect();
    quoted.join(", ")
}

/// The global plugin, with its rules' notes and what it leaves out.
fn global_plugin(
    plugin: &Plugin,
    plan: &Plan,
    each: &[KongRule],
    rules: &[CheckedRule],
    ids: &[String],
) -> Seq {
    let mut global = Seq::new();
    for &j in &plugin.merged {
        global.comments(&each[j].notes);
    }
    if plugin.merged.len() > 1 {
        global.comment(format!(
            "Kong holds one global rate-limiting plugin: it takes the smallest limits of rules {}.",
            names(rules, &plugin.merged)
        ));
    }
    for &j in &plan.not_global {
        global.comments(&each[j].notes).comment(format!(
            "NOT ENFORCED on requests no route takes: Kong holds one global rate-limiting plugin, keyed as rule `{}`; rule `{}` limits only the routes of rules keyed alike.",
            rules[plugin.merged[0]].name, rules[j].name
        ));
    }
    let merged = merged_limits(plugin, each);
    let first = plugin.merged[0];
    global.push(plugin_entry(
        &format!("rl-{}", ids[first]),
        &each[first].by,
        &merged,
    ));
    global
}

impl Exporter for Kong {
    fn target(&self) -> &'static str {
        "kong"
    }

    /// The declarative configuration of `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        if opts.dry_run {
            return Err(ExportError::Target {
                target: "kong",
                message:
                    "Kong's rate-limiting plugin has no dry-run mode; export without --dry-run"
                        .into(),
            });
        }
        let ids: Vec<String> = identifiers(rules).iter().map(|id| dashed(id)).collect();
        let each = rules.iter().map(kong_rule).collect::<Result<Vec<_>, _>>()?;
        let plan = Plan::of(&sides(&each));
        if plan.routes.len() as u64 >= kong_exempt::REGEX_PRIORITY {
            return Err(ExportError::Target {
                target: "kong",
                message: format!(
                    "{} rules with a route or method: their routes' regex_priority would reach the exemptions' ({}); export at most {} of them",
                    plan.routes.len(),
                    kong_exempt::REGEX_PRIORITY,
                    kong_exempt::REGEX_PRIORITY - 1
                ),
            });
        }
        let global = match &plan.global {
            Some(plugin) => global_plugin(plugin, &plan, &each, rules, &ids),
            None => Seq::new(),
        };
        let mut routes = Seq::new();
        for route in kong_exempt::routes(exemptions, rules)? {
            routes.push(route);
        }
        // In the policy's order (Kong's own follows from regex_priority).
        let mut routed: Vec<&Plugin> = plan.routes.iter().collect();
        routed.sort_by_key(|p| p.route_of);
        for plugin in routed {
            routes.push(kong_route(plugin, &plan, &each, rules, &ids));
        }
        let mut doc = Map::new();
        doc.set("_format_version", string("3.0"));
        if !global.is_empty() {
            doc.set("plugins", global);
        }
        if !routes.is_empty() {
            let mut service = Map::new();
            service
                .set("name", plain("backend"))
                .set("url", string("http://backend.invalid"))
                .note("your upstream")
                .set("routes", routes);
            let mut services = Seq::new();
            services.push(service);
            doc.set("services", services);
        }
        let first = format!(
            "rlctl export --target kong: {} for the rate-limiting plugin (decK).",
            counted(rules.len(), "rule")
        );
        let head = conf::head(
            &[
                &first,
                "Kong OSS counts fixed windows: each limit is the most the rule can admit in one",
                "such window, so given the same requests admitted so far Kong admits every request",
                "the policy admits, but it can let a client send a window's worth at once (and",
                "what it admits so can reject a later request the policy admits). policy: local",
                "counts per Kong node.",
                "Kong runs one rate-limiting plugin per request (the route's, else the global one)",
                "and counts per plugin; where rules' routes overlap, it takes the one with a",
                "method, then the higher regex_priority (the rule listed first). These routes",
                "must be the ones that take their requests: a route of yours with more match",
                "fields (hosts, methods, headers) comes first, and its plugins, else the global",
                "one, run there.",
            ],
            &[
                "Response headers describing each rule (Kong also sends RateLimit-* and",
                "X-RateLimit-Limit-<period> itself, as hide_client_headers is false):",
            ],
            rules,
        );
        Ok(comment_block("# ", &head) + &doc.render())
    }
}

#[cfg(test)]
mod tests;
