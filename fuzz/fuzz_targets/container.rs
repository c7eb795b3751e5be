//! Fuzz target: container log wrappers (CRI and Docker json-file) around
//! combined and JSON lines, through the chunk parser. The first byte picks the
//! wrapper and the inner parser; the rest is the input. Any bytes: no panic,
//! and lines + glued = parsed + skipped with consistent chunking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::combined::CombinedParser;
use rlctl::ingest::container::{ContainerParser, Wrapper};
use rlctl::ingest::json::JsonParser;
use rlctl::ingest::record::LineParser;
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let Some((&config, data)) = data.split_first() else {
        return;
    };
    let keys = keys();
    let wrapper = if config & 1 == 0 {
        Wrapper::Cri
    } else {
        Wrapper::DockerJson
    };
    let inner: Box<dyn LineParser> = if config & 2 == 0 {
        Box::new(CombinedParser::new(&keys.fields).expect("combined parser"))
    } else {
        Box::new(JsonParser::new(&[], &keys.fields).expect("json parser"))
    };
    let mut parser = ContainerParser::new(wrapper, inner);
    check_chunk(data, &mut parser, &keys);
});
