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
mod tests;
