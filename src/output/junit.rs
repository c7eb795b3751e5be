//! JUnit XML for CI systems: one test case per policy rule (plus one for the
//! flagged-clients gate), failing when any of its gates fails. Every text is
//! XML-escaped and stripped of characters XML 1.0 cannot carry.

use std::fmt::Write;

use crate::text::escape;

/// A test case: its name and its gate results as (passed, message).
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    pub name: String,
    pub checks: Vec<(bool, String)>,
}

/// Escapes text for XML content and attributes: HTML escaping is valid XML 1.0
/// too, and it turns the control characters XML cannot carry into visible
/// escapes (`\x1b`). A
/// newline or tab is written as a character reference, which an attribute
/// keeps (a parser reads a raw one in an attribute as a space).
fn xml(text: &str) -> String {
    escape::html(text)
        .replace('\n', "&#10;")
        .replace('\t', "&#9;")
}

/// A JUnit document with one suite named `suite`.
pub fn render(suite: &str, cases: &[Case]) -> String {
    let failures = cases
        .iter()
        .filter(|c| c.checks.iter().any(|(ok, _)| !ok))
        .count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"{0}\" tests=\"{1}\" failures=\"{failures}\">",
        xml(suite),
        cases.len()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{0}\" tests=\"{1}\" failures=\"{failures}\" errors=\"0\" skipped=\"0\">",
        xml(suite),
        cases.len()
    );
    for case in cases {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{}\"",
            xml(suite),
            xml(&case.name)
        );
        let failed: Vec<&String> = case
            .checks
            .iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, m)| m)
            .collect();
        let all: Vec<&str> = case.checks.iter().map(|(_, m)| m.as_str()).collect();
        if failed.is_empty() && all.is_empty() {
            out.push_str("/>\n");
            continue;
        }
        out.push_str(">\n");
        if let Some(first) = failed.first() {
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"gate\">{}</failure>",
                xml(first),
                xml(&failed
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n"))
            );
        }
        let _ = writeln!(
            out,
            "      <system-out>{}</system-out>",
            xml(&all.join("\n"))
        );
        out.push_str("    </testcase>\n");
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_and_passing_cases() {
        let cases = vec![
            Case {
                name: "global".into(),
                checks: vec![(true, "ok <fine>".into())],
            },
            Case {
                name: "a\"&b\nc\td".into(),
                checks: vec![(false, "rejects 5% \x1b[2J".into()), (true, "x".into())],
            },
            Case {
                name: "empty".into(),
                checks: vec![],
            },
        ];
        let xml_text = render("rlctl", &cases);
        assert!(xml_text.contains("tests=\"3\" failures=\"1\""));
        assert!(xml_text.contains("name=\"a&quot;&amp;b&#10;c&#9;d\""));
        assert!(xml_text.contains("<failure message=\"rejects 5% \\x1b[2J\" type=\"gate\">"));
        assert!(xml_text.contains("<system-out>ok &lt;fine&gt;</system-out>"));
        assert!(xml_text.contains("name=\"empty\"/>"));
        assert!(!xml_text.contains('\x1b'));
    }
}
