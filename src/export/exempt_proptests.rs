//! Property tests of exemptions in every export: any exemption name, client,
//! key, method and route is exported or refused, never a panic; an accepted
//! client holds no control character; and the YAML and JSON outputs still
//! parse whatever the client's text.

use proptest::prelude::*;

use super::{ExportOptions, Target};
use crate::policy::{Policy, Rule};

fn exemption() -> impl Strategy<Value = Rule> {
    let key = prop_oneof![
        Just("ip"),
        Just("xff"),
        Just("user"),
        Just("field:http_x_api_key"),
        Just("field:cookie_sid"),
        Just("field:arg_k"),
        Just("field:request_id"),
        Just("ip+field:http_x_team"),
    ];
    let method = prop::option::of(prop_oneof![Just("GET"), Just("post"), Just("bad method")]);
    let route = prop::option::of(prop_oneof![
        Just("^/healthz$"),
        Just("/a\"b`c'd ;{}#"),
        Just(r"^/x/\d+$"),
        Just("^/a|^/b"),
    ]);
    let client = prop::option::of(prop_oneof![
        Just("10.0.0.7".to_string()),
        Just("2001:db8::7".to_string()),
        Just("10.0.0.7+blue".to_string()),
        ".{0,16}",
    ]);
    (".{0,12}", key, method, route, client).prop_map(|(name, key, method, route, client)| Rule {
        name: format!("e-{name}"),
        method: method.map(str::to_string),
        route: route.map(str::to_string),
        client,
        key: key.to_string(),
        limit: String::new(),
        burst: None,
        algorithm: "token-bucket".into(),
        exempt: true,
        template: None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_target_exports_or_refuses_any_exemption(e in exemption()) {
        let global = Rule {
            name: "g".into(),
            method: None,
            route: None,
            client: None,
            key: "ip".into(),
            limit: "40/1m".into(),
            burst: Some(7),
            algorithm: "token-bucket".into(),
            exempt: false,
            template: None,
        };
        let Ok(policy) = (Policy { rules: vec![global, e.clone()], routes: None }).check_policy("p") else {
            return Ok(());
        };
        for target in Target::ALL {
            let Ok(out) = target.exporter().render_policy(&policy, &ExportOptions::default()) else {
                continue;
            };
            if let Some(client) = &e.client {
                prop_assert!(!client.chars().any(char::is_control), "{target:?} accepted {client:?}");
            }
            match target {
                Target::Envoy | Target::Traefik | Target::Kong => {
                    let parsed: Result<serde_norway::Value, _> = serde_norway::from_str(&out);
                    prop_assert!(parsed.is_ok(), "{target:?}: {parsed:?}\n{out}");
                }
                Target::AwsWaf => {
                    let parsed: Result<serde_json::Value, _> = serde_json::from_str(&out);
                    prop_assert!(parsed.is_ok(), "{parsed:?}\n{out}");
                }
                Target::Nginx | Target::Haproxy => {
                    // Every line is a comment, a directive or a brace: no line
                    // starts inside a broken-out string.
                    prop_assert!(!out.contains('\r'));
                }
            }
        }
    }
}
