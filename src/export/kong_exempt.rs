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
//! and, for a client keyed on a header, that header's value (`headers`); its
//! `regex_priority` puts it before the rules' regex routes when both match
//! (Kong weighs the number of match fields first: a rule route with a method
//! the exemption lacks can still win, so give such an exemption the method
//! too). Kong's
//! HTTP routes cannot match the client's address, a user, a cookie or a query
//! argument, so those client exemptions are refused.

use super::kong::regex_path;
use super::yaml::{Map, Seq, Value, plain, string};
use super::{ClientPart, ExportError, dashed, exempt, exemption_identifiers};
use crate::export::key::key_parts;
use crate::policy::{CheckedRule, Exemption};

/// The per-second limit of an exemption's plugin: beyond any client.
pub const UNREACHABLE: u64 = 1_000_000_000;

/// The `regex_priority` of exemption routes (the rules' routes have 0).
pub const REGEX_PRIORITY: u64 = 1_000;

/// The route of exemption `e`, named `id`.
fn route(e: &Exemption, id: &str) -> Result<Map, ExportError> {
    let unsupported = |message: String| ExportError::Unsupported {
        target: "kong",
        rule: e.name.clone(),
        message,
    };
    let mut headers = Map::new();
    if let Some(client) = exempt::client(e)? {
        let parts = key_parts(&e.name, &e.key, "request attribute")?;
        let values = exempt::client_values(e, client, parts.len(), "kong")?;
        for (part, value) in parts.iter().zip(values) {
            match part {
                ClientPart::Header(h) => {
                    headers.set(h.to_ascii_lowercase(), Value::FlowSeq(vec![string(value)]));
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
    let mut plugin = Map::new();
    plugin
        .set("name", plain("rate-limiting"))
        .set("instance_name", string(format!("rl-exempt-{}", dashed(id))))
        .set("config", config);
    let mut plugins = Seq::new();
    plugins.push(plugin);
    let mut route = Map::new();
    route
        .comment(exempt::describe(e))
        .comment(
            "Its own rate-limiting instance replaces the global one here (an enabled one: Kong skips disabled plugins).",
        )
        .set("name", string(format!("rl-exempt-{}", dashed(id))))
        .set("paths", Value::FlowSeq(vec![string(path)]));
    if let Some(m) = exempt::method(e)? {
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

/// The routes of `exemptions`.
pub fn routes(exemptions: &[Exemption], rules: &[CheckedRule]) -> Result<Vec<Map>, ExportError> {
    let ids = exemption_identifiers(exemptions, rules);
    exemptions
        .iter()
        .zip(ids)
        .map(|(e, id)| route(e, &id))
        .collect()
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
    fn clients_kong_routes_cannot_match_are_refused_by_name() {
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
