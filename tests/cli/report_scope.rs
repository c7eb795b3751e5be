//! What `rlctl report` says beyond its tables, found by a user-level review:
//! the endpoints the recommended policy leaves without a rule, and the
//! clients the whole policy would hit beside those the analysis flags.

use crate::report::report_on;

/// An hour in which 20 clients each ask for `path` once a minute.
fn an_hour_of(path: &str) -> String {
    (0..1200)
        .map(|i| {
            format!(
                "{}.000 10.0.0.{} \"GET {path} HTTP/1.1\" 200 0.001 \"-\"\n",
                1_767_571_200 + (i % 60) * 60 + i / 60,
                i / 60
            )
        })
        .collect()
}

#[test]
fn endpoints_with_a_limit_but_no_rule_are_named_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("a.log");
    // A path with a space has a limit of its own in the endpoints table,
    // but no gateway's route matches it as logged: no rule.
    std::fs::write(&log, format!("{}{}", an_hour_of("/a b"), an_hour_of("/c"))).unwrap();
    let run = |format: &str| {
        let out = report_on(&log, &["--format", format]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let json: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["unruled_endpoints"], serde_json::json!(["GET /a b"]));
    let rules: Vec<&str> = (json["policy"]["rules"].as_array().unwrap().iter())
        .map(|r| r["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["global", "get-c"]);
    let markdown = run("markdown");
    assert!(
        markdown.contains("The recommended policy has no rule for these endpoints")
            && markdown.contains("as logged: GET /a b\n"),
        "{markdown}"
    );
    assert!(run("html").contains("as logged: GET /a b</p>"));
}
