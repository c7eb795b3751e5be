//! HAProxy: stick tables counting each client's admitted requests, and
//! `http-request deny` rules on their rate.
//!
//! Rules sharing a key and a window share one table (a backend section) and one
//! tracked counter (`track-scN`; HAProxy tracks three at once by default), each
//! rule with its own general-purpose counter (`gpc_rate(n,W)`). All deny rules
//! run first and the counters are incremented only for requests that pass, so
//! (as in the policy) rejected requests do not count.
//!
//! HAProxy's rate is a sliding-window estimate over W (current window plus the
//! previous one weighted by its remaining share), with no burst. For any
//! traffic the policy admits, that estimate stays at most C + L (see the module
//! doc of [`super`] for C), so the deny threshold is `gt C + L − 1` on the
//! estimate of the requests before: never stricter than the policy, at the
//! price of admitting more: a new client's first C + L at once, and, as the
//! estimate weighs the previous period by what is left of it, up to about
//! twice that in a span of W that straddles two periods.

use super::conf::{self, Conf};
use super::haproxy_exempt::{self, UNLESS_EXEMPT};
use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, byte_route, client_parts, describe,
    identifiers, route,
};
use crate::policy::{CheckedRule, Exemption};
use crate::simulate::gateway::haproxy::STRING_KEY_BYTES;
use crate::text::counted;

/// The HAProxy exporter.
pub struct Haproxy;

/// HAProxy sections indent their lines by four spaces.
const INDENT: &str = "    ";

/// Counters HAProxy tracks at once unless built with a larger MAX_SESS_STKCTR.
pub const MAX_TRACKED: usize = 3;

/// General-purpose counters one stick table stores (`gpc_rate(n, W)`: HAProxy
/// 2.6 refuses n above 100, "array size is out of allowed range (1-100)").
const MAX_COUNTERS: usize = 100;

/// The longest timer HAProxy takes, in seconds (2^31 − 1 ms; `expire` is
/// refused above it: "timer overflow").
const MAX_TIMER_SECS: u64 = 2_147_483;

/// How long a table keeps an entry of `window` seconds: two windows, as the
/// rate reads the period before the current one too.
fn expire_secs(window: u32) -> u64 {
    2 * u64::from(window)
}

/// The deny threshold: deny when the estimate before this request exceeds it.
pub fn threshold(shape: &Shape) -> u64 {
    shape
        .capacity
        .saturating_add(shape.limit.requests)
        .saturating_sub(1)
}

/// A string in HAProxy strong (single) quotes; a single quote is written `'\''`.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// An ACL's pattern, quoted, after `--` when it starts with `-`: HAProxy
/// reads such a pattern as a flag (`-i`, `-M`) otherwise, quotes or not
/// (section 7.1 of its configuration manual).
pub fn pattern(text: &str) -> String {
    match text.starts_with('-') {
        true => format!("-- {}", quote(text)),
        false => quote(text),
    }
}

/// The `method` ACL of `method` (a token: quoted only when [`pattern`] must).
pub fn method_acl(method: &str) -> String {
    match method.starts_with('-') {
        true => format!("{{ method {} }}", pattern(method)),
        false => format!("{{ method {method} }}"),
    }
}

/// The sample expression of one key part.
pub(super) fn part_expr(part: &ClientPart) -> Option<String> {
    Some(match part {
        ClientPart::Address => "src".into(),
        ClientPart::ForwardedFor => "var(txn.rlctl_xff)".into(),
        ClientPart::User => "http_auth_user".into(),
        ClientPart::Header(h) => format!("req.fhdr({})", h.to_ascii_lowercase()),
        ClientPart::Cookie(c) => format!("req.cook({c})"),
        ClientPart::QueryArg(a) => format!("url_param({a})"),
        ClientPart::Variable(_) => return None,
    })
}

/// A table shared by the rules with one key and one window.
struct Table {
    parts: Vec<ClientPart>,
    window: u32,
    /// Indices of its rules; a rule's position here is its counter index.
    rules: Vec<usize>,
}

