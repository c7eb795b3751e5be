//! Fuzz target: format detection and the parser it chooses (every named
//! source, container wrappers), through the chunk parser. Any bytes: detection
//! never panics, and whatever parser it picks accounts for every line.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::Settings;
use rlctl::ingest::detect::choose;
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let keys = keys();
    let settings = Settings {
        keys: keys.clone(),
        ..Settings::for_detection()
    };
    if let Ok(mut chosen) = choose(&settings, Some(data), "fuzz") {
        check_chunk(data, chosen.parser.as_mut(), &keys);
    }
});
