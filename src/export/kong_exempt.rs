//! Kong exemptions: one route per exemption whose own rate-limiting plugin has
//! a limit no client reaches.
//!
//! Kong runs one instance of a plugin per request, the most specific one: a
//! route's before the global one (plugin precedence,
//! docs.konghq.com/gateway/latest/key-concepts/plugins/#precedence). A
//! disabled route plugin would not do: the plugins iterator skips plugins that
//! are not enabled (`should_process_plugin` in `kong/runloop/plugins_iterator.lua`),
//! and the global one would run. So the exemption's route carries an enabled
//! instance with `second: 1000000000`; its counters are its own (Kong counts
//! per plugin instance), so exempt requests never count toward a rule.
//!
//! The route matches the exemption's path (a regex path, as the rules'), method
//! and, for a client keyed on a header, that header's value (`headers`, which
//! Kong compares ignoring case, see [`same_ignoring_case`]; a value with
//! upper-case letters that are not ASCII is written lowered); its
//! `regex_priority` puts it before the rules' regex routes when both match
//! (Kong weighs the number of match fields first: a rule route with a method
//! would still win over an exemption with a path alone, so such an exemption
//! gets a copy of its route for each method of the rules). Kong's
//! HTTP routes cannot match the client's address, a user, a cookie or a query
//! argument, so those client exemptions are refused.

use super::kong::regex_path;
use super::yaml::{Map, Seq, Value, plain, string};
use super::{ClientPart, ExportError, dashed, exempt, exemption_identifiers};
use crate::export::key::key_parts;
use crate::ingest::key::kong_header_value;
#[cfg(doc)]
use crate::ingest::key::same_ignoring_case;
use crate::policy::{CheckedRule, Exemption};

/// The per-second limit of an exemption's plugin: beyond any client.
pub const UNREACHABLE: u64 = 1_000_000_000;

/// The `regex_priority` of exemption routes (the rules' routes have 1 up to
/// their number, less than this).
pub const REGEX_PRIORITY: u64 = 1_000;

/// The route of exemption `e`, named `id`; with `for_method`, a copy of it
/// for that method (see [`routes`]).
fn route(e: &Exemption, id: &str, for_method: Option<&str>) -> Result<Map, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "kong",
        rule: e.name.clone(),
        message,
    };
    if let Some(message) = exempt::method(e)?
        .as_deref()
        .and_then(super::kong::method_refused)
    {
        return Err(unsupported(message));
    }
    let mut headers = Map::new();
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "kong")?;
        for (part, value) in parts.iter().zip(values) {
            match part {
                // Kong's router reads a value starting with `~*` as a regex
                // (`get_expression` in kong/router/transform.lua).
                ClientPart::Header(_) if value.starts_with("~*") => {
                    return Err(unsupported(format!(
                        "Kong reads a header value starting with ~* as a regex, so the route would not match {value:?} alone; exempt this client by another header"
                    )));
                }
                ClientPart::Header(h) => {
                    let value = string(kong_header_value(value));
                    headers.set(h.to_ascii_lowercase(), Value::FlowSeq(vec![value]));
                }
                other => {
                    return Err(unsupported(format!(
                        "Kong's HTTP routes cannot match {other}; exempt this client by a header (e.g. an API key), or give it a consumer with a rate-limiting plugin of its own"
                    )));
                }
            }
        }
    }
    // Without a route, the regex path `~/` (every path): Kong tries regex
    // paths before prefix paths (Kong/kong#4121), so a prefix `/` would lose
    // to every rule's regex route.
    let path = exempt::route(e)?
        .map(regex_path)
        .unwrap_or_else(|| "~/".into());
    let mut config = Map::new();
    config
        .set("second", plain(UNREACHABLE))
        .note("no client reaches it: this route is never limited")
        .set("policy", plain("local"));
    let name = match for_method {
        None => format!("rl-exempt-{}", dashed(id)),
        Some(m) => format!("rl-exempt-{}-{}", dashed(id), m.to_ascii_lowercase()),
    };
    let mut plugin = Map::new();
    plugin
        .set("name", plain("rate-limiting"))
        .set("instance_name", string(&name))
        .set("config", config);
    let mut plugins = Seq::new();
    plugins.push(plugin);
    let mut route = Map::new();
    match for_method {
        None => route.comment(exempt::describe(e)).comment(
            "Its own rate-limiting instance replaces the global one here (an enabled one: Kong skips disabled plugins).",
        ),
        Some(m) => route.comment(format!(
            "The same for {m} requests, which a rule's route with a method would take first (Kong weighs a method and a path above a path alone)."
        )),
    };
    route
        .set("name", string(&name))
        .set("paths", Value::FlowSeq(vec![string(path)]));
    if let Some(m) = for_method.map(str::to_string).or(exempt::method(e)?) {
        route.set("methods", Value::FlowSeq(vec![string(m)]));
    }
    if !headers.is_empty() {
        route.set("headers", headers);
    }
    route
        .set("regex_priority", plain(REGEX_PRIORITY))
        .set("plugins", plugins);
    Ok(route)
}

