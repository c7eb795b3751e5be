//! Escaping of log-derived text for each place it is shown. Log content is
//! written by strangers (paths, user agents, headers): nothing from a log reaches
//! a terminal, a table cell, a spreadsheet or a browser unescaped.

use std::borrow::Cow;
use std::fmt::Write;

/// For terminals and plain text: control characters (C0, DEL, C1, including ESC
/// of `\x1b[2J` and OSC 8 links) and hidden ones ([`is_hidden`]) become
/// visible `\n`, `\x..`, `\u{..}` escapes, and a backslash that would read as
/// the start of one is doubled ([`reads_as_escape`]), so that the escaping
/// cannot be forged and two texts never look alike; any other backslash
/// stays as it is (`CORP\alice`, a user of an IIS log; `k\xFF`, a byte that
/// is not UTF-8 in a client key).
pub fn terminal(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| shown_escaped(c) || c == '\\') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (i, c) in text.char_indices() {
        match c {
            '\\' if reads_as_escape(&text[i + 1..]) => out.push_str("\\\\"),
            '\\' => out.push('\\'),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() || is_hidden(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether [`terminal`] writes `c` as an escape.
fn shown_escaped(c: char) -> bool {
    c.is_control() || is_hidden(c)
}

/// Whether a backslash shown before what shows as `rest` would read as the
/// start of an escape [`terminal`] writes: `\\`, `\n`, `\t`, `\r`, `\x` with
/// two hex digits below 80, `\u{`, or before a character shown escaped.
fn reads_as_escape(rest: &str) -> bool {
    let hex = |b: Option<&u8>, upto: u8| b.is_some_and(|&b| b.is_ascii_hexdigit() && b <= upto);
    let bytes = rest.as_bytes();
    match rest.chars().next() {
        Some('\\' | 'n' | 't' | 'r') => true,
        Some('x') => hex(bytes.get(1), b'7') && hex(bytes.get(2), b'f'),
        Some('u') => bytes.get(1) == Some(&b'{'),
        Some(c) => shown_escaped(c),
        None => false,
    }
}

/// Characters that change what a reader sees without being seen: Unicode
/// bidirectional controls reorder text ("Trojan Source"), the line and
/// paragraph separators break lines, and the default-ignorable code points
/// (zero-width characters, a byte order mark, invisible operators, variation
/// selectors, tags) make two different keys look the same.
fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1bca0}'..='\u{1bca3}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// For a Markdown table cell: terminal escaping, then characters Markdown would
/// interpret (`|`, backticks, `*`, `_`, `<`, `>`, `[`, `]`...) are backslash- or
/// entity-escaped so a cell cannot break the table, inject HTML or a link. The
/// `:` of `://` and the `.` of a `www.` are escaped too, which keeps GitHub's
/// extended autolinks from making a client name (`http://evil.example`) a
/// link (checked with cmark-gfm). GitHub turns `@name` into a mention that
/// notifies whoever it names, and `#12` into a reference to an issue, after
/// the Markdown is read (escapes do not stop them): a zero-width space
/// (`&#8203;`) follows every `@`, every `#` before a digit and the `-` of
/// `GH-` before one (found by review), as Renovate
/// does for the text it posts (`sanitizeMarkdown`, lib/util/markdown.ts of
/// renovatebot/renovate); that also keeps an e-mail address from becoming a
/// `mailto:` link. `$` is escaped, so that `$x^2$` is not typeset as math.
pub fn markdown(text: &str) -> String {
    let safe = terminal(text);
    let mut out = String::with_capacity(safe.len() + 8);
    for (i, c) in safe.char_indices() {
        let www = || {
            let start = i.saturating_sub(3);
            safe[start..i].eq_ignore_ascii_case("www")
                && !safe[..start].ends_with(|p: char| p.is_alphanumeric())
        };
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' => out.push_str("@&#8203;"),
            '#' if safe[i + 1..].starts_with(|d: char| d.is_ascii_digit()) => {
                out.push_str("\\#&#8203;")
            }
            '-' if is_gh_reference(&safe, i) => out.push_str("-&#8203;"),
            '|' | '`' | '*' | '_' | '[' | ']' | '#' | '~' | '\\' | '$' => {
                out.push('\\');
                out.push(c);
            }
            ':' if safe[i + 1..].starts_with("//") => out.push_str("\\:"),
            '.' if i >= 3 && safe.is_char_boundary(i - 3) && www() => out.push_str("\\."),
            c => out.push(c),
        }
    }
    out
}

/// Whether the `-` at `i` of `text` is that of `GH-` before a digit, which
/// GitHub also reads as a reference to an issue (its "Autolinked
/// references"), in any case, after a character that is no letter or digit.
fn is_gh_reference(text: &str, i: usize) -> bool {
    let head = &text[..i];
    head.len() >= 2
        && head.is_char_boundary(i - 2)
        && head[i - 2..].eq_ignore_ascii_case("gh")
        && !head[..i - 2].ends_with(|p: char| p.is_alphanumeric())
        && text[i + 1..].starts_with(|d: char| d.is_ascii_digit())
}

/// For HTML text and attribute values: control characters (but line breaks
/// and tabs, which the page lays out) and hidden ones become the visible
/// escapes [`terminal`] writes, with a backslash doubled where it is there,
/// so that two keys that differ only in them stay two in the page; then `<`,
/// `>`, `&` and quotes become entities.
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (i, c) in text.char_indices() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            '\\' if reads_as_escape(&text[i + 1..]) => out.push_str("\\\\"),
            c if shown_escaped(c) => out.push_str(&terminal(c.encode_utf8(&mut [0; 4]))),
            c => out.push(c),
        }
    }
    out
}

