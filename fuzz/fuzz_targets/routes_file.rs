//! Fuzz target: the routes file (`--routes FILE`) and `--route` rules
//! (`REGEX=NAME`, `@HOST REGEX=NAME`). Any text: no panic; every template that
//! parses matches the same paths as its regex, writes back to the same
//! template, and keeps its own text as its endpoint (applying routes twice
//! changes nothing); every line that parses as a rule can be matched.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::discover::TemplateSet;
use rlctl::discover::routes_file::{self, Line};
use rlctl::ingest::endpoint::RouteRule;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for line in text.lines() {
        if let Ok(rule) = RouteRule::parse(line) {
            let _ = rule.matches("Example.com:80", "/a/b");
        }
    }
    let Ok(templates) = routes_file::parse(text, "fuzz") else {
        return;
    };
    for t in &templates {
        let re = regex::Regex::new(&t.regex()).expect("template regexes compile");
        let path = t.to_string();
        assert_eq!(t.matches(&path), re.is_match(&path), "{path}");
        let written = routes_file::format(&[], &[Line { template: t, note: None }]);
        let back = routes_file::parse(&written, "back").expect("written templates parse");
        assert_eq!(back.as_slice(), std::slice::from_ref(t));
    }
    let set = TemplateSet::new(templates);
    for t in set.templates() {
        let text = t.to_string();
        let found = set.find(&text).expect("a template's text finds a template");
        assert_eq!(found.to_string(), text, "re-applying routes keeps {text}");
    }
});
