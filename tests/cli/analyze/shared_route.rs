//! An endpoint's rule in the policy `analyze --write-policy` writes rests on
//! every request it counts: a template's route also matches the frequent
//! siblings discovery kept by name, and a gateway checks every rule.

use crate::support::rlctl;

#[test]
fn a_template_rule_that_also_counts_named_siblings_says_so() {
    // Ten pages by name, every 2 s per client, and one of 1,500 slugs every
    // 10 s: discovery names the slugs `GET /p/:id` and keeps the ten.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("access.log");
    let pages = [
        "about", "blog", "cart", "deals", "faq", "help", "jobs", "news", "shop", "team",
    ];
    let mut lines = String::new();
    for t in 0..900u32 {
        for client in 1..=40u32 {
            let stamp = format!("05/Jan/2026:00:{:02}:{:02} +0000", t / 60, t % 60);
            let mut request = |path: String| {
                lines.push_str(&format!(
                    "10.0.0.{client} - - [{stamp}] \"GET {path} HTTP/1.1\" 200 1\n"
                ));
            };
            if (t + client) % 2 == 0 {
                request(format!("/p/{}", pages[((t / 2 + client) % 10) as usize]));
            }
            if (t + client) % 10 == 0 {
                request(format!("/p/post-{}", (t * 41 + client * 7) % 1500));
            }
        }
    }
    std::fs::write(&log, lines).unwrap();
    let policy = dir.path().join("policy.toml");
    rlctl()
        .args(["analyze", "-q", "--window", "10s", "--write-policy"])
        .arg(&policy)
        .arg(&log)
        .assert()
        .success();
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains("name = \"get-p-id\""), "{text}");
    assert!(
        text.contains("# Rule get-p-id's route also matches 10 other endpoint(s) (18000 requests), so its limit rests on their requests and its own ("),
        "{text}"
    );
    assert!(
        text.contains("#   GET /p/about (1800 requests)\n"),
        "{text}"
    );
    // A page's own rule matches no other endpoint.
    assert!(!text.contains("# Rule get-p-about"), "{text}");
    // Replayed, no rule hits a client of this even traffic; from the slugs'
    // requests alone, the rule of /p/:id rejected every client.
    let out = rlctl()
        .args(["simulate", "-q", "--format", "json", "--policy"])
        .arg(&policy)
        .arg(&log)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for rule in json["results"].as_array().unwrap() {
        assert_eq!(rule["clients_rejected"], 0, "{rule}");
    }
}
