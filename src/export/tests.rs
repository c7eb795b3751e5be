//! Tests of the helpers every exporter shares: capacities and bounds by
//! algorithm, key parts, identifiers and comment escaping.

use super::*;
use crate::policy::Policy;

fn rule(text: &str) -> CheckedRule {
    Policy::parse(text, "p.toml").unwrap().remove(0)
}

fn shape(text: &str) -> Shape {
    Shape::of(&rule(text)).unwrap()
}

#[test]
fn capacity_follows_each_algorithms_burst_convention() {
    let cap = |t: &str| shape(t).capacity;
    assert_eq!(cap("[[rule]]\nname='a'\nlimit='40/1m'\nburst=7"), 7);
    assert_eq!(cap("[[rule]]\nname='a'\nlimit='40/1m'"), 40);
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nburst=7\nalgorithm='gcra'"),
        7
    );
    // nginx convention: burst B admits B + 1 at once.
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nburst=7\nalgorithm='leaky-bucket'"),
        8
    );
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nalgorithm='leaky-bucket'"),
        1
    );
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nalgorithm='sliding-log'"),
        40
    );
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nburst=3\nalgorithm='fixed-window'"),
        80
    );
    assert_eq!(
        cap("[[rule]]\nname='a'\nlimit='40/1m'\nalgorithm='sliding-counter'"),
        80
    );
    // A burst that admits nothing never reaches an exporter: the policy refuses it.
    let zero = Policy::parse("[[rule]]\nname='a'\nlimit='40/1m'\nburst=0", "p.toml").unwrap_err();
    assert!(zero.to_string().contains("admit nothing"), "{zero}");
}

#[test]
fn span_bounds_take_the_tightest_that_applies() {
    let bucket = shape("[[rule]]\nname='a'\nlimit='40/1m'\nburst=7");
    assert_eq!(bucket.most_in_span(1), 7);
    assert_eq!(bucket.most_in_span(60), 46);
    assert_eq!(bucket.most_in_span(90), 7 + 60 - 1);
    let log = shape("[[rule]]\nname='a'\nlimit='40/1m'\nalgorithm='sliding-log'");
    assert_eq!(log.most_in_span(60), 40);
    assert_eq!(log.most_in_span(61), 80);
    assert_eq!(log.most_in_span(1), 40);
    let fixed = shape("[[rule]]\nname='a'\nlimit='40/1m'\nalgorithm='fixed-window'");
    assert_eq!(fixed.most_in_span(60), 80);
    assert_eq!(fixed.most_in_span(1), 80);
    // Aligned windows: whole windows of the rule, or inside one.
    assert_eq!(fixed.most_in_aligned_window(60), 40);
    assert_eq!(fixed.most_in_aligned_window(3600), 2400);
    assert_eq!(fixed.most_in_aligned_window(1), 40);
    assert_eq!(bucket.most_in_aligned_window(60), 46);
    let odd = shape("[[rule]]\nname='a'\nlimit='40/90s'\nalgorithm='fixed-window'");
    assert_eq!(odd.most_in_aligned_window(60), 80);
    assert_eq!(mul_div_ceil(u64::MAX, u64::MAX, 1), u64::MAX);
}

#[test]
fn key_fields_name_request_attributes() {
    assert_eq!(
        field_part("http_x_api_key"),
        Some(ClientPart::Header("x-api-key".into()))
    );
    assert_eq!(
        field_part("cookie_sid"),
        Some(ClientPart::Cookie("sid".into()))
    );
    assert_eq!(
        field_part("arg_token"),
        Some(ClientPart::QueryArg("token".into()))
    );
    assert_eq!(
        field_part("request_X-Api-Key"),
        Some(ClientPart::Header("X-Api-Key".into()))
    );
    assert_eq!(
        field_part("request.headers.X-Api-Key"),
        Some(ClientPart::Header("X-Api-Key".into()))
    );
    assert_eq!(
        field_part("request_id"),
        Some(ClientPart::Variable("request_id".into()))
    );
    assert_eq!(field_part("api key"), None);
    assert_eq!(field_part("request.body"), None);
    let r = rule("[[rule]]\nname='a'\nkey='ip+user+field:http_x_api_key'\nlimit='1/s'");
    assert_eq!(
        client_parts(&r).unwrap(),
        vec![
            ClientPart::Address,
            ClientPart::User,
            ClientPart::Header("x-api-key".into())
        ]
    );
    let bad = rule("[[rule]]\nname='a'\nkey='field:a.b'\nlimit='1/s'");
    assert!(client_parts(&bad).is_err());
}

#[test]
fn routes_that_cannot_be_quoted_are_refused() {
    // (Methods every target can write are all a policy takes: see the policy's tests.)
    let r = rule("[[rule]]\nname='a'\nroute=\"^/a\\nb$\"\nlimit='1/s'");
    assert!(route(&r).is_err());
    let r = rule("[[rule]]\nname='a'\nroute='^/a\\nb$'\nlimit='1/s'");
    assert_eq!(route(&r), Ok(Some(r"^/a\nb$")));
}

