//! `--log-format auto`: decide between combined/common and JSON lines from the
//! first lines of an input. Custom nginx formats cannot be guessed; they are given
//! with `--log-format '<log_format>'` or `--nginx-conf`.

use super::combined::CombinedParser;
use super::record::{LineParser, Record, SkipReason};

/// What detection found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Combined,
    Common,
    Json,
}

impl Detected {
    /// The name used in messages and `--log-format`.
    pub fn name(self) -> &'static str {
        match self {
            Detected::Combined => "combined",
            Detected::Common => "common",
            Detected::Json => "json",
        }
    }
}

/// How many non-blank lines detection looks at.
const SAMPLE_LINES: usize = 50;

/// Detects the format of `head` (the first bytes of an input); `None` when no
/// format fits at least half of the sampled lines.
pub fn detect(head: &[u8]) -> Option<Detected> {
    let lines: Vec<&[u8]> = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty())
        .take(SAMPLE_LINES)
        .collect();
    if lines.is_empty() {
        return None;
    }
    let json = lines.iter().filter(|l| is_json_object(l)).count();
    let mut parser = CombinedParser::new(&[]).ok()?;
    let mut record = Record::default();
    let mut combined = 0;
    let mut with_agent = 0;
    for line in &lines {
        record.clear(0);
        match parser.parse(line, &mut record) {
            Ok(()) => {
                combined += 1;
                with_agent += usize::from(has_quoted_tail(line));
            }
            Err(SkipReason::Malformed(_)) => {}
            Err(_) => combined += 1, // the shape fits; the value is bad
        }
    }
    let half = lines.len().div_ceil(2);
    if json >= half && json >= combined {
        Some(Detected::Json)
    } else if combined >= half {
        Some(if with_agent * 2 >= combined {
            Detected::Combined
        } else {
            Detected::Common
        })
    } else {
        None
    }
}

fn is_json_object(line: &[u8]) -> bool {
    memchr::memchr(b'{', line).is_some_and(|start| {
        serde_json::from_slice::<serde_json::Value>(&line[start..]).is_ok_and(|v| v.is_object())
    })
}

/// True when the line ends with a quoted field (a user agent) after the status.
fn has_quoted_tail(line: &[u8]) -> bool {
    line.trim_ascii_end().ends_with(b"\"") && line.iter().filter(|&&b| b == b'"').count() >= 6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_each_family() {
        let combined =
            br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326 "-" "curl/8""#;
        assert_eq!(detect(combined), Some(Detected::Combined));
        let common = br#"1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.0" 200 2326"#;
        assert_eq!(detect(common), Some(Detected::Common));
        let json = b"{\"ts\":1,\"path\":\"/\"}\n\n{\"ts\":2}\n";
        assert_eq!(detect(json), Some(Detected::Json));
        let caddy = b"caddy  | {\"level\":\"info\",\"ts\":1.5}\n";
        assert_eq!(detect(caddy), Some(Detected::Json));
    }

    #[test]
    fn nothing_fits() {
        assert_eq!(detect(b"hello world\nfoo\n"), None);
        assert_eq!(detect(b"\n\n"), None);
    }

    #[test]
    fn a_minority_of_bad_lines_does_not_spoil_detection() {
        let text = b"garbage\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"a\"\n";
        assert_eq!(detect(text), Some(Detected::Combined));
    }
}
