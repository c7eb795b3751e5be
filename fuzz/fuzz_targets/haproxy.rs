//! Fuzz target: HAProxy HTTP log lines (behind any syslog prefix) through the
//! chunk parser. The first byte picks arrival or logged time. Any bytes: no
//! panic, and lines = parsed + skipped with consistent chunking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::arrival::TimeOf;
use rlctl::ingest::haproxy::{FIELD_NAMES, HaproxyParser};
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let Some((&config, data)) = data.split_first() else {
        return;
    };
    let keys = keys();
    let time_of = if config & 1 == 0 { TimeOf::Arrival } else { TimeOf::Logged };
    let extra: Vec<String> = FIELD_NAMES.iter().map(|f| f.to_string()).collect();
    let mut parser = HaproxyParser::new(&extra, time_of).expect("haproxy parser");
    check_chunk(data, &mut parser, &keys);
});
