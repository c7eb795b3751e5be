//! Two entries on one line. A file that ends without its last newline and is
//! concatenated with the next (`cat a.log b.log`), or a writer stopped in
//! the middle of an entry, leaves the next entry glued onto the same line:
//!
//! `1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HT5.6.7.8 - - [05/Jan/2026:00:00:06 +0000] "GET /b HTTP/1.1" 200 …`
//!
//! Read as one line, the second entry is lost (taken as trailing fields, or
//! as part of the first entry's request) and the first may gain a request
//! it never had. The second entry is found by its head, `ADDR IDENT USER
//! [dd/Mon/yyyy:HH:MM:SS +zzzz] "`, after the first entry's time: a head
//! with a bare `"` cannot come from inside a quoted field, where nginx
//! writes `"` as `\x22` and Apache as `\"`. Its address is the longest
//! IPv4 or IPv6 address that ends where its IDENT starts (the text before
//! it belongs to the entry cut short); an entry whose address is a host
//! name is not told apart from the text before it.

use std::net::IpAddr;

use memchr::memchr;

/// The longest IP address as text (`ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`).
const LONGEST_ADDRESS: usize = 45;

/// Where a second entry starts in `line` (a combined line whose own
/// `[TIME]` opens at `open`), if one is glued on.
pub(super) fn second_entry(line: &[u8], open: usize) -> Option<usize> {
    let close = open + memchr(b']', line.get(open..)?)?;
    memchr::memchr_iter(b'[', &line[close..])
        .map(|i| close + i)
        .filter(|&at| is_time_head(&line[at..]))
        .find_map(|at| address_before(&line[..at]).filter(|&start| start > close))
}

/// Whether `text` starts with `[dd/Mon/yyyy:HH:MM:SS +zzzz] "`, the
/// `$time_local` (`%t`) of an entry's head and the quote that opens its request.
fn is_time_head(text: &[u8]) -> bool {
    const SHAPE: &[u8] = b"[00/Aaa/0000:00:00:00 +0000] \"";
    text.len() >= SHAPE.len()
        && SHAPE.iter().zip(text).all(|(&want, &b)| match want {
            b'0' => b.is_ascii_digit(),
            b'A' => b.is_ascii_uppercase(),
            b'a' => b.is_ascii_lowercase(),
            b'+' => b == b'+' || b == b'-',
            other => b == other,
        })
}

/// Where the address of an entry head starts, given the head up to its
/// `[TIME]` (`… ADDR IDENT USER `): the longest IP address that ends at the
/// space before IDENT; or, with the ident `-` and a user holding spaces
/// (logged as the client sent it), one that ends at a ` - ` (see
/// [`address_before_dash`]).
fn address_before(head: &[u8]) -> Option<usize> {
    let head = head.strip_suffix(b" ")?;
    address_before_words(head).or_else(|| address_before_dash(head))
}

/// The address of a head `… ADDR IDENT USER` (without the space before its
/// `[TIME]`) whose IDENT and USER are one word each.
fn address_before_words(head: &[u8]) -> Option<usize> {
    let user = token_start(head)?;
    let ident = token_start(head[..user].strip_suffix(b" ")?)?;
    address_ending(head, head[..ident].strip_suffix(b" ")?.len())
}

/// How far before its `[TIME]` a head's ` - ` is looked for: a user with
/// spaces longer than that is not found (a bound, so that a hostile line of
/// many dates costs what its length does).
const SPACED_USER_REACH: usize = 512;

/// The address of a head `… ADDR - USER WITH SPACES` (without the space
/// before its `[TIME]`): the one that ends at the last ` - ` within
/// [`SPACED_USER_REACH`] that an address ends at. The main reading takes
/// the user from the first ` - ` after the address, so a user holding
/// ` - ` after an address of its own is taken for that address's.
fn address_before_dash(head: &[u8]) -> Option<usize> {
    let from = head.len().saturating_sub(SPACED_USER_REACH);
    memchr::memrchr_iter(b'-', &head[from..])
        .map(|i| from + i)
        .filter(|&dash| dash > 0 && head[dash - 1] == b' ' && head.get(dash + 1) == Some(&b' '))
        .find_map(|dash| address_ending(head, dash - 1))
}

