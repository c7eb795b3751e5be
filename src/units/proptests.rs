//! Property tests of the limit and duration syntax: arbitrary text never
//! panics, and whatever parses prints back to text that parses to the same value.

use proptest::prelude::*;

use super::{Limit, Window};

/// Text near the grammar: digits, units, `r`, `/`, spaces and signs.
fn near_grammar() -> impl Strategy<Value = String> {
    "[0-9 r/smhdecinourty+\\-.]{0,16}"
}

proptest! {
    #[test]
    fn durations_parse_or_fail_and_round_trip(text in prop_oneof![any::<String>(), near_grammar()]) {
        if let Ok(window) = text.parse::<Window>() {
            prop_assert!(window.secs() > 0);
            prop_assert_eq!(window.to_string().parse::<Window>(), Ok(window));
        }
    }

    #[test]
    fn limits_parse_or_fail_and_round_trip(text in prop_oneof![any::<String>(), near_grammar()]) {
        if let Ok(limit) = text.parse::<Limit>() {
            prop_assert!(limit.requests > 0);
            prop_assert_eq!(limit.to_string().parse::<Limit>(), Ok(limit));
        }
    }

    #[test]
    fn every_window_index_is_floor_division(secs in 1u32..=u32::MAX, t in any::<i64>()) {
        let w = Window::from_secs(secs).unwrap();
        let i = w.index(t);
        let start = i128::from(i) * i128::from(w.millis());
        prop_assert!(start <= i128::from(t) && i128::from(t) < start + i128::from(w.millis()));
    }
}
