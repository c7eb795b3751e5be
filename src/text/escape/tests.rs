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
                if rest.len() >= 3 && rest.is_char_boundary(3) && rest.as_bytes()[1] <= b'7' =>
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