/// The rules grouped into tables (at most [`MAX_TRACKED`]), and each rule's shape.
fn tables(rules: &[CheckedRule]) -> Result<(Vec<Table>, Vec<Shape>), ExportError> {
    let mut tables: Vec<Table> = Vec::new();
    let mut shapes = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        shapes.push(Shape::of(rule)?);
        let parts = client_parts(rule)?;
        if parts.iter().any(|p| part_expr(p).is_none()) {
            return Err(ExportError::Unsupported {
                target: "haproxy",
                rule: rule.name.clone(),
                message: "its key names an nginx variable HAProxy does not have".into(),
            });
        }
        let window = rule.spec.limit.window.secs();
        match tables
            .iter_mut()
            .find(|t| t.parts == parts && t.window == window)
        {
            Some(t) => t.rules.push(i),
            None => tables.push(Table {
                parts,
                window,
                rules: vec![i],
            }),
        }
    }
    if let Some(t) = tables.iter().find(|t| t.rules.len() > MAX_COUNTERS) {
        return Err(ExportError::Target {
            target: "haproxy",
            message: format!(
                "{} rules share key {} and window {}s, and a stick table holds at most {MAX_COUNTERS} general-purpose counters (gpc_rate's array): give some of them another window",
                t.rules.len(),
                rules[t.rules[0]].key.text,
                t.window
            ),
        });
    }
    if let Some(rule) = rules
        .iter()
        .find(|r| expire_secs(r.spec.limit.window.secs()) > MAX_TIMER_SECS)
    {
        return Err(ExportError::Unsupported {
            target: "haproxy",
            rule: rule.name.clone(),
            message: format!(
                "its window of {}s needs entries kept twice as long, and HAProxy's timers hold at most {MAX_TIMER_SECS}s (about 24.8 days): give it a window of at most {}s",
                rule.spec.limit.window.secs(),
                MAX_TIMER_SECS / 2
            ),
        });
    }
    if tables.len() > MAX_TRACKED {
        return Err(ExportError::Target {
            target: "haproxy",
            message: format!(
                "the rules need {} tracked counters (one per key and window); HAProxy tracks {MAX_TRACKED} unless built with a larger MAX_SESS_STKCTR: give the rules fewer distinct keys or windows",
                tables.len()
            ),
        });
    }
    Ok((tables, shapes))
}

/// The lines of the frontend, gathered table by table and rule by rule.
#[derive(Default)]
struct Frontend {
    /// `set-var` and `track-scN` lines.
    tracks: Conf,
    /// One deny (or dry-run marker) per rule, with its comment.
    denies: Conf,
    /// One counter increment per rule.
    counts: Conf,
}

/// Table number `sc`: its backend section and the frontend line tracking it
/// (`guard`: the condition that keeps exempt requests out, or empty).
fn write_table(
    backends: &mut Conf,
    frontend: &mut Frontend,
    (sc, table, name): (usize, &Table, &str),
    rules: &[CheckedRule],
    opts: &ExportOptions,
    guard: &str,
) {
    let addresses = table.parts.len() == 1
        && matches!(
            table.parts[0],
            ClientPart::Address | ClientPart::ForwardedFor
        );
    let kind = match addresses {
        true => "ipv6".to_string(),
        false => format!("string len {STRING_KEY_BYTES}"),
    };
    let names: Vec<&str> = table
        .rules
        .iter()
        .map(|&i| rules[i].name.as_str())
        .collect();
    backends
        .blank()
        .comment(format!(
            "Counters of rules {} (key {}, window {}s); --clients sizes the table.",
            names.join(", "),
            rules[table.rules[0]].key.text,
            table.window
        ))
        .line(format!("backend {name}"))
        .nested(|c| {
            c.line(format!(
                "stick-table type {kind} size {} expire {}s store gpc_rate({},{}s)",
                opts.clients.max(1),
                expire_secs(table.window),
                table.rules.len(),
                table.window
            ));
        });
    let exprs: Vec<String> = table.parts.iter().filter_map(part_expr).collect();
    let mut key = exprs[0].clone();
    for (p, expr) in exprs.iter().enumerate().skip(1) {
        let var = format!("txn.rlctl_{sc}_{p}");
        frontend
            .tracks
            .line(format!("http-request set-var({var}) {expr}"));
        key.push_str(&format!(",concat(+,{var})"));
    }
    frontend.tracks.line(format!(
        "http-request track-sc{sc} {key} table {name}{guard}"
    ));
}