/// `text` as a regex that matches it literally: [`regex::escape`], with
/// control and hidden characters written as `\x{..}` escapes (which the
/// regex engines of every export target read), so that a route never holds
/// one and reads in a config as it matches.
pub fn regex_literal(text: &str) -> String {
    let escaped = regex::escape(text);
    if !escaped.chars().any(shown_escaped) {
        return escaped;
    }
    let mut out = String::with_capacity(escaped.len() + 8);
    for c in escaped.chars() {
        match shown_escaped(c) {
            true => {
                let _ = write!(out, "\\x{{{:x}}}", c as u32);
            }
            false => out.push(c),
        }
    }
    out
}

/// `text` as a TOML basic string on one line: `"` and `\\` escaped, and every
/// control or hidden character ([`shown_escaped`]) written `\\uXXXX` (or
/// `\\UXXXXXXXX`), so that a value from a log written into a commented-out
/// line of a policy stays on that line (a multi-line string would end the
/// comment and turn the rest of the value into live rules) and reads as
/// [`terminal`] shows it.
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if shown_escaped(c) || c.is_control() => {
                let _ = match u32::from(c) {
                    n @ ..=0xffff => write!(out, "\\u{n:04X}"),
                    n => write!(out, "\\U{n:08X}"),
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// For a CSV cell that a spreadsheet, a pager or a terminal may show: control
/// characters are escaped as for [`terminal`] (so `cat` or `less` on the file
/// cannot be attacked either), and a cell starting with `=`, `+`, `-` or `@` is
/// prefixed with `'` so it is not run as a formula (OWASP's advice; a leading tab
/// or carriage return is already escaped); a lone `-` (no value) and plain numbers
/// stay as they are. A cell starting with `'` gets one more, so that no two
/// texts give one cell (`=x` is `'=x`, and `'=x` is `''=x`): a table replayed
/// with `simulate --events` keeps every client apart. Quoting is left to the
/// CSV writer.
pub fn csv_cell(text: &str) -> Cow<'_, str> {
    let safe = terminal(text);
    match safe.as_bytes().first() {
        Some(b'=' | b'+' | b'-' | b'@' | b'\'') if safe.len() > 1 && !is_plain_number(&safe) => {
            Cow::Owned(format!("'{safe}"))
        }
        _ => safe,
    }
}

/// Negative numbers such as `-5` are data, not formulas.
fn is_plain_number(text: &str) -> bool {
    text.parse::<f64>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_control_sequences() {
        assert_eq!(terminal("/a\x1b[2J"), "/a\\x1b[2J");
        assert_eq!(terminal("plain"), "plain");
        assert_eq!(terminal("a\\x1b"), "a\\\\x1b");
        assert_eq!(
            terminal("\x1b]8;;http://x\x07link"),
            "\\x1b]8;;http://x\\x07link"
        );
        assert_eq!(terminal("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(terminal("a\u{202e}b"), "a\\u{202e}b");
        assert_eq!(terminal("nul\0"), "nul\\x00");
        // Found by review: these reached tables and CSV as they were.
        assert_eq!(terminal("a\u{2028}b\u{2029}"), "a\\u{2028}b\\u{2029}");
        assert_eq!(terminal("\u{feff}1.1.1.1"), "\\u{feff}1.1.1.1");
        assert_eq!(terminal("ad\u{200b}min"), "ad\\u{200b}min");
        assert_eq!(csv_cell("a\u{2028}b"), "a\\u{2028}b");
        assert_eq!(markdown("a\u{2028}b"), "a\\\\u{2028}b");
        assert_eq!(html("a\u{2028}b"), "a\\u{2028}b");
        assert_eq!(terminal("café ☕"), "café ☕");
    }

    #[test]
    fn a_backslash_is_doubled_only_where_it_would_read_as_an_escape() {
        for (text, shown) in [
            ("CORP\\alice", "CORP\\alice"),
            ("k\\xFF", "k\\xFF"),
            ("\\uwe", "\\uwe"),
            ("end\\", "end\\"),
            ("CORP\\nancy", "CORP\\\\nancy"),
            ("a\\x1b", "a\\\\x1b"),
            ("a\\u{9b}", "a\\\\u{9b}"),
            ("a\\\x1b", "a\\\\\\x1b"),
            ("a\\\\b", "a\\\\\\b"),
        ] {
            assert_eq!(terminal(text), shown, "{text:?}");
            assert_eq!(html(text), shown, "{text:?}");
        }
        assert_eq!(markdown("CORP\\alice"), "CORP\\\\alice");
    }

    /// What a reader of [`terminal`]'s text takes it for: `\\` a backslash,
    /// the escapes it writes their characters, any other backslash itself.
    fn read_back(shown: &str) -> String {
        let mut out = String::new();
        let mut rest = shown;
        while let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
            if c != '\\' {
                out.push(c);
                continue;
            }
            let hex = |digits: &str| {
                u32::from_str_radix(digits, 16)
                    .ok()
                    .and_then(char::from_u32)
            };
            let (read, used) = match rest.as_bytes().first() {
                Some(b'\\') => ('\\', 1),
                Some(b'n') => ('\n', 1),
                Some(b't') => ('\t', 1),
                Some(b'r') => ('\r', 1),
                Some(b'x')
                    if rest.len() >= 3
                        && rest.is_char_boundary(3)
                        && rest.as_bytes()[1] <= b'7' =>
                {
                    match hex(&rest[1..3]) {
                        Some(c) => (c, 3),
                        None => ('\\', 0),
                    }
                }
                Some(b'u') if rest[1..].starts_with('{') => {
                    let end = rest.find('}').expect("an escape \\u{ is closed");
                    (hex(&rest[2..end]).expect("a code point"), end + 1)
                }
                _ => ('\\', 0),
            };
            out.push(read);
            rest = &rest[used..];
        }
        out
    }

    #[test]
    fn toml_strings_stay_on_one_line() {
        let value = "#\n[[rule]]\nname = \"pwn\"\n#\"\"\" \\ \t\r\u{7f}\u{202e}\u{1f600}";
        let written = toml_string(value);
        assert_eq!(
            written,
            r##""#\u000A[[rule]]\u000Aname = \"pwn\"\u000A#\"\"\" \\ \u0009\u000D\u007F\u202E😀""##
        );
        let read: toml::Table = toml::from_str(&format!("v = {written}")).unwrap();
        assert_eq!(read["v"].as_str(), Some(value));
    }

    proptest::proptest! {
        /// Any text reads back from its TOML string, which holds no line break.
        #[test]
        fn toml_strings_read_back(text in proptest::string::string_regex("(.|\n|\r|\\\\|\"){0,24}").unwrap()) {
            let written = toml_string(&text);
            proptest::prop_assert!(!written.contains(['\n', '\r']), "{}", written);
            let read: toml::Table = toml::from_str(&format!("v = {written}")).unwrap();
            proptest::prop_assert_eq!(read["v"].as_str(), Some(text.as_str()));
        }
    }

    proptest::proptest! {
        /// Every text reads back from what the terminal shows of it, so no
        /// two texts are shown alike.
        #[test]
        fn terminal_text_reads_back_as_the_text(
            text in "[\\\\ntrxu{}0179aFfG\x1b\x07\n\u{9b}\u{202e}é]{0,12}",
        ) {
            proptest::prop_assert_eq!(read_back(&terminal(&text)), text);
        }
    }

    #[test]
    fn markdown_cells_cannot_break_tables_or_inject() {
        assert_eq!(markdown("a|b"), "a\\|b");
        assert_eq!(markdown("<script>"), "&lt;script&gt;");
        assert_eq!(markdown("`x`"), "\\`x\\`");
        assert_eq!(markdown("[l](http://e)"), "\\[l\\](http\\://e)");
        // No autolinks (GitHub's extension): `http\://`, `www\.`.
        assert_eq!(
            markdown("https://evil.example/x"),
            "https\\://evil.example/x"
        );
        assert_eq!(markdown("WWW.evil.example"), "WWW\\.evil.example");
        assert_eq!(markdown("x www.e.x"), "x www\\.e.x");
        assert_eq!(markdown("awww.e.x"), "awww.e.x");
        assert_eq!(markdown("2001:db8::/64"), "2001:db8::/64");
        assert_eq!(markdown("é.www.x"), "é.www\\.x");
        // No mentions, issue references or mail links on GitHub.
        assert_eq!(markdown("@org/team"), "@&#8203;org/team");
        assert_eq!(markdown("fix #42 #a"), "fix \\#&#8203;42 \\#a");
        assert_eq!(markdown("a@b.example"), "a@&#8203;b.example");
        assert_eq!(
            markdown("GH-1234 gh-7 (GH-8) aGH-9 GH-x é-1"),
            "GH-&#8203;1234 gh-&#8203;7 (GH-&#8203;8) aGH-9 GH-x é-1"
        );
        assert_eq!(markdown("$x^2$"), "\\$x^2\\$");
    }

    #[test]
    fn html_is_inert() {
        assert_eq!(
            html("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(html("\x1b[2J"), "\\x1b[2J");
        assert_eq!(html("a\u{202e}b"), "a\\u{202e}b");
        // Found by review: every control character became U+FFFD, so keys
        // that differ only in one (or in a U+FFFD of their own) were one.
        let cells = ["a\x1bb", "a\x07b", "a\u{fffd}b", "a\\x1bb"].map(html);
        assert_eq!(cells, ["a\\x1bb", "a\\x07b", "a\u{fffd}b", "a\\\\x1bb"]);
        assert_eq!(html("line\nnext\tcell"), "line\nnext\tcell");
    }

    #[test]
    fn default_ignorable_characters_are_shown() {
        // Found by review: these looked like `admin` in every output.
        for (hidden, shown) in [
            ("admin\u{e0020}", "admin\\u{e0020}"),
            ("admin\u{2062}", "admin\\u{2062}"),
            ("admin\u{61c}", "admin\\u{61c}"),
            ("admin\u{ad}", "admin\\u{ad}"),
            ("admin\u{fe0f}", "admin\\u{fe0f}"),
        ] {
            assert_eq!(terminal(hidden), shown);
            assert_eq!(html(hidden), shown);
        }
        assert_eq!(terminal("café ünï 日本"), "café ünï 日本");
    }

    #[test]
    fn regex_literals_hold_no_control_character() {
        let literal = regex_literal("/g\x1b[2J.x");
        assert_eq!(literal, r"/g\x{1b}\[2J\.x");
        let re = regex::Regex::new(&format!("^{literal}$")).unwrap();
        assert!(re.is_match("/g\x1b[2J.x"));
        assert!(!re.is_match("/g\x1b[2JAx"));
        assert_eq!(regex_literal("/a.b"), r"/a\.b");
        assert_eq!(regex_literal("/a\u{202e}b"), r"/a\x{202e}b");
    }

    #[test]
    fn csv_formula_prefixes_are_neutralised() {
        assert_eq!(csv_cell("=1+1"), "'=1+1");
        assert_eq!(csv_cell("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(csv_cell("+cmd"), "'+cmd");
        assert_eq!(csv_cell("-2+3"), "'-2+3");
        assert_eq!(csv_cell("-5"), "-5");
        assert_eq!(csv_cell("-"), "-");
        assert_eq!(csv_cell("/api"), "/api");
        assert_eq!(csv_cell("\t=1"), "\\t=1");
        assert_eq!(csv_cell("=a\x1b[2J"), "'=a\\x1b[2J");
        assert_eq!(csv_cell("nul\0"), "nul\\x00");
        // Found by review: `=x` and `'=x` were both `'=x`, one client when
        // `simulate --events` replayed the CSV. A leading quote is doubled.
        assert_eq!(csv_cell("'=x"), "''=x");
        assert_eq!(csv_cell("'abc"), "''abc");
        assert_eq!(csv_cell("'"), "'");
    }

    #[test]
    fn csv_cells_of_different_texts_differ() {
        // Every pair of texts made of these pieces.
        let prefixes = ["", "'", "''", "=", "'=", "-", "'-", "@", "'@", "+", "\\"];
        let bodies = ["", "x", "5", "\x1b", "\\x1b", "-"];
        let texts: Vec<String> = prefixes
            .iter()
            .flat_map(|p| bodies.iter().map(move |b| format!("{p}{b}")))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut cells = std::collections::HashMap::new();
        for text in &texts {
            if let Some(other) = cells.insert(csv_cell(text).into_owned(), text) {
                panic!("{other:?} and {text:?} give one cell");
            }
        }
    }
}
