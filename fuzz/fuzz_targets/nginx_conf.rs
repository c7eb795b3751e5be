//! Fuzz target: `log_format` extraction from an nginx.conf, then compiling
//! every format found (as `--nginx-conf FILE --log-format-name NAME` does).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::log_format::LogFormatParser;
use rlctl::ingest::nginx_conf::{find_log_format, log_formats};

fuzz_target!(|data: &[u8]| {
    let Ok(conf) = std::str::from_utf8(data) else {
        return; // read_to_string rejects a config that is not UTF-8
    };
    let combined = find_log_format(conf, "combined");
    match log_formats(conf) {
        Ok(formats) => {
            assert!(combined.is_ok(), "combined is always available");
            for f in &formats {
                let found = find_log_format(conf, &f.name).expect("a listed format is found");
                assert_eq!(found.name, f.name);
                let _ = LogFormatParser::new(&f.format, &[]);
            }
        }
        Err(_) => assert!(combined.is_err(), "extraction errors are reported by both"),
    }
});