/// Rule `rule` with counter `gpc` of table `sc`: its deny and its count
/// (`guard`: the condition that keeps exempt requests out, or empty).
fn write_rule(
    frontend: &mut Frontend,
    (sc, gpc, window): (usize, usize, u32),
    rule: &CheckedRule,
    shape: &Shape,
    id: &str,
    opts: &ExportOptions,
    guard: &str,
) -> Result<(), ExportError> {
    let mut cond = String::new();
    if let Some(m) = &rule.method {
        cond.push_str(&format!(" {}", method_acl(m)));
    }
    if let Some(r) = byte_route("haproxy", &rule.name, route(rule)?)? {
        cond.push_str(&format!(" {{ path -m reg {} }}", pattern(&r)));
    }
    let limit = threshold(shape);
    frontend.denies.comments(&[
        describe(rule),
        format!(
            "  {}; no burst in HAProxy, so deny once {} + {} - 1 = {limit} earlier requests count in {window}s (up to {} at once).",
            shape.capacity_note,
            shape.capacity,
            rule.spec.limit.requests,
            limit.saturating_add(1),
        ),
    ]);
    let test = format!("{{ sc_gpc_rate({gpc},{sc}) gt {limit} }}{cond}{guard}");
    frontend.denies.line(if opts.dry_run {
        format!("http-request set-var(txn.rlctl_over_limit) str({id}) if {test}")
    } else {
        format!("http-request deny deny_status 429 if {test}")
    });
    let when = if cond.is_empty() && guard.is_empty() {
        String::new()
    } else {
        format!(" if{cond}{guard}")
    };
    frontend
        .counts
        .line(format!("http-request sc-inc-gpc({gpc},{sc}){when}"));
    Ok(())
}

impl Exporter for Haproxy {
    fn target(&self) -> &'static str {
        "haproxy"
    }

    /// The configuration of `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        let ids = identifiers(rules);
        let (tables, shapes) = tables(rules)?;
        let mut backends = Conf::new(INDENT);
        let mut frontend = Frontend::default();
        let (exempt_lines, exempt_xff) = if exemptions.is_empty() {
            (Conf::new(INDENT), false)
        } else {
            haproxy_exempt::write(exemptions, part_expr)?
        };
        let guard = if exemptions.is_empty() {
            String::new()
        } else {
            format!(" if {UNLESS_EXEMPT}")
        };
        for (sc, table) in tables.iter().enumerate() {
            let name = format!("rl_{}", ids[table.rules[0]]);
            let table_args = (sc, table, name.as_str());
            write_table(
                &mut backends,
                &mut frontend,
                table_args,
                rules,
                opts,
                &guard,
            );
            let and_guard = guard.replace(" if ", " ");
            for (gpc, &i) in table.rules.iter().enumerate() {
                let at = (sc, gpc, table.window);
                write_rule(
                    &mut frontend,
                    at,
                    &rules[i],
                    &shapes[i],
                    &ids[i],
                    opts,
                    &and_guard,
                )?;
            }
        }
        let first = format!(
            "rlctl export --target haproxy: {} as stick tables.",
            counted(rules.len(), "rule")
        );
        let head = conf::head(
            &[
                &first,
                "Add the backend sections as they are; merge the frontend's http-request lines into",
                "your HTTP frontend, in this order (after anything that sets the client address).",
                "HAProxy's rate is a sliding-window estimate with no burst: each threshold is the",
                "most that estimate can count before a request the policy admits (C + L - 1 per W,",
                "C = the rule's capacity), so given the same requests admitted so far HAProxy admits",
                "every request the policy admits, but lets a new client's first C + L through at",
                "once, and up to about twice that in a span of W across two periods (and what it",
                "admits so can reject a later request the policy admits). Counts are per HAProxy",
                "process (use peers to share tables).",
            ],
            &["Response headers describing each rule (http-response set-header NAME VALUE):"],
            rules,
        );
        let uses_xff = exempt_xff
            || tables
                .iter()
                .any(|t| t.parts.contains(&ClientPart::ForwardedFor));
        let mut out = Conf::new(INDENT);
        out.comments(&head).append(&backends).blank();
        out.line("frontend rlctl  # merge these lines into your HTTP frontend")
            .nested(|c| {
                c.line("mode http")
                    .line("bind 127.0.0.1:8080  # your bind line");
                if uses_xff {
                    c.comments(&[
                        "xff keys: the first X-Forwarded-For address, else the connection's. Anyone can".into(),
                        "send X-Forwarded-For: use this only behind a proxy that sets it.".into(),
                    ])
                    .line("http-request set-var(txn.rlctl_xff) src")
                    .line("http-request set-var(txn.rlctl_xff) req.hdr_ip(x-forwarded-for,1) if { req.hdr(x-forwarded-for) -m found }");
                }
                c.append(&exempt_lines).append(&frontend.tracks);
                if opts.dry_run {
                    c.comments(&[
                        "Dry run: nothing is denied; log %[var(txn.rlctl_over_limit)] to see which rule".into(),
                        "would have rejected a request.".into(),
                    ]);
                }
                c.append(&frontend.denies)
                    .comment("Count only the requests that passed every rule above.")
                    .append(&frontend.counts);
            });
        Ok(out.finish())
    }
}

#[cfg(test)]
mod tests;
