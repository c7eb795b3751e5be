//! Fuzz target: combined/common access-log lines through the chunk parser.
//! Any bytes: no panic, lines + glued = parsed + skipped with consistent chunking, and
//! the shortcut for common lines reads each line as the general reader does.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::combined::CombinedParser;
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    let mut parser = CombinedParser::new(&keys.fields).expect("combined parser");
    for line in data.split(|&b| b == b'\n') {
        assert!(!parser.shortcut_disagrees(line), "{line:?}");
    }
    check_chunk(data, &mut parser, &keys);
});
