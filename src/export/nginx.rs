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
    ClientPart, ExportError, ExportOptions, Exporter, Shape, client_parts, describe, identifiers,
    method, route,
};
use crate::policy::{CheckedRule, Exemption};
use crate::simulate::gateway;
use crate::units::Limit;

/// The nginx exporter.
pub struct Nginx;

/// The variable holding the first X-Forwarded-For address (else `$remote_addr`).
const XFF_VARIABLE: &str = "$rlctl_xff";

/// nginx blocks indent by four spaces.
const INDENT: &str = "    ";

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
    write_map(
        conf,
        "$http_x_forwarded_for",
        XFF_VARIABLE,
        r#""~^[\s,]*(?<rlctl_xff_first>[^\s,]+)""#,
        "$rlctl_xff_first",
        "$remote_addr",
    );
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
    let key: String = parts.iter().map(part_expr).collect();
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
        notes.push("  The key concatenates its parts; it is empty only when all are.".into());
    }
    let method = method(rule)?;
    let route = route(rule)?;
    if route.is_some() {
        notes.push(
            "  The route is matched against $uri: the decoded, normalised path without its query string (PCRE syntax).".into(),
        );
    }
    if exemptions {
        notes.push("  Exempt requests ($rlctl_exempt = 1) leave the key empty.".into());
    }
    conf.blank().comments(&notes);
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
            "rlctl export --target nginx: {} rules. Paste into the http {{}} block.",
            rules.len()
        );
        let head = conf::head(
            &[
                &first,
                "limit_req at http level applies in every server and location, except where a",
                "level declares a limit_req of its own (nginx then inherits none): copy the",
                "limit_req lines there. Rules for a method or route leave their key empty for",
                "other requests (nginx does not count empty keys): every rule applies to exactly",
                "the requests the policy says, wherever they are served.",
                "Safe conversions: where nginx cannot express a rule exactly, the setting",
                "never rejects a request the policy admits (it may admit a little more).",
            ],
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
mod tests {
    use super::*;
    use crate::policy::Policy;

    fn lim(text: &str) -> Limit {
        text.parse().unwrap()
    }

    #[test]
    fn rates_pick_the_exact_unit_or_round_up() {
        assert_eq!(rate(lim("600/1m")).text, "10r/s");
        assert_eq!(rate(lim("10/s")).text, "10r/s");
        assert_eq!(rate(lim("40/1m")).text, "40r/m");
        assert_eq!(rate(lim("1/10s")).text, "6r/m");
        assert_eq!(rate(lim("7200/1h")).text, "2r/s");
        let hourly = rate(lim("5000/1h"));
        assert_eq!(hourly.text, "84r/m");
        assert!(hourly.note.contains("rounded up"), "{}", hourly.note);
        // Far below 1r/m still rounds up to the slowest rate nginx has.
        assert_eq!(rate(lim("1/1d")).text, "1r/m");
        assert!(rate(lim("40/1m")).note.contains("666 milli-requests/s"));
        assert!(!rate(lim("60/1m")).note.contains("milli"));
    }

    #[test]
    fn burst_and_zone_follow_nginx_conventions() {
        assert_eq!(burst(7), 6);
        assert_eq!(burst(1), 0);
        assert_eq!(burst(0), 0);
        assert_eq!(zone_megabytes(10_000, 128), 2);
        assert_eq!(zone_megabytes(8_192, 128), 1);
        assert_eq!(zone_megabytes(0, 128), 1);
        assert_eq!(zone_megabytes(100_000, 256), 25);
        assert_eq!(state_bytes(&[ClientPart::Address]), 128);
        assert_eq!(state_bytes(&[ClientPart::Address, ClientPart::User]), 256);
    }

    #[test]
    fn quoting_survives_nginx_unescaping() {
        assert_eq!(quote(r#"^/a\.b"c$"#), r#""^/a\\.b\"c$""#);
    }

    #[test]
    fn renders_burst_minus_one_and_scoped_keys() {
        let rules = Policy::parse(
            r#"
[[rule]]
name = "global"
limit = "40/1m"
burst = 7
[[rule]]
name = "leaky"
key = "ip+user"
limit = "10r/s"
burst = 5
algorithm = "leaky-bucket"
method = "POST"
route = '^/api/"x"$'
"#,
            "p.toml",
        )
        .unwrap();
        let out = Nginx.render(&rules, &ExportOptions::default()).unwrap();
        assert!(out.contains("limit_req_zone $binary_remote_addr zone=rl_global:2m rate=40r/m;"));
        assert!(out.contains("limit_req zone=rl_global burst=6 nodelay;"));
        // leaky-bucket bursts already follow nginx's convention: unchanged.
        assert!(out.contains("limit_req zone=rl_leaky burst=5 nodelay;"));
        assert!(out.contains("\"~*^POST$\" $binary_remote_addr$remote_user;"));
        assert!(out.contains(r#""~^/api/\"x\"$" $rl_leaky_method;"#));
        assert!(out.contains("limit_req_zone $rl_leaky_key zone=rl_leaky:3m"));
        assert!(!out.contains("limit_req_dry_run"));
        let dry = Nginx
            .render(
                &rules,
                &ExportOptions {
                    dry_run: true,
                    clients: 10,
                },
            )
            .unwrap();
        assert!(dry.contains("limit_req_dry_run on;"));
        assert!(dry.contains("zone=rl_global:1m"));
        let one = Policy::parse("[[rule]]\nname='one'\nlimit='1/s'\nburst=1", "p").unwrap();
        let out = Nginx.render(&one, &ExportOptions::default()).unwrap();
        assert!(out.contains("limit_req zone=rl_one nodelay;"), "{out}");
    }

    #[test]
    fn limits_beyond_nginx_counters_are_refused_not_written() {
        // Found by review: these were written, and `nginx -t` refused them.
        let policy = |limit: &str, algorithm: &str| {
            let text = format!("[[rule]]\nname='x'\nlimit='{limit}'\nalgorithm='{algorithm}'");
            Policy::parse(&text, "p.toml").unwrap()
        };
        for (limit, algorithm) in [
            ("18446744073709551615/1s", "sliding-log"),
            ("9223372036854775807/24h", "fixed-window"),
            ("9300000000000000/1s", "sliding-log"),
        ] {
            let refused = Nginx.render(&policy(limit, algorithm), &ExportOptions::default());
            assert!(
                matches!(
                    &refused,
                    Err(ExportError::Unsupported {
                        target: "nginx",
                        ..
                    })
                ),
                "{limit}: {refused:?}"
            );
        }
        // As `simulate --gateway nginx` models it, where it fits.
        let big = Nginx
            .render(
                &policy("1000000000000/1s", "sliding-log"),
                &ExportOptions::default(),
            )
            .unwrap();
        assert!(big.contains("rate=1000000000000r/s;"), "{big}");
    }
}