#[test]
fn identifiers_are_safe_and_unique() {
    let rules = Policy::parse(
        "[[rule]]\nname='GET /a b'\nlimit='1/s'\n[[rule]]\nname='get-a-b'\nlimit='1/s'\n[[rule]]\nname='}; evil'\nlimit='1/s'\n[[rule]]\nname='***'\nlimit='1/s'",
        "p",
    )
    .unwrap();
    assert_eq!(
        identifiers(&rules),
        vec!["get_a_b", "get_a_b_2", "evil", "rule"]
    );
    let same = Policy::parse(
        "[[rule]]\nname='a b'\nlimit='1/s'\n[[rule]]\nname='a-b'\nlimit='1/s'",
        "p",
    )
    .unwrap();
    assert_eq!(identifiers(&same), vec!["a_b", "a_b_2"]);
    // Long names are cut to 30 characters, never at a `_`, and stay unique.
    let long = Policy::parse(
        "[[rule]]\nname='get-api-v1-organizations-id-projects-id-members'\nlimit='1/s'\n[[rule]]\nname='get-api-v1-organizations-id-projects-id-owners'\nlimit='1/s'\n[[rule]]\nname='abcdefghijklmnopqrstuvwxyzabc-def'\nlimit='1/s'",
        "p",
    )
    .unwrap();
    assert_eq!(
        identifiers(&long),
        vec![
            "get_api_v1_organizations_id_pr",
            "get_api_v1_organizations_id_pr_2",
            "abcdefghijklmnopqrstuvwxyzabc"
        ]
    );
}

#[test]
fn comments_cannot_span_lines() {
    assert_eq!(
        comment("a\nb\r\u{2028}c\u{85}"),
        "a\\nb\\r\\u{2028}c\\u{85}"
    );
    assert_eq!(
        comment_block("# ", &["x\ny".into(), String::new()]),
        "# x\\ny\n#\n"
    );
    assert_eq!(quoted("a\"b\n"), "\"a\\\"b\\n\"");
}

#[test]
fn header_advice_and_description() {
    let r = rule("[[rule]]\nname='s'\nmethod='GET'\nroute='^/s$'\nlimit='20/1m'\nburst=5");
    assert_eq!(
        header_advice(&r),
        "RateLimit-Policy: 20;w=60  X-RateLimit-Limit: 20"
    );
    assert_eq!(
        describe(&r),
        "rule `s`: GET on paths matching ^/s$, key ip, 20/1m token-bucket burst 5"
    );
}

#[test]
fn traefik_routers_and_kong_routes_and_instances_have_unique_names() {
    // A rule called `all` beside the catch-all router, a rule `exempt-h` beside
    // an exemption `h`, and a global rule `x-route` (the first, which names
    // Kong's one global plugin) beside a routed rule `x`.
    let policy = Policy::parse_policy(
        "[[rule]]\nname='x-route'\nlimit='3/1m'\n\
         [[rule]]\nname='global'\nlimit='10/1m'\n[[rule]]\nname='all'\nroute='^/x'\nlimit='20/1m'\n\
         [[rule]]\nname='exempt-h'\nroute='^/y'\nlimit='5/1m'\n[[rule]]\nname='h'\nroute='^/h'\nexempt=true\n\
         [[rule]]\nname='x'\nroute='^/z'\nlimit='4/1m'\n",
        "p",
    )
    .unwrap();
    let opts = ExportOptions::default();
    // How many names, each once.
    let distinct = |names: Vec<&str>| {
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        names.len()
    };
    let traefik = traefik::Traefik.render_policy(&policy, &opts).unwrap();
    let routers = &traefik[traefik.find("  routers:").unwrap()..];
    let router_names = routers
        .lines()
        .filter(|l| l.starts_with("    rl-"))
        .collect();
    assert_eq!(distinct(router_names), 5);
    let kong = kong::Kong.render_policy(&policy, &opts).unwrap();
    let route_names = kong
        .lines()
        .filter(|l| l.starts_with("  - name: \"rl-"))
        .collect();
    assert_eq!(distinct(route_names), 4);
    let instances = kong
        .lines()
        .filter(|l| l.trim().starts_with("instance_name: "))
        .collect();
    // One global plugin (Kong holds one), three routes, one exemption.
    assert_eq!(distinct(instances), 5);
}

#[test]
fn an_exemptions_comment_is_escaped_once_like_a_rules() {
    // Found by review: the exemption's line was escaped, then escaped again
    // as a comment (`^/health\\\\.json$`). A comment shows a route as the
    // policy writes it, a backslash doubled only where it would read as an
    // escape: `^/w\\n$` shows as `^/w\\\\n$`, as `\n` reads as a line break.
    let policy = Policy::parse_policy(
        "[[rule]]\nname='r'\nroute='^/a\\.b$'\nlimit='20/1m'\n\
         [[rule]]\nname='w'\nroute='^/w\\\\n$'\nexempt=true\n\
         [[rule]]\nname='h'\nroute='^/health\\.json$'\nexempt=true\n",
        "p",
    )
    .unwrap();
    let opts = ExportOptions::default();
    for target in [
        Target::Nginx,
        Target::Haproxy,
        Target::Envoy,
        Target::Traefik,
        Target::Kong,
    ] {
        let out = target.exporter().render_policy(&policy, &opts).unwrap();
        assert!(out.contains(r"paths matching ^/a\.b$, "), "{out}");
        assert!(out.contains(r"paths matching ^/health\.json$, "), "{out}");
        assert!(out.contains(r"paths matching ^/w\\\\n$, "), "{out}");
    }
}
