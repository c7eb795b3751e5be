//! Fuzz target: header-driven columns (W3C/IIS, CloudFront) and the ALB column
//! list through the chunk parser. The first byte picks the layout (and, for
//! W3C, whether columns are tabs), arrival or logged time, and whether a
//! later header that names other columns is taken (as `watch` does); the
//! rest is the input, whose `#Fields:` header (if any) names the columns.
//! Any bytes: no panic, and lines = parsed + skipped with consistent
//! chunking.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::ingest::arrival::TimeOf;
use rlctl::ingest::formats::{self, Family};
use rlctl::ingest::{Settings, parser_for_input, FormatChoice};
use rlctl_fuzz::{check_chunk, keys};

fuzz_target!(|data: &[u8]| {
    let Some((&config, data)) = data.split_first() else {
        return;
    };
    let name = ["alb", "cloudfront", "w3c"][usize::from(config % 3)];
    let source = formats::named(name).expect("a named source");
    assert!(matches!(source.family, Family::Columns(_)));
    let keys = keys();
    let settings = Settings {
        keys: keys.clone(),
        time_of: if config & 4 == 0 { TimeOf::Arrival } else { TimeOf::Logged },
        ..Settings::for_detection()
    };
    // Header-driven layouts need a `#Fields:` line: without one, no parser.
    let Ok(mut parser) = parser_for_input(&FormatChoice::Source(source), &settings, data) else {
        return;
    };
    // As `watch` reads a file: a header that names other columns is taken.
    if config & 8 != 0 {
        parser.follow_headers();
    }
    check_chunk(data, parser.as_mut(), &keys);
});