/// Where the longest IP address that ends at `end` in `head` starts.
fn address_ending(head: &[u8], end: usize) -> Option<usize> {
    let run = head[..end]
        .iter()
        .rposition(|&b| !(b.is_ascii_hexdigit() || b == b'.' || b == b':'))
        .map_or(0, |i| i + 1);
    // No address is longer: a long run of hex digits is tried at its end only.
    let run = run.max(end.saturating_sub(LONGEST_ADDRESS));
    (run..end).find(|&start| {
        std::str::from_utf8(&head[start..end])
            .ok()
            .and_then(|text| text.parse::<IpAddr>().ok())
            .is_some()
    })
}

/// Where the last space-separated token of `text` starts (`None` when empty).
fn token_start(text: &[u8]) -> Option<usize> {
    let start = text.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1);
    (start < text.len()).then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    fn split(line: &str) -> Option<(&str, &str)> {
        let open = line.find('[')?;
        second_entry(line.as_bytes(), open).map(|at| line.split_at(at))
    }

    const SECOND: &str =
        r#"5.6.7.8 - - [05/Jan/2026:00:00:06 +0000] "GET /b HTTP/1.1" 200 12 "-" "curl/8""#;

    #[test]
    fn an_entry_glued_after_a_whole_one_is_found() {
        let first = r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTTP/1.1" 200 1 "-" "c""#;
        assert_eq!(split(&format!("{first}{SECOND}")), Some((first, SECOND)));
    }

    #[test]
    fn an_entry_glued_after_one_cut_short_is_found() {
        let first = r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HT"#;
        assert_eq!(split(&format!("{first}{SECOND}")), Some((first, SECOND)));
        // Hex digits before the address are not taken into it.
        let first = r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /cafe"#;
        assert_eq!(split(&format!("{first}{SECOND}")), Some((first, SECOND)));
        let v6 = SECOND.replace("5.6.7.8", "2001:db8::1");
        assert_eq!(split(&format!("{first}{v6}")), Some((first, v6.as_str())));
        let longest = SECOND.replace("5.6.7.8", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255");
        let first = format!("{first}{}", "a".repeat(100_000));
        assert_eq!(
            split(&format!("{first}{longest}")),
            Some((first.as_str(), longest.as_str()))
        );
    }

    #[test]
    fn an_entry_glued_on_with_a_user_holding_spaces_is_found() {
        let first = r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HT"#;
        for user in ["John Smith", "a - b", "x [y] z", "-  -"] {
            let second = SECOND.replacen(" - - ", &format!(" - {user} "), 1);
            assert_eq!(
                split(&format!("{first}{second}")),
                Some((first, second.as_str())),
                "{user}"
            );
        }
        // A user whose ` - ` follows an address of its own is read from the
        // last such ` - `: the address is the user's.
        let second = SECOND.replacen(" - - ", " - 6.6.6.6 - x ", 1);
        let line = format!("{first}{second}");
        let (_, found) = split(&line).unwrap();
        assert!(found.starts_with("6.6.6.6 - x ["), "{found}");
        // Beyond the reach, a user with spaces is not looked for.
        let long = format!("a {}", "b".repeat(SPACED_USER_REACH));
        let second = SECOND.replacen(" - - ", &format!(" - {long} "), 1);
        assert_eq!(split(&format!("{first}{second}")), None);
    }

    /// An IPv4 or IPv6 address.
    fn address() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<[u8; 4]>().prop_map(|o| std::net::Ipv4Addr::from(o).to_string()),
            any::<[u16; 8]>().prop_map(|s| std::net::Ipv6Addr::from(s).to_string()),
        ]
    }

    /// A `$remote_user` as nginx logs it: `-`, one word, or words with
    /// spaces, dashes and brackets (none of them an address followed by
    /// ` - `, which is the documented ambiguity, nor holding a date head).
    fn user() -> impl Strategy<Value = String> {
        let word = select(vec![
            "John", "Smith", "-", "x[y]z", "O'Neil", "q.r", "42", "[", "]",
        ]);
        prop_oneof![
            Just("-".to_string()),
            "[A-Za-z_@.]{1,12}",
            prop::collection::vec(word, 1..6).prop_map(|w| w.join(" ")),
        ]
    }

    /// What is left of an entry cut short after its request's quote opens:
    /// any text but a bare `"`, not ending in a character that an address
    /// glued on after it could start with (those join the address).
    fn cut_tail() -> impl Strategy<Value = String> {
        let piece = select(vec![
            "GET",
            " /a",
            "/b?c=1",
            " HTTP/1.1",
            "\\x22",
            " 200",
            " [",
            "]",
            " - ",
            "%20",
            "x",
            " 9.9.9.9 - - ",
            "[05/Jan/2026:00:00:06 +0000] \\x22",
        ]);
        (
            prop::collection::vec(piece, 0..8),
            select(vec!["", "x", " ", "/", "]", "-", "\\x22 "]),
        )
            .prop_map(|(pieces, end)| {
                let mut tail = pieces.concat();
                while tail.ends_with(|c: char| c.is_ascii_hexdigit() || c == '.' || c == ':') {
                    tail.pop();
                }
                tail + end
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// An entry glued onto one cut short anywhere after its request's
        /// quote opens is found where it starts, whatever its user.
        #[test]
        fn a_glued_entry_is_found_where_it_starts(
            first_address in address(),
            first_user in user(),
            tail in cut_tail(),
            second_address in address(),
            second_user in user(),
        ) {
            let first = format!(
                "{first_address} - {first_user} [05/Jan/2026:00:00:05 +0000] \"{tail}"
            );
            let second = format!(
                "{second_address} - {second_user} [05/Jan/2026:00:00:06 +0000] \"GET /b HTTP/1.1\" 200 1 \"-\" \"c\""
            );
            let line = format!("{first}{second}");
            let open = first.find(" [05/Jan").unwrap() + 1;
            prop_assert_eq!(second_entry(line.as_bytes(), open), Some(first.len()));
        }

        /// A whole entry whose fields hold dates, addresses and dashes, with
        /// every quote inside them escaped as nginx writes it, has no second.
        #[test]
        fn a_whole_entry_has_no_second(
            address in address(),
            user in user(),
            tail in cut_tail(),
            agent in cut_tail(),
        ) {
            let line = format!(
                "{address} - {user} [05/Jan/2026:00:00:05 +0000] \"GET /{tail} HTTP/1.1\" 200 1 \"-\" \"{agent}\""
            );
            let open = line.find(" [05/Jan").unwrap() + 1;
            prop_assert_eq!(second_entry(line.as_bytes(), open), None);
        }
    }

    #[test]
    fn lines_of_one_entry_have_no_second() {
        for line in [
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTTP/1.1" 200 1 "-" "x""#,
            // A bracketed date in a field, escaped as nginx and Apache write `"`.
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTTP/1.1" 200 1 "-" "x 5.6.7.8 - - [05/Jan/2026:00:00:06 +0000] \x22GET""#,
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTTP/1.1" 200 1 "-" "x 5.6.7.8 - - [05/Jan/2026:00:00:06 +0000] \"GET""#,
            // Brackets of an in-app browser's user agent.
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET / HTTP/1.1" 200 1 "-" "M [FBAN/FBIOS;FBAV/1]""#,
            // A head whose address is no address.
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTzz - - [05/Jan/2026:00:00:06 +0000] "GET /b HTTP/1.1" 200 1"#,
            r#"1.2.3.4 - - [05/Jan/2026:00:00:05 +0000] "GET /a HTzz - a b [05/Jan/2026:00:00:06 +0000] "GET /b HTTP/1.1" 200 1"#,
            "[05/Jan/2026:00:00:05 +0000] [",
        ] {
            assert_eq!(split(line), None, "{line}");
        }
    }
}