/// The routes of `exemptions`. Kong weighs a route's number of match fields
/// before its `regex_priority`, so an exemption with neither a method nor a
/// client (a path alone) would lose to every rule route with a method: it
/// gets, besides its own route, one for each method of the rules.
pub fn routes(exemptions: &[Exemption], rules: &[CheckedRule]) -> Result<Vec<Map>, ExportError> {
    let ids = exemption_identifiers(exemptions, rules);
    let mut methods: Vec<&str> = rules.iter().filter_map(|r| r.method.as_deref()).collect();
    methods.sort_unstable();
    methods.dedup();
    let mut out = Vec::new();
    for (e, id) in exemptions.iter().zip(ids) {
        out.push(route(e, &id, None)?);
        if e.method.is_none() && exempt::client(e)?.is_none() {
            for m in &methods {
                out.push(route(e, &id, Some(m))?);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::export::{kong::Kong, render_exemption};

    fn render(exemption: &str) -> Result<String, String> {
        render_exemption(&Kong, "3/1m", exemption)
    }

    #[test]
    fn exemption_routes_carry_a_plugin_that_never_limits() {
        let any_path = render("key='field:http_x_api_key'\nclient='k1'").unwrap();
        assert!(any_path.contains("    paths: [\"~/\"]\n"), "{any_path}");
        let out =
            render("route='^/h$'\nmethod='get'\nkey='field:http_x_api_key'\nclient='k1'").unwrap();
        assert!(
            out.contains("  - name: \"rl-exempt-e\"\n    paths: [\"~^/h$\"]\n    methods: [\"GET\"]\n    headers:\n      x-api-key: [\"k1\"]\n    regex_priority: 1000\n"),
            "{out}"
        );
        assert!(out.contains("        second: 1000000000  #"), "{out}");
        // The global rule stays global.
        assert!(out.contains("plugins:\n# rule `g`"), "{out}");
    }

    #[test]
    fn a_client_with_upper_case_letters_lua_leaves_is_written_lowered() {
        let out = render("key='field:http_x_api_key'\nclient='ÉTÉ-Key'").unwrap();
        assert!(out.contains("      x-api-key: [\"été-key\"]\n"), "{out}");
        let ascii = render("key='field:http_x_api_key'\nclient='Partner'").unwrap();
        assert!(
            ascii.contains("      x-api-key: [\"Partner\"]\n"),
            "{ascii}"
        );
    }

    #[test]
    fn a_path_alone_gets_a_route_for_each_method_of_the_rules() {
        use crate::export::{ExportOptions, Exporter};
        let policy = crate::policy::Policy::parse_policy(
            "[[rule]]\nname='gets'\nmethod='GET'\nlimit='2/1m'\n\
             [[rule]]\nname='posts'\nmethod='POST'\nroute='^/api'\nlimit='2/1m'\n\
             [[rule]]\nname='h'\nroute='^/health$'\nexempt=true\n",
            "p",
        )
        .unwrap();
        let out = Kong
            .render_policy(&policy, &ExportOptions::default())
            .unwrap();
        // Kong would take `gets`' route (a method and a path) before the
        // exemption's (a path alone): a copy per method outranks it.
        for (name, m) in [("rl-exempt-h-get", "GET"), ("rl-exempt-h-post", "POST")] {
            let route = format!(
                "  - name: \"{name}\"\n    paths: [\"~^/health$\"]\n    methods: [\"{m}\"]\n    regex_priority: 1000\n"
            );
            assert!(out.contains(&route), "{out}");
        }
        assert!(out.contains(
            "  - name: \"rl-exempt-h\"\n    paths: [\"~^/health$\"]\n    regex_priority"
        ));
    }

    #[test]
    fn clients_kong_routes_cannot_match_are_refused_by_name() {
        let regex = render("key='field:http_x_api_key'\nclient='~*.'").unwrap_err();
        assert!(
            regex.contains("reads a header value starting with ~* as a regex"),
            "{regex}"
        );
        let method = render("route='^/ssdp$'\nmethod='m-search'").unwrap_err();
        assert!(
            method.contains(
                "rule `e`: Kong's routes take methods of capital letters only, not \"M-SEARCH\""
            ),
            "{method}"
        );
        for exemption in [
            "client='10.0.0.7'",
            "key='user'\nclient='svc'",
            "key='field:cookie_s'\nclient='x'",
        ] {
            let err = render(exemption).unwrap_err();
            assert!(
                err.contains("kong cannot express rule `e`: Kong's HTTP routes cannot match"),
                "{err}"
            );
        }
    }
}
