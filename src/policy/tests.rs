//! Policy parsing: defaults, matching, errors naming the rule, the TOML
//! round trip, and the rules written from endpoint names.

use super::*;

const TEXT: &str = r#"
[[rule]]
name = "global"
limit = "40/1m"
burst = 7

[[rule]]
name = "search"
method = "GET"
route = "^/api/search$"
key = "ip+user"
limit = "10r/s"
algorithm = "leaky-bucket"
"#;

#[test]
fn parses_defaults_and_matches() {
    let rules = Policy::parse(TEXT, "p.toml").unwrap();
    assert_eq!(rules[0].spec.kind, AlgorithmKind::TokenBucket);
    assert_eq!(rules[0].spec.burst, Some(7));
    assert_eq!(rules[0].key.text, "ip");
    let limit = rules[1].spec.limit;
    assert_eq!((limit.requests, limit.window.secs()), (10, 1));
    assert!(rules[1].matches("GET", "/api/search?q=1"));
    assert!(!rules[1].matches("POST", "/api/search"));
    assert!(rules[0].matches("DELETE", "/anything"));
    // Methods are taken in upper case, for every export and replay alike.
    let lower = Policy::parse("[[rule]]\nname='a'\nlimit='1/s'\nmethod='get'", "p").unwrap();
    assert_eq!(lower[0].method.as_deref(), Some("GET"));
    let exempt = "[[rule]]\nname='g'\nlimit='1/s'\n[[rule]]\nname='e'\nroute='^/h'\nmethod='post'\nexempt=true";
    let policy = Policy::parse_policy(exempt, "p").unwrap();
    assert_eq!(policy.exemptions[0].method.as_deref(), Some("POST"));
}

#[test]
fn errors_name_the_rule_and_the_problem() {
    let err = |text: &str| Policy::parse(text, "p.toml").unwrap_err().to_string();
    assert!(err("[[rule]]\nname='a'\nlimit='x'").contains("rule `a`: invalid limit"));
    assert!(
        err("[[rule]]\nname='a'\nlimit='1/s'\nalgorithm='magic'").contains("unknown algorithm")
    );
    assert!(err("[[rule]]\nname='a'\nlimit='1/s'\nroute='('").contains("bad route regex"));
    assert!(
        err("[[rule]]\nname='a'\nlimit='1/s'\n[[rule]]\nname='a'\nlimit='1/s'")
            .contains("two rules")
    );
    assert!(err("").contains("no [[rule]]"));
    // A method is a token, and a route of nothing is a mistake.
    for bad in [
        "''",
        "'GET POST'",
        "'GET\\n'",
        "'G/T'",
        "'*'",
        "'G|T'",
        "'GETTTTTTTTTTTTTTTTTTTTTTTTTTTTTTTT'",
    ] {
        let text = format!("[[rule]]\nname='a'\nlimit='1/s'\nmethod={bad}");
        assert!(err(&text).contains("expected an HTTP method"), "{bad}");
    }
    let exempt = "[[rule]]\nname='a'\nroute='^/h'\nexempt=true\nmethod=''";
    assert!(err(exempt).contains("expected an HTTP method"));
    assert!(err("[[rule]]\nname='a'\nlimit='1/s'\nroute=''").contains("an empty route"));
    assert!(err("[[rule]]\nname='a'\nlimit='1/s'\nbogus=1").contains("not valid TOML"));
}

#[test]
fn toml_errors_name_the_line_and_column() {
    let err = |text: &str| Policy::parse(text, "p.toml").unwrap_err().to_string();
    let second_rule =
        "[[rule]]\nname = \"a\"\nlimit = \"10/1m\"\n\n[[rule]]\nname = \"b\"\nlimit = 10\n";
    let message = err(second_rule);
    assert!(
        message.starts_with("policy p.toml:7:9 is not valid TOML"),
        "{message}"
    );
    assert!(message.contains("expected a string"), "{message}");
    // Columns count characters, not bytes.
    assert!(err("# é\n[[rule]]\nname = 'é' bad").starts_with("policy p.toml:3:12 "));
    assert!(err("[[rule]\n").starts_with("policy p.toml:1:"));
}

#[test]
fn round_trips_through_toml() {
    let policy = Policy {
        routes: None,
        rules: vec![Rule {
            name: "global".into(),
            method: None,
            route: None,
            template: None,
            client: None,
            key: "ip".into(),
            limit: "40/1m".into(),
            burst: Some(7),
            algorithm: "gcra".into(),
            exempt: false,
        }],
    };
    let text = policy.to_toml(&["written by a test".into()]);
    assert!(text.starts_with("# written by a test\n"));
    assert_eq!(toml::from_str::<Policy>(&text).unwrap(), policy);
}

#[test]
fn endpoints_become_rules() {
    assert_eq!(
        endpoint_match("GET /api/users/:id"),
        Some((Some("GET".into()), "^/api/users/[^/]+$".into()))
    );
    assert_eq!(
        endpoint_match("GET /a.b"),
        Some((Some("GET".into()), r"^/a\.b$".into()))
    );
    assert_eq!(endpoint_match("(invalid request)"), None);
    assert_eq!(
        endpoint_match("GET /static/app.:hash.js"),
        Some((
            Some("GET".into()),
            r"^/static/app\.[A-Za-z0-9]+\.js$".into()
        ))
    );
    // From a log without methods: the route alone.
    assert_eq!(
        endpoint_match("/api/users/:id"),
        Some((None, "^/api/users/[^/]+$".into()))
    );
    assert_eq!(endpoint_match("search /x"), None);
    assert_eq!(rule_name("GET /api/users/:id"), "get-api-users-id");
    assert_eq!(rule_name("GET /"), "get-root");
    // A log without methods: the path alone.
    assert_eq!(rule_name("/"), "root");
    assert_eq!(rule_name("/api/users/:id"), "api-users-id");
    assert_eq!(rule_name("search"), "search");
    assert!(is_static_asset("GET /static/js/app.91be04d2.js"));
    assert!(!is_static_asset("GET /api/users/:id"));
    assert!(!is_static_asset("GET /static/manifest.json"));
}

#[test]
fn a_rules_error_names_the_line_its_table_starts_on() {
    let text = "[[rule]]\nname = 'a'\nlimit = '10/1m'\n\n[[rule]]\nname = 'b'\nlimit = '1o/1m'\n";
    let err = Policy::parse(text, "p.toml").unwrap_err().to_string();
    assert!(
        err.starts_with("policy p.toml:5, rule `b`: invalid limit"),
        "{err}"
    );
    // Checked without the text (a policy built in code), no line.
    let policy: Policy = toml::from_str(text).unwrap();
    let err = policy.check("p.toml").unwrap_err().to_string();
    assert!(err.starts_with("policy p.toml, rule `b`"), "{err}");
}
