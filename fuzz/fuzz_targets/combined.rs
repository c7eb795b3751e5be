//! Fuzz target: combined/common access-log lines through the chunk parser.
//! Any bytes: no panic, and lines = parsed + skipped with consistent chunking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::combined::CombinedParser;
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    let mut parser = CombinedParser::new(&keys.fields).expect("combined parser");
    check_chunk(data, &mut parser, &keys);
});
