//! Fuzz target: JSON lines with a `--field` mapping. The first line of the input
//! is the mapping (`role=path,role=path`, as on the command line), the rest are
//! log lines. The parser reads nginx's logged times as arrivals, as the
//! `json` format does by default.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::arrival::TimeOf;
use rlctl::ingest::json::JsonParser;
use rlctl::ingest::key::{KeySet, KeySpec};
use rlctl_fuzz::{check_chunk, split_first_line};

fuzz_target!(|data: &[u8]| {
    let (mapping, lines) = split_first_line(data);
    let mapping = String::from_utf8_lossy(mapping);
    let pairs: Vec<(String, String)> = mapping
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(role, path)| (role.trim().to_string(), path.trim().to_string()))
        .collect();
    let mut keys =
        KeySet::new(KeySpec::parse("ip+field:request.headers.User-Agent", None, Some(48)).unwrap());
    keys.add(KeySpec::parse("user", None, None).unwrap());
    keys.add(KeySpec::parse("xff", Some(16), None).unwrap());
    let Ok(parser) = JsonParser::new(&pairs, &keys.fields) else {
        return; // an unknown role is a usage error
    };
    // nginx's logged times (time_iso8601, time_local, msec) moved back by
    // request_time, as the `json` format reads them by default.
    let mut parser = parser.with_nginx_times(TimeOf::Arrival, lines);
    check_chunk(lines, &mut parser, &keys);
});
