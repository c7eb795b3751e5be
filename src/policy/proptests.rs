//! Property tests of policy parsing: arbitrary text and TOML-shaped text with
//! arbitrary values never panic; an accepted policy builds every limiter and
//! reads back the same after being written.

use proptest::prelude::*;

use super::Policy;

/// A `[[rule]]` whose values are drawn from valid, borderline and hostile text.
fn rule_text() -> impl Strategy<Value = String> {
    let limit = prop_oneof![
        Just("600/1m".to_string()),
        Just("10r/s".to_string()),
        Just("0/1m".to_string()),
        Just("18446744073709551615/1s".to_string()),
        Just("1/4294967295s".to_string()),
        "[0-9r/smh]{0,8}",
    ];
    let algorithm = prop_oneof![
        Just("token-bucket"),
        Just("gcra"),
        Just("leaky-bucket"),
        Just("fixed-window"),
        Just("sliding-log"),
        Just("sliding-counter"),
        Just("nope"),
    ];
    let burst = prop_oneof![
        Just(String::new()),
        (0u64..5).prop_map(|b| format!("burst = {b}\n")),
        Just("burst = 18446744073709551615\n".to_string()),
        Just("burst = -1\n".to_string()),
    ];
    let route = prop_oneof![
        Just(String::new()),
        Just("route = \"^/api/(\"\n".to_string()),
        Just("route = \"^/login$\"\n".to_string()),
        Just("route = \"(a*)*b{1000}\"\n".to_string()),
        Just("template = \"/api/orders/:id\"\n".to_string()),
        Just("template = \"api/:id\"\n".to_string()),
        Just("route = \"^/a\"\ntemplate = \"/a\"\n".to_string()),
        "[/a-z:.?# ()+*-]{0,12}".prop_map(|t| format!("template = \"{t}\"\n")),
    ];
    let key = prop_oneof![
        Just("ip"),
        Just("user+field:x"),
        Just("field:"),
        Just("ip+")
    ];
    (
        "[a-z<>|`=\\-]{0,6}",
        limit,
        algorithm,
        burst,
        route,
        key,
        prop::option::of("[A-Z]{0,5}"),
    )
        .prop_map(|(name, limit, algorithm, burst, route, key, method)| {
            let method = method.map_or(String::new(), |m| format!("method = \"{m}\"\n"));
            format!(
                "[[rule]]\nname = \"{name}\"\nlimit = \"{limit}\"\nalgorithm = \"{algorithm}\"\nkey = \"{key}\"\n{burst}{route}{method}"
            )
        })
}

proptest! {
    #[test]
    fn arbitrary_text_is_refused_or_accepted_without_panic(text in any::<String>()) {
        let _ = Policy::parse(&text, "p.toml");
    }

    #[test]
    fn accepted_policies_build_and_round_trip(rules in prop::collection::vec(rule_text(), 0..4)) {
        let text = rules.join("\n");
        let Ok(checked) = Policy::parse(&text, "p.toml") else {
            return Ok(());
        };
        prop_assert!(!checked.is_empty());
        let raw: Policy = toml::from_str(&text).unwrap();
        for (rule, written) in checked.iter().zip(&raw.rules) {
            prop_assert!(rule.spec.limiter().is_ok());
            // A template is its regex: the template's own text matches it
            // unless a pattern segment (`app.:hash.js`) is in it.
            if let Some(t) = &written.template {
                let template = crate::discover::Template::parse(t).unwrap();
                let route = rule.route.as_ref().unwrap();
                prop_assert_eq!(route.as_str(), template.regex());
                if !template.has_patterns() {
                    prop_assert!(route.is_match(&template.to_string()));
                }
            }
        }
        let reread = Policy::parse(&raw.to_toml(&["round trip".into()]), "again.toml").unwrap();
        prop_assert_eq!(reread.len(), checked.len());
        for (a, b) in reread.iter().zip(&checked) {
            prop_assert_eq!((&a.name, a.spec.limit, a.spec.burst), (&b.name, b.spec.limit, b.spec.burst));
        }
    }
}
