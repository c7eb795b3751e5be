//! nginx: one `limit_req_zone` and one `limit_req` per rule, all at `http {}`
//! level, so the output passes `nginx -t` pasted into an `http {}` block.
//!
//! Rules scoped to a method or route do not use `location` blocks: nginx picks
//! one location per request, so overlapping rules would be lost, and a
//! location with its own `limit_req` silently drops the inherited ones.
//! Instead a `map` chain leaves the rule's key empty for other requests, and
//! nginx does not count requests whose key is empty. Every rule therefore
//! applies to exactly the requests the policy says, wherever they are served.
//!
//! Conversions: rate to whole r/s or r/m (rounded up when inexact); nginx
//! admits burst + 1 at once from an empty state, so `burst = C − 1`; the zone
//! holds ~128 bytes per client on 64-bit (256 with text keys), sized from
//! `--clients`, at least 1m.

use std::fmt::Write;

use super::conf::{self, Conf};
use super::nginx_exempt;
use super::{
    ClientPart, ExportError, ExportOptions, Exporter, Shape, byte_route, client_parts, describe,
    identifiers, route,
};
use crate::policy::{CheckedRule, Exemption};
use crate::simulate::gateway;
use crate::text::counted;
use crate::units::Limit;

/// The nginx exporter.
pub struct Nginx;

/// The variable holding the first X-Forwarded-For address (else `$remote_addr`).
const XFF_VARIABLE: &str = "$rlctl_xff";

/// nginx blocks indent by four spaces.
const INDENT: &str = "    ";

/// The number of map variables above which the header says how to size
/// nginx's variables hash: 37 of 41 characters (20 rules) warned under nginx
/// 1.22's defaults, 33 did not.
const MANY_MAPS: usize = 30;

/// The header lines on sizing nginx's variables hash for `maps` map
/// variables, when there are many: a bucket of 128 bytes holds their names
/// (up to 46 characters), and four slots a variable found room for every
/// policy tried against nginx 1.22 (20 to 3,000 rules, names of 16 and 41
/// characters), where the defaults warned "could not build optimal
/// variables_hash" (a warning: nginx still starts).
fn variables_hash_advice(maps: usize) -> Vec<String> {
    if maps <= MANY_MAPS {
        return Vec::new();
    }
    let max_size = (4 * maps).next_power_of_two().max(1024);
    vec![
        format!(
            "{maps} map variables: if `nginx -t` warns \"could not build optimal variables_hash\","
        ),
        format!(
            "add `variables_hash_max_size {max_size};` and `variables_hash_bucket_size 128;` to http {{}}."
        ),
    ]
}

/// An nginx `rate=` value and how it follows from the limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NginxRate {
    /// `10r/s` or `40r/m`.
    pub text: String,
    /// The conversion, for a comment.
    pub note: String,
}

/// nginx takes whole requests per second or per minute: the exact one when it
/// exists (r/s preferred), else r/m rounded up (never slower than the policy).
pub fn rate(limit: Limit) -> NginxRate {
    let (l, w) = (u128::from(limit.requests), u128::from(limit.window.secs()));
    let exact = (l * 60) % w == 0;
    let per_minute = (l * 60).div_ceil(w);
    let text = if exact && per_minute % 60 == 0 {
        format!("{}r/s", per_minute / 60)
    } else {
        format!("{per_minute}r/m")
    };
    let mut note = if exact {
        format!("rate {limit} = {text} exactly")
    } else {
        format!(
            "rate {limit} is {:.2}r/m; nginx takes whole r/s or r/m, so {text} (rounded up)",
            (l * 60) as f64 / w as f64
        )
    };
    if !text.ends_with("r/s") && (per_minute * 1000) % 60 != 0 {
        let _ = write!(
            note,
            "; nginx keeps it as {} milli-requests/s (truncated)",
            per_minute * 1000 / 60
        );
    }
    NginxRate { text, note }
}

/// nginx's `burst=`: it admits burst + 1 at once from an empty state.
pub fn burst(capacity: u64) -> u64 {
    capacity.saturating_sub(1)
}

/// Bytes nginx needs per client state: 128 for address keys (64-bit), 256 when
/// a key holds text (a user, a header) of up to ~180 bytes.
pub fn state_bytes(parts: &[ClientPart]) -> u64 {
    let short = parts
        .iter()
        .all(|p| matches!(p, ClientPart::Address | ClientPart::ForwardedFor));
    if short { 128 } else { 256 }
}

