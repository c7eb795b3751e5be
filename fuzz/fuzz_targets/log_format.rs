//! Fuzz target: the nginx `log_format` compiler and the parser it produces.
//! The first line of the input is the format (compiled with every variable it
//! names as an extra field), the rest are log lines parsed with it.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::key::{KeySet, KeySpec};
use rlctl::ingest::log_format::LogFormatParser;
use rlctl_fuzz::{check_chunk, split_first_line};

fuzz_target!(|data: &[u8]| {
    let (format, lines) = split_first_line(data);
    let Ok(format) = std::str::from_utf8(format) else {
        return; // formats come from a command line or a config: always text
    };
    // Key on the address plus the first variable's field, so `field:NAME` extraction runs.
    let first_var = format
        .split('$')
        .nth(1)
        .map(|rest| {
            rest.trim_start_matches('{')
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|name| !name.is_empty());
    let key_text = match &first_var {
        Some(name) => format!("ip+field:{name}"),
        None => "ip".to_string(),
    };
    let Ok(spec) = KeySpec::parse(&key_text, Some(24), None) else {
        return;
    };
    let mut keys = KeySet::new(spec);
    keys.add(KeySpec::parse("user", None, None).expect("valid key"));
    let Ok(mut parser) = LogFormatParser::new(format, &keys.fields) else {
        return; // no timestamp, or a format the regex fallback cannot compile
    };
    check_chunk(lines, &mut parser, &keys);
});
