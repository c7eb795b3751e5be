//! Kong: the OSS `rate-limiting` plugin, as decK declarative YAML.
//!
//! Kong OSS counts requests in fixed, epoch-aligned windows (second, minute,
//! hour, day). Each limit set here is the most the rule can admit in one such
//! window ([`Shape::most_in_aligned_window`]), so Kong never rejects a request
//! the policy admits; a window algorithm whose W is a Kong period converts
//! exactly. Periods within a factor 60 of W are set: the short ones bound
//! bursts, the long ones bound the average.
//!
//! Kong runs one rate-limiting plugin per request (the most specific), and
//! counts per route: a rule with a route or method gets a route whose plugin
//! takes, per period, the smallest limit of every rule that applies there with
//! the same key; rules for every request become a global plugin.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, comment, comment_block,
    dashed, describe, header_advice, identifiers, method, quoted, route,
};
use crate::policy::CheckedRule;

/// The Kong exporter.
pub struct Kong;

/// Kong's fixed windows: config field and length in seconds.
pub const PERIODS: [(&str, u64); 4] = [
    ("second", 1),
    ("minute", 60),
    ("hour", 3_600),
    ("day", 86_400),
];

/// Per-period limits: index into [`PERIODS`] → requests.
pub type Limits = BTreeMap<usize, u64>;

/// The limits for one rule: every Kong period within a factor 60 of W.
pub fn limits(shape: &Shape) -> Limits {
    let w = u64::from(shape.limit.window.secs());
    PERIODS
        .iter()
        .enumerate()
        .filter(|(_, (_, p))| p.saturating_mul(60) >= w && *p <= w.saturating_mul(60))
        .map(|(i, (_, p))| (i, shape.most_in_aligned_window(*p)))
        .collect()
}

/// Several rules' limits on one route: the smallest per period, then raised
/// where needed so longer periods never allow less than shorter ones (Kong
/// requires it; raising a limit stays safe).
pub fn merge(all: &[Limits]) -> Limits {
    let mut merged = Limits::new();
    for limits in all {
        for (&i, &n) in limits {
            merged
                .entry(i)
                .and_modify(|m: &mut u64| *m = (*m).min(n))
                .or_insert(n);
        }
    }
    let mut floor = 0;
    for n in merged.values_mut() {
        *n = (*n).max(floor);
        floor = *n;
    }
    merged
}

/// `limit_by` settings for a key and a note, or why Kong cannot key on it.
fn limit_by(parts: &[ClientPart]) -> Result<(String, &'static str), String> {
    let [part] = parts else {
        return Err(
            "Kong limits by one thing (ip, consumer, header...); use a single-part key".into(),
        );
    };
    Ok(match part {
        ClientPart::Address => ("limit_by: ip".into(), ""),
        ClientPart::ForwardedFor => (
            "limit_by: ip".into(),
            "  ip: set Kong's trusted_ips, real_ip_header X-Forwarded-For and real_ip_recursive on.",
        ),
        ClientPart::User => (
            "limit_by: consumer".into(),
            "  consumer: needs an auth plugin; Kong limits requests without a consumer by ip.",
        ),
        ClientPart::Header(h) => (
            format!("limit_by: header\n      header_name: {}", quoted(h)),
            "  header: Kong limits requests without the header by ip.",
        ),
        other => {
            return Err(format!(
                "Kong's rate-limiting cannot limit by {other}; use ip, xff, user or a header"
            ));
        }
    })
}

/// The plugin entry at `indent` spaces.
fn plugin(indent: &str, name: &str, by: &str, limits: &Limits) -> String {
    let mut out = format!(
        "{indent}- name: rate-limiting\n{indent}  instance_name: {}\n{indent}  config:\n",
        quoted(name)
    );
    for (&i, n) in limits {
        let _ = writeln!(out, "{indent}    {}: {n}", PERIODS[i].0);
    }
    for line in by.lines() {
        let _ = writeln!(out, "{indent}    {}", line.trim_start());
    }
    let _ = write!(
        out,
        "{indent}    policy: local\n{indent}    fault_tolerant: true\n{indent}    hide_client_headers: false\n"
    );
    out
}

/// A Kong regex path with the policy's search semantics (Kong anchors at the start).
pub fn regex_path(route: &str) -> String {
    if route.starts_with('^') && !route.contains('|') {
        format!("~{route}")
    } else {
        format!("~.*(?:{route})")
    }
}

