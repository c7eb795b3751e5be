//! Fuzz target: the limit syntax (`600/1m`, `10r/s`) and durations (`10s`, `1h`).
//! Whatever parses must print back to a string that parses to the same value.

#![no_main]

use libfuzzer_sys::fuzz_target;
use rlctl::units::{Limit, Window};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(window) = text.parse::<Window>() {
        assert!(window.secs() > 0);
        assert_eq!(window.to_string().parse::<Window>(), Ok(window));
        assert_eq!(window.index(0), 0);
    }
    if let Ok(limit) = text.parse::<Limit>() {
        assert!(limit.requests > 0);
        assert_eq!(limit.to_string().parse::<Limit>(), Ok(limit));
        assert!(limit.per_second() > 0.0);
    }
});