/// Zone size in megabytes for `clients` states of `bytes` each, at least 1.
pub fn zone_megabytes(clients: u64, bytes: u64) -> u64 {
    clients.saturating_mul(bytes).div_ceil(1 << 20).max(1)
}

/// A string in nginx double quotes: `\` and `"` escaped, as nginx's parser
/// removes one level of backslashes.
pub fn quote(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The nginx expression of one key part.
fn part_expr(part: &ClientPart) -> String {
    match part {
        ClientPart::Address => "$binary_remote_addr".into(),
        ClientPart::ForwardedFor => XFF_VARIABLE.into(),
        ClientPart::User => "$remote_user".into(),
        ClientPart::Header(h) => format!("$http_{}", h.to_ascii_lowercase().replace('-', "_")),
        ClientPart::Cookie(c) => format!("$cookie_{c}"),
        ClientPart::QueryArg(a) => format!("$arg_{a}"),
        ClientPart::Variable(v) => format!("${v}"),
    }
}

/// `map SOURCE VAR { PATTERN VALUE; default DEFAULT; }` (PATTERN already quoted).
fn write_map(conf: &mut Conf, source: &str, var: &str, pattern: &str, value: &str, default: &str) {
    conf.block(&format!("map {source} {var}"), |c| {
        c.line(format!("{pattern} {value};"))
            .line(format!("default {default};"));
    });
}

/// The map defining [`XFF_VARIABLE`], with its warning.
fn write_xff_map(conf: &mut Conf) {
    conf.comments(&[
        "The first X-Forwarded-For address, else the connecting address (\"xff\" keys).".into(),
        "Anyone can send X-Forwarded-For: use this only behind a proxy that sets it. With".into(),
        "the realip module (set_real_ip_from <proxy>; real_ip_header X-Forwarded-For;)".into(),
        "$binary_remote_addr is the client instead, and safer.".into(),
    ]);
    // The first token, its port left out as rlctl reads it (`[2001:db8::1]:443`
    // and `[2001:db8::1]` → `2001:db8::1`, `192.0.2.7:5678` → `192.0.2.7`):
    // the first regex that matches wins.
    conf.block(&format!("map $http_x_forwarded_for {XFF_VARIABLE}"), |c| {
        c.line(r#""~^[\s,]*\[(?<rlctl_xff_first>[^\]\s,]*)\]" $rlctl_xff_first;"#)
            .line(r#""~^[\s,]*(?<rlctl_xff_first>[^\s,:]+):[0-9]+(?:[\s,]|$)" $rlctl_xff_first;"#)
            .line(r#""~^[\s,]*(?<rlctl_xff_first>[^\s,]+)" $rlctl_xff_first;"#)
            .line("default $remote_addr;");
    });
}

/// One rule's zone: its comment, the maps that empty its key for requests
/// outside its method or route, and the `limit_req_zone` / `limit_req` pair.
fn write_zone(
    conf: &mut Conf,
    rule: &CheckedRule,
    id: &str,
    opts: &ExportOptions,
    exemptions: bool,
) -> Result<bool, ExportError> {
    let shape = Shape::of(rule)?;
    if gateway::nginx::Params::of(&rule.spec).bucket().is_none() {
        // nginx keeps rate and burst in milli-requests: past that, `nginx -t`
        // refuses the number or the module's arithmetic overflows.
        return Err(ExportError::Unsupported {
            target: "nginx",
            rule: rule.name.clone(),
            message: format!(
                "its limit {} needs a rate or burst beyond nginx's milli-request counters",
                rule.spec.limit
            ),
        });
    }
    let parts = client_parts(rule)?;
    let joined: Vec<String> = parts.iter().map(part_expr).collect();
    let key = joined.join("+");
    let rate = rate(rule.spec.limit);
    let burst = burst(shape.capacity);
    let bytes = state_bytes(&parts);
    let megabytes = zone_megabytes(opts.clients, bytes);
    let mut notes = vec![
        describe(rule),
        format!("  {}.", rate.note),
        format!(
            "  burst: {}; nginx admits burst+1 at once from an empty state, so burst={burst}.",
            shape.capacity_note
        ),
        format!(
            "  zone: {} clients x {bytes} bytes per state = {megabytes}m (set --clients to resize).",
            opts.clients
        ),
    ];
    if parts.len() > 1 {
        notes.push(
            "  The key joins its parts with +, as rlctl names clients; it is empty only when all are."
                .into(),
        );
    }
    let method = rule.method.clone();
    let route = byte_route("nginx", &rule.name, route(rule)?)?;
    if route.is_some() {
        notes.push(
            "  The route is matched against $uri: the decoded, normalised path without its query string (PCRE syntax).".into(),
        );
    }
    if exemptions {
        notes.push("  Exempt requests ($rlctl_exempt = 1) leave the key empty.".into());
    }
    conf.blank().comments(&notes);
    let key = match parts.len() {
        1 => key,
        n => {
            // Only separators: every part empty, so no key.
            let var = format!("$rl_{id}_client");
            let separators = quote(&"+".repeat(n - 1));
            write_map(conf, &quote(&key), &var, &separators, "\"\"", &quote(&key));
            var
        }
    };
    let mut zone_key = if exemptions {
        nginx_exempt::open_key(conf, id, &key)
    } else {
        key
    };
    if let Some(m) = &method {
        let var = format!("$rl_{id}_method");
        let pattern = quote(&format!("~*^{}$", regex::escape(m)));
        write_map(conf, "$request_method", &var, &pattern, &zone_key, "\"\"");
        zone_key = var;
    }
    if let Some(r) = route {
        let var = format!("$rl_{id}_key");
        write_map(
            conf,
            "$uri",
            &var,
            &quote(&format!("~{r}")),
            &zone_key,
            "\"\"",
        );
        zone_key = var;
    }
    conf.line(format!(
        "limit_req_zone {zone_key} zone=rl_{id}:{megabytes}m rate={};",
        rate.text
    ));
    // nginx refuses `burst=0`; leaving it out means 0.
    let burst_arg = if burst > 0 {
        format!(" burst={burst}")
    } else {
        String::new()
    };
    conf.line(format!("limit_req zone=rl_{id}{burst_arg} nodelay;"));
    Ok(parts.contains(&ClientPart::ForwardedFor))
}

impl Exporter for Nginx {
    fn target(&self) -> &'static str {
        "nginx"
    }

    /// The configuration of `rules` with `exemptions`.
    fn render_with(
        &self,
        rules: &[CheckedRule],
        exemptions: &[Exemption],
        opts: &ExportOptions,
    ) -> Result<String, ExportError> {
        let mut zones = Conf::new(INDENT);
        let mut uses_xff = false;
        if !exemptions.is_empty() {
            uses_xff |= nginx_exempt::write(&mut zones, exemptions, quote, XFF_VARIABLE)?;
        }
        for (rule, id) in rules.iter().zip(identifiers(rules)) {
            uses_xff |= write_zone(&mut zones, rule, &id, opts, !exemptions.is_empty())?;
        }
        let first = format!(
            "rlctl export --target nginx: {}. Paste into the http {{}} block.",
            counted(rules.len(), "rule")
        );
        let mut lines = vec![
            first.as_str(),
            "limit_req at http level applies in every server and location, except where a",
            "level declares a limit_req of its own (nginx then inherits none): copy the",
            "limit_req lines there. Rules for a method or route leave their key empty for",
            "other requests (nginx does not count empty keys): every rule applies to exactly",
            "the requests the policy says, wherever they are served.",
            "Safe conversions: where nginx cannot express a rule exactly, the setting is never",
            "stricter than the policy: given the same requests admitted so far, it admits",
            "every request the policy admits (it may admit a little more), except where nginx",
            "truncates a rate to whole milli-requests/s (said per rule). Once it admits one",
            "the policy rejects, the capacity spent can reject a later one the policy admits:",
            "`rlctl export --check LOG` lists each difference with its reason.",
        ];
        // The zones' maps, and the X-Forwarded-For one written before them.
        let maps = (zones.text().lines())
            .filter(|l| l.starts_with("map "))
            .count()
            + usize::from(uses_xff);
        let advice = variables_hash_advice(maps);
        lines.extend(advice.iter().map(String::as_str));
        let head = conf::head(
            &lines,
            &["Response headers describing each rule (add_header NAME \"VALUE\" always;):"],
            rules,
        );
        let mut out = Conf::new(INDENT);
        out.comments(&head).blank().line("limit_req_status 429;");
        if opts.dry_run {
            out.comment(
            "Dry run: requests over a limit are served; $limit_req_status logs REJECTED_DRY_RUN.",
        )
        .line("limit_req_dry_run on;");
        }
        if uses_xff {
            write_xff_map(out.blank());
        }
        out.append(&zones);
        Ok(out.finish())
    }
}

#[cfg(test)]
mod tests;