impl Exporter for Kong {
    fn target(&self) -> &'static str {
        "kong"
    }

    fn render(&self, rules: &[CheckedRule], opts: &ExportOptions) -> Result<String, ExportError> {
        if opts.dry_run {
            return Err(ExportError::Target {
                target: "kong",
                message:
                    "Kong's rate-limiting plugin has no dry-run mode; export without --dry-run"
                        .into(),
            });
        }
        let ids: Vec<String> = identifiers(rules).iter().map(|id| dashed(id)).collect();
        let mut each = Vec::new();
        for rule in rules {
            let shape = Shape::of(rule)?;
            let (by, by_note) =
                limit_by(&client_parts(rule)?).map_err(|message| ExportError::Unsupported {
                    target: "kong",
                    rule: rule.name.clone(),
                    message,
                })?;
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
            each.push((shape, by, limits, notes, method(rule)?, route(rule)?));
        }
        let mut global = String::new();
        let mut routes = String::new();
        for (i, (_, by, limits, notes, m, r)) in each.iter().enumerate() {
            if m.is_none() && r.is_none() {
                global.push_str(&comment_block("# ", notes));
                global.push_str(&plugin("", &format!("rl-{}", ids[i]), by, limits));
                continue;
            }
            let applies: Vec<usize> = (0..each.len())
                .filter(|&j| {
                    j == i
                        || (&each[j].1 == by
                            && each[j].5.is_none()
                            && (each[j].4.is_none() || &each[j].4 == m))
                })
                .collect();
            let merged = merge(
                &applies
                    .iter()
                    .map(|&j| each[j].2.clone())
                    .collect::<Vec<_>>(),
            );
            routes.push_str(&comment_block("  # ", notes));
            if applies.len() > 1 {
                let names: Vec<&str> = applies.iter().map(|&j| rules[j].name.as_str()).collect();
                let _ = writeln!(
                    routes,
                    "  # This route's plugin takes the smallest limits of rules {} (Kong runs one per route).",
                    comment(&names.join(", "))
                );
            }
            let path = r.map(regex_path).unwrap_or_else(|| "/".into());
            let _ = write!(
                routes,
                "  - name: {}\n    paths: [{}]\n",
                quoted(&format!("rl-{}", ids[i])),
                quoted(&path)
            );
            if let Some(m) = m {
                let _ = writeln!(routes, "    methods: [{}]", quoted(m));
            }
            routes.push_str("    plugins:\n");
            routes.push_str(&plugin(
                "    ",
                &format!("rl-{}-route", ids[i]),
                by,
                &merged,
            ));
        }
        let mut head = vec![
            format!(
                "rlctl export --target kong: {} rules for the rate-limiting plugin (decK).",
                rules.len()
            ),
            "Kong OSS counts fixed windows: each limit is the most the rule can admit in one"
                .into(),
            "such window, so Kong never rejects a request the policy admits, but it can let a"
                .into(),
            "client send a window's worth at once. policy: local counts per Kong node.".into(),
            "Kong runs one rate-limiting plugin per request (the route's, else the global one)"
                .into(),
            "and counts per route; where routes overlap, Kong picks one.".into(),
            String::new(),
            "Response headers describing each rule (Kong also sends RateLimit-* and".into(),
            "X-RateLimit-Limit-<period> itself, as hide_client_headers is false):".into(),
        ];
        head.extend(
            rules
                .iter()
                .map(|r| format!("  {}: {}", r.name, header_advice(r))),
        );
        let mut out = comment_block("# ", &head);
        out.push_str("_format_version: \"3.0\"\n");
        if !global.is_empty() {
            out.push_str("plugins:\n");
            out.push_str(&global);
        }
        if !routes.is_empty() {
            out.push_str("services:\n- name: backend\n  url: \"http://backend.invalid\"  # your upstream\n  routes:\n");
            out.push_str(&routes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;

    fn shape(text: &str) -> Shape {
        Shape::of(&Policy::parse(text, "p").unwrap()[0]).unwrap()
    }

    #[test]
    fn token_bucket_limits_per_window_are_capacity_plus_refill() {
        let s = shape("[[rule]]\nname='g'\nlimit='40/1m'\nburst=7");
        // second: 7 + ⌈40/60⌉ − 1; minute: 7 + 40 − 1; hour: 7 + 2400 − 1.
        assert_eq!(limits(&s), Limits::from([(0, 7), (1, 46), (2, 2406)]));
    }

    #[test]
    fn fixed_windows_on_kong_periods_are_exact() {
        let s = shape("[[rule]]\nname='g'\nlimit='100/1m'\nalgorithm='fixed-window'");
        assert_eq!(limits(&s), Limits::from([(0, 100), (1, 100), (2, 6000)]));
        let s = shape("[[rule]]\nname='g'\nlimit='5000/1h'\nalgorithm='sliding-log'");
        assert_eq!(
            limits(&s),
            Limits::from([(1, 5000), (2, 5000), (3, 120_000)])
        );
    }

    #[test]
    fn merging_takes_the_smallest_and_keeps_periods_ordered() {
        let a = Limits::from([(0, 7), (1, 46), (2, 2406)]);
        let b = Limits::from([(0, 20), (1, 30)]);
        assert_eq!(merge(&[a, b]), Limits::from([(0, 7), (1, 30), (2, 2406)]));
        assert_eq!(
            merge(&[Limits::from([(0, 50), (1, 10)])]),
            Limits::from([(0, 50), (1, 50)])
        );
    }

    #[test]
    fn regex_paths_keep_search_semantics() {
        assert_eq!(regex_path("^/api/search$"), "~^/api/search$");
        assert_eq!(regex_path("/search"), "~.*(?:/search)");
        assert_eq!(regex_path("^/a|^/b"), "~.*(?:^/a|^/b)");
    }
}
