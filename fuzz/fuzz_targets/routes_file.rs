//! Fuzz target: the routes file (`--routes FILE`). Any text: no panic; every
//! template that parses matches the same paths as its regex, and writes back
//! to the same template.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::discover::routes_file::{self, Line};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
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
});
