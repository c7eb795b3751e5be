//! The lowest layer of plain helpers every other module may use: escaping of
//! log-derived text ([`escape`]), logged paths as route regexes
//! ([`path_regex`]), route regexes as nginx and HAProxy match them
//! ([`pcre_bytes`]), atomic file writes ([`atomic`]), calendar arithmetic and
//! date formatting ([`time`]), counts with their noun ([`counted`]), whether
//! a character is backslash-escaped ([`ends_in_escape`]), and hints to the
//! processor's cache ([`cache`]).
//!
//! It owns no domain types and imports nothing from the rest of the crate but
//! [`crate::units`]: ingestion, export, frames and rendering all sit above it.

pub mod atomic;
pub mod cache;
pub mod escape;
pub mod path_regex;
pub mod pcre_bytes;
pub mod time;

/// `n` and the noun, plural unless `n` is 1: `1 client`, `2 clients`.
pub fn counted(n: impl TryInto<u64>, noun: &str) -> String {
    match n.try_into().unwrap_or(u64::MAX) {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// Whether `before` ends with an odd run of backslashes: the character after
/// it is escaped (`\"` inside a quoted value, `\$` in a regex).
pub fn ends_in_escape(before: &[u8]) -> bool {
    before.iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// A regex error on one line: the regex crate writes a syntax error over
/// several (the pattern, a line of carets under the fault, the message),
/// which an error line shows as `\n` escapes. This gives the message and
/// where the fault starts: `unclosed group (at character 7 of the pattern)`.
pub fn regex_error(error: &regex::Error) -> String {
    let text = error.to_string();
    let lines: Vec<&str> = text.lines().collect();
    let message = lines
        .iter()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "));
    let caret = lines
        .iter()
        .find(|l| l.trim_start().starts_with('^') && l.trim().chars().all(|c| c == '^'));
    match (message, caret) {
        // The pattern and the carets are both indented four spaces.
        (Some(message), Some(caret)) => {
            let at = caret.find('^').unwrap_or(4).saturating_sub(4) + 1;
            format!("{message} (at character {at} of the pattern)")
        }
        _ => lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(": "),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_odd_run_of_backslashes_escapes() {
        for (before, escaped) in [
            ("", false),
            ("a", false),
            ("a\\", true),
            ("\\\\", false),
            ("x\\\\\\", true),
        ] {
            assert_eq!(
                super::ends_in_escape(before.as_bytes()),
                escaped,
                "{before}"
            );
        }
    }

    #[test]
    fn a_regex_syntax_error_reads_on_one_line() {
        let pattern = String::from("^/api/(x");
        let error = regex::Regex::new(&pattern).unwrap_err();
        assert_eq!(
            super::regex_error(&error),
            "unclosed group (at character 7 of the pattern)"
        );
        let pattern = String::from("a{99999999}");
        let error = regex::Regex::new(&pattern).unwrap_err();
        assert!(!super::regex_error(&error).contains('\n'));
    }

    #[test]
    fn counted_is_singular_for_one_only() {
        assert_eq!(super::counted(0u64, "client"), "0 clients");
        assert_eq!(super::counted(1u64, "client"), "1 client");
        assert_eq!(super::counted(2u32, "sample"), "2 samples");
        assert_eq!(super::counted(1usize, "rule"), "1 rule");
    }
}
