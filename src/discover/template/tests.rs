use super::*;

fn t(s: &str) -> Template {
    Template::parse(s).unwrap()
}

#[test]
fn segments_match_by_kind() {
    assert!(t("/api/orders/:id").matches("/api/orders/4f9c2a1e"));
    assert!(!t("/api/orders/:id").matches("/api/orders/"));
    assert!(!t("/api/orders/:id").matches("/api/orders/1/items"));
    assert!(t("/static/app.:hash.js").matches("/static/app.206277e0.js"));
    assert!(!t("/static/app.:hash.js").matches("/static/app..js"));
    assert!(!t("/static/app.:hash.js").matches("/static/app.a-b.js"));
    assert!(t("/").matches("/"));
    assert!(t("/a:").matches("/a:"), "a colon without a name is literal");
}

#[test]
fn literals_win_then_longer_patterns() {
    let set = TemplateSet::new(vec![
        t("/api/orders/:id"),
        t("/api/orders/search"),
        t("/s/:hash.:hash.js"),
        t("/s/app.:hash.js"),
    ]);
    assert_eq!(
        set.find("/api/orders/search").unwrap().to_string(),
        "/api/orders/search"
    );
    assert_eq!(
        set.find("/api/orders/x1").unwrap().to_string(),
        "/api/orders/:id"
    );
    assert_eq!(
        set.find("/s/app.1a2b3c.js").unwrap().to_string(),
        "/s/app.:hash.js"
    );
    assert_eq!(
        set.find("/s/vendor.1a2b3c.js").unwrap().to_string(),
        "/s/:hash.:hash.js"
    );
    assert!(set.find("/other").is_none());
}

#[test]
fn a_template_text_keeps_its_template() {
    let set = TemplateSet::new(vec![t("/s/app.:hash.js"), t("/s/:file"), t("/a/:id")]);
    let found = |p: &str| set.find(p).map(|t| t.to_string());
    assert_eq!(found("/s/app.:hash.js").as_deref(), Some("/s/app.:hash.js"));
    assert_eq!(found("/s/app.1f2e.js").as_deref(), Some("/s/app.:hash.js"));
    assert_eq!(found("/s/app.:x.js").as_deref(), Some("/s/:file"));
    assert_eq!(found("/a/:id").as_deref(), Some("/a/:id"));
    assert_eq!(found("/a/:other").as_deref(), Some("/a/:id"));
}

proptest::proptest! {
    /// Mapping a path onto its template, then the template's text again,
    /// gives the same template (what re-applying routes relies on).
    #[test]
    fn finding_is_idempotent(
        templates in proptest::collection::vec("(/(:[a-z]{1,2}|[ab.]{0,2}(:[a-z]{1,2})?[.b]{0,2})){1,3}", 0..6),
        path in "(/(:[a-z]{1,2}|[ab1.:]{0,4})){1,3}",
    ) {
        let set = TemplateSet::new(templates.iter().map(|s| t(s)).collect());
        if let Some(first) = set.find(&path) {
            let again = set.find(&first.to_string()).map(|x| x.to_string());
            proptest::prop_assert_eq!(again, Some(first.to_string()));
            // Nothing before the found template in precedence matches the path.
            for earlier in set.templates().iter().take_while(|x| *x != first) {
                proptest::prop_assert!(!earlier.matches(&path), "{} before {}", earlier, first);
            }
        }
    }
}

#[test]
fn regexes_match_what_templates_match() {
    for (template, paths) in [
        (
            "/api/orders/:id",
            ["/api/orders/4f9c", "/api/orders/a.b", "/api/orders/x/y"],
        ),
        (
            "/static/app.:hash.js",
            ["/static/app.1f.js", "/static/app.-.js", "/static/appx1fxjs"],
        ),
        ("/a+b/(c)", ["/a+b/(c)", "/aab/c", "/a+b/(c)/"]),
    ] {
        let tpl = t(template);
        let re = regex::Regex::new(&tpl.regex()).unwrap();
        for p in paths {
            assert_eq!(tpl.matches(p), re.is_match(p), "{template} {p}");
        }
    }
}

#[test]
fn bad_templates_say_why() {
    assert!(
        Template::parse("api/x")
            .unwrap_err()
            .contains("starts with /")
    );
    assert!(Template::parse("/a b").is_err());
    assert!(Template::parse("/a?b").is_err());
}

#[test]
fn an_escaped_colon_is_text_and_lines_parse_back() {
    let cancel = t("/v1/jobs\\:cancel");
    assert_eq!(cancel.segments[1], Segment::Literal("jobs:cancel".into()));
    assert!(cancel.matches("/v1/jobs:cancel"));
    assert!(!cancel.matches("/v1/jobsB7"));
    assert_eq!(cancel.regex(), "^/v1/jobs:cancel$");
    assert_eq!(cancel.to_string(), "/v1/jobs:cancel");
    assert_eq!(cancel.line(), "/v1/jobs\\:cancel");
    // Escapes within a pattern, and backslashes that escape no colon.
    let mixed = t("/a\\:b.:hash/x\\y");
    assert!(mixed.matches("/a:b.1f2e3d/x\\y"));
    assert_eq!(mixed.line(), "/a\\:b.:hash/x\\y");
    for literal in ["jobs:cancel", "a\\:b", "a\\", ":", "a:1", "x::y", "é:é"] {
        let template = Template {
            segments: vec![Segment::Literal(literal.into())],
        };
        assert_eq!(t(&template.line()), template, "{literal}");
    }
}

#[test]
fn kept_names_are_literal_but_for_rlctl_parameters() {
    // A kept name is a path's segment as it is (`\\:x` keeps its backslash),
    // and its routes-file line reads back to it.
    assert_eq!(Segment::of_name(":id"), Segment::Whole(":id".into()));
    assert_eq!(
        Segment::of_name("app.:hash.js"),
        Segment::Pattern("app.:hash.js".into())
    );
    for literal in [
        "jobs:cancel",
        "a.:hash.:id",
        "x:hashy",
        "users",
        "\\:x",
        "a\\b",
    ] {
        assert_eq!(
            Segment::of_name(literal),
            Segment::Literal(literal.into()),
            "{literal}"
        );
    }
}
