//! HAProxy exemptions: one `http-request set-var(txn.rlctl_exempt)` line per
//! exemption, true for the requests it matches, and an ACL `rlctl_exempt` on
//! that variable which every `track-scN`, deny and `sc-inc-gpc` line of the
//! rules excludes (`if ... !rlctl_exempt`), so an exempt request is neither
//! tracked, counted nor denied.
//!
//! Semantics from the HAProxy configuration manual (docs.haproxy.org,
//! configuration.html): the conditions of a line are ANDed and `!` negates an
//! ACL (section 7.2, "Using ACLs to form conditions"); `set-var(<var-name>)`
//! and the `var(<var-name>)` fetch (section 4.2 `http-request set-var`,
//! 7.3.2 `var`), whose ACL is false when the variable was never set; `-m bool`,
//! `-m str` (exact, case-sensitive) and `-m ip` matching (7.1.3); the `src`
//! fetch takes an IPv4 or IPv6 address (7.3.3). A client is matched on the
//! key of its exemption: an address with `src` (or the X-Forwarded-For
//! variable of xff keys), any other part as a string; a key of several parts
//! is built like a rule's (`concat(+,...)`) and compared as a string.

use std::net::IpAddr;

use super::conf::Conf;
use super::exempt;
use super::haproxy::{method_acl, pattern};
use super::key::key_parts;
use super::{ClientPart, ExportError, byte_route};
use crate::policy::Exemption;

/// The ACL true for exempt requests.
pub const EXEMPT_ACL: &str = "rlctl_exempt";

/// The condition the rules' lines add when the policy has exemptions.
pub const UNLESS_EXEMPT: &str = "!rlctl_exempt";

/// The condition of exemption `i` on its client: `{ src 10.0.0.7 }`, or the
/// lines that build its key and the string match.
fn client_condition(
    e: &Exemption,
    i: usize,
    client: &str,
    part_expr: &impl Fn(&ClientPart) -> Option<String>,
    lines: &mut Conf,
) -> Result<String, ExportError> {
    let parts = key_parts(&e.name, &e.key, "request attribute")?;
    let unsupported = |message: String| ExportError::Unsupported {
        target: "haproxy",
        rule: e.name.clone(),
        message,
    };
    let address = || {
        client.parse::<IpAddr>().map_err(|_| {
            unsupported(format!(
                "client {client:?} is not an IP address, and key {} holds addresses",
                e.key.text
            ))
        })
    };
    let exprs = parts
        .iter()
        .map(|p| {
            part_expr(p).ok_or_else(|| {
                unsupported(format!(
                    "its key names {p}, which HAProxy does not have; key the exemption on ip, xff, user, a header, a cookie or a query argument"
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(match parts.as_slice() {
        [ClientPart::Address] => format!("{{ src {} }}", address()?),
        [ClientPart::ForwardedFor] => format!("{{ {} -m ip {} }}", exprs[0], address()?),
        [_] => format!("{{ {} -m str {} }}", exprs[0], pattern(client)),
        _ => {
            let mut key = exprs[0].clone();
            for (p, expr) in exprs.iter().enumerate().skip(1) {
                let var = format!("txn.rlctl_ex{i}_{p}");
                lines.line(format!("http-request set-var({var}) {expr}"));
                key.push_str(&format!(",concat(+,{var})"));
            }
            let var = format!("txn.rlctl_ex{i}_key");
            lines.line(format!("http-request set-var({var}) {key}"));
            format!("{{ var({var}) -m str {} }}", pattern(client))
        }
    })
}

/// The frontend lines that set `txn.rlctl_exempt` and declare [`EXEMPT_ACL`];
/// returns whether any exemption reads X-Forwarded-For.
pub fn write(
    exemptions: &[Exemption],
    part_expr: impl Fn(&ClientPart) -> Option<String>,
) -> Result<(Conf, bool), ExportError> {
    let mut lines = Conf::new("    ");
    let mut uses_xff = false;
    lines.comments(&[
        "Exemptions: txn.rlctl_exempt is set for the requests below, and no rule tracks,".into(),
        "counts or denies a request while it is (the lines below end with !rlctl_exempt).".into(),
    ]);
    for (i, e) in exemptions.iter().enumerate() {
        lines.comment(exempt::describe(e));
        let mut conditions = Vec::new();
        if let Some(m) = exempt::method(e)? {
            conditions.push(method_acl(&m));
        }
        if let Some(r) = byte_route("haproxy", &e.name, exempt::route(e)?)? {
            conditions.push(format!("{{ path -m reg {} }}", pattern(&r)));
        }
        if let Some(client) = exempt::client(e)? {
            uses_xff |= e.key.parts.contains(&crate::ingest::key::KeyPart::Xff);
            conditions.push(client_condition(e, i, client, &part_expr, &mut lines)?);
        }
        lines.line(format!(
            "http-request set-var(txn.rlctl_exempt) bool(true) if {}",
            conditions.join(" ")
        ));
    }
    lines.line(format!("acl {EXEMPT_ACL} var(txn.rlctl_exempt) -m bool"));
    Ok((lines, uses_xff))
}

#[cfg(test)]
mod tests {
    use crate::export::{haproxy::Haproxy, render_exemption};

    fn render(exemption: &str) -> Result<String, String> {
        render_exemption(&Haproxy, "3/1m", exemption)
    }

    #[test]
    fn clients_are_matched_on_their_key() {
        let out = render("client='2001:db8::7'").unwrap();
        assert!(out.contains("bool(true) if { src 2001:db8::7 }\n"), "{out}");
        let out = render("key='user'\nclient='svc'\nmethod='get'").unwrap();
        assert!(
            out.contains("bool(true) if { method GET } { http_auth_user -m str 'svc' }\n"),
            "{out}"
        );
        assert!(out.contains("track-sc0 src table rl_g if !rlctl_exempt\n"));
        assert!(out.contains("sc-inc-gpc(0,0) if !rlctl_exempt\n"));
    }

    #[test]
    fn clients_haproxy_cannot_see_are_refused_by_name() {
        let err = render("client='office'").unwrap_err();
        assert!(
            err.contains("haproxy cannot express rule `e`: client \"office\" is not an IP address"),
            "{err}"
        );
        let err = render("key='field:request_id'\nclient='x'").unwrap_err();
        assert!(err.contains("which HAProxy does not have"), "{err}");
    }
}
