//! Fuzz target: TOML policies. Any text: no panic; a policy that is accepted
//! builds a limiter for every rule, writes its routes for nginx and HAProxy
//! or refuses them with a reason, and survives a write-and-reread.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::policy::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // read_to_string rejects a policy that is not UTF-8
    };
    let Ok(rules) = Policy::parse(text, "fuzz.toml") else {
        return;
    };
    assert!(!rules.is_empty());
    for rule in &rules {
        rule.spec
            .limiter()
            .expect("a checked rule builds its limiter");
        let _ = rule.matches("GET", "/api/x?y=1");
        if let Some(route) = &rule.route {
            let _ = rlctl::text::pcre_bytes::bytes_matcher(route.as_str());
        }
    }
    let policy: Policy = toml::from_str(text).expect("parsed once already");
    let header = ["a header line".to_string()];
    let again = policy.to_toml(&header);
    let reread = Policy::parse(&again, "rewritten.toml").expect("a written policy reads back");
    assert_eq!(reread.len(), rules.len());
    for (a, b) in reread.iter().zip(&rules) {
        assert_eq!(
            (&a.name, &a.method, a.spec.limit, a.spec.burst),
            (&b.name, &b.method, b.spec.limit, b.spec.burst)
        );
    }
});
