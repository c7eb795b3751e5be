//! `--format markdown`: GitHub-flavoured Markdown that fits a pull-request comment
//! or `$GITHUB_STEP_SUMMARY`. Cells and text are escaped with
//! [`escape::markdown`], so log content cannot break a table or inject HTML,
//! and a table cell or fact longer than [`CELL_CHARS`] characters is cut
//! there, a heading or paragraph after [`TEXT_CHARS`] (a path of a megabyte,
//! or a rule named after one, would otherwise make the report too long for a
//! comment, 65,536 characters on GitHub; the JSON report keeps it whole).
//! A document still longer (many rules, clients with long names) is cut at
//! its last line that fits, with a note saying so.

use std::fmt::Write;

use super::chart;
use super::document::{Align, Block, Document, NO_ROWS};
use crate::text::escape;

/// The most characters of log content a table cell or a fact shows.
pub const CELL_CHARS: usize = 200;
/// The most characters a heading, paragraph or warning shows (several names
/// and the words around them).
pub const TEXT_CHARS: usize = 1000;

/// `text` escaped, cut after [`CELL_CHARS`] characters with a note of how
/// many were left out.
fn cell(text: &str) -> String {
    cut(text, CELL_CHARS)
}

/// `text` escaped, cut after [`TEXT_CHARS`] characters.
fn text(text: &str) -> String {
    cut(text, TEXT_CHARS)
}

/// `text` escaped, cut after `most` characters with a note of how many were
/// left out.
fn cut(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        None => escape::markdown(text),
        Some((end, _)) => {
            let left_out = text[end..].chars().count();
            format!(
                "{}… ({left_out} more characters)",
                escape::markdown(&text[..end])
            )
        }
    }
}

/// The most characters a GitHub comment holds: GitHub refuses a longer body.
pub const COMMENT_CHARS: usize = 65_536;
/// Room kept for the note that says where a long document was cut.
const CUT_NOTE_ROOM: usize = 300;

/// Renders `doc` as Markdown, cut at a line to fit a comment when it would
/// not (many rules and clients with long names), saying so.
pub fn render(doc: &Document) -> String {
    within_a_comment(render_whole(doc))
}

/// `whole` when it fits [`COMMENT_CHARS`], else its lines up to the last
/// that fits with a note of what was left out.
fn within_a_comment(whole: String) -> String {
    let total = whole.chars().count();
    if total <= COMMENT_CHARS {
        return whole;
    }
    let (mut kept, mut end) = (0, 0);
    for line in whole.split_inclusive('\n') {
        let chars = line.chars().count();
        if kept + chars > COMMENT_CHARS - CUT_NOTE_ROOM {
            break;
        }
        (kept, end) = (kept + chars, end + line.len());
    }
    format!(
        "{}\n> **Cut here** to fit a pull-request comment: {kept} of {total} characters shown \
         (GitHub takes {COMMENT_CHARS}); the HTML and JSON outputs hold it all.\n",
        &whole[..end]
    )
}

fn render_whole(doc: &Document) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## {}", text(&doc.title));
    for block in doc.shown_blocks() {
        out.push('\n');
        match block {
            Block::Heading(h) => {
                let _ = writeln!(out, "### {}", text(h));
            }
            Block::Paragraph(p) => {
                let _ = writeln!(out, "{}", text(p));
            }
            Block::Warning(w) => {
                let _ = writeln!(out, "> **Warning**: {}", text(w));
            }
            Block::Facts(facts) => {
                for (k, v) in facts {
                    let _ = writeln!(out, "- **{}**: {}", escape::markdown(k), cell(v));
                }
            }
            Block::Table(t) if t.rows.is_empty() => {
                let _ = writeln!(out, "{NO_ROWS}");
            }
            Block::Table(t) => {
                let titles: Vec<String> =
                    t.columns.iter().map(|(c, _)| escape::markdown(c)).collect();
                let _ = writeln!(out, "| {} |", titles.join(" | "));
                let rules: Vec<&str> = t
                    .columns
                    .iter()
                    .map(|(_, a)| if *a == Align::Right { "---:" } else { "---" })
                    .collect();
                let _ = writeln!(out, "| {} |", rules.join(" | "));
                for row in &t.rows {
                    let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
                    let _ = writeln!(out, "| {} |", cells.join(" | "));
                }
            }
            Block::Chart(c) => {
                // Markdown cannot draw: the chart's key figures as a list.
                let mut lines = chart::summary(c).into_iter();
                let title = lines.next().unwrap_or_default();
                let _ = writeln!(out, "**Chart: {}**\n", text(&title));
                for line in lines {
                    let _ = writeln!(out, "- {}", text(&line));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::document::Table;

    #[test]
    fn hostile_cells_stay_inside_their_cell() {
        let mut doc = Document::new("Report");
        let mut t = Table::new(&["path", "n>"]);
        t.row(vec!["/a|<script>`x`".into(), "1".into()]);
        doc.table(t);
        assert_eq!(
            render(&doc),
            "## Report\n\n| path | n |\n| --- | ---: |\n| /a\\|&lt;script&gt;\\`x\\` | 1 |\n"
        );
    }

    #[test]
    fn a_table_without_rows_reads_none_on_every_page_and_csv_keeps_its_titles() {
        let mut doc = Document::new("R");
        doc.table(Table::new(&["client", "rejected>"]));
        doc.table(Table::new(&["client", "rejected"]).csv_only());
        assert_eq!(render(&doc), "## R\n\nnone\n");
        assert_eq!(crate::output::table::render(&doc, false), "R\n  none\n");
        let html = crate::output::html::render(&doc);
        assert!(html.contains("<p class=\"none\">none</p>"), "{html}");
        assert!(!html.contains("<table>"), "{html}");
        assert_eq!(
            crate::output::csv::render(&doc).unwrap(),
            "client,rejected\n"
        );
    }

    #[test]
    fn a_long_cell_is_cut_with_a_note() {
        let long = format!("/{}", "<x>".repeat(1000));
        let shown = cell(&long);
        assert!(shown.starts_with("/&lt;x&gt;"));
        assert!(shown.ends_with("… (2801 more characters)"), "{shown}");
        assert_eq!(cell(&"é".repeat(CELL_CHARS)), "é".repeat(CELL_CHARS));
    }

    #[test]
    fn a_document_longer_than_a_comment_is_cut_at_a_line_saying_so() {
        let mut doc = Document::new("Report");
        let mut t = Table::new(&["client", "n>"]);
        for i in 0..1000 {
            t.row(vec![format!("{i}{}", "x".repeat(150)), i.to_string()]);
        }
        doc.table(t);
        let whole = render_whole(&doc);
        let shown = render(&doc);
        assert!(whole.chars().count() > COMMENT_CHARS);
        assert!(shown.chars().count() <= COMMENT_CHARS, "{}", shown.len());
        let (kept, note) = shown.rsplit_once("\n\n> **Cut here**").unwrap();
        assert!(whole.starts_with(&format!("{kept}\n")));
        assert!(note.contains(&format!("of {} characters shown", whole.chars().count())));
        // What fits is left whole.
        let mut small = Document::new("Report");
        small.paragraph("short");
        assert_eq!(render(&small), render_whole(&small));
    }

    #[test]
    fn charts_are_summarised_as_escaped_lists() {
        use crate::output::document::{Axis, Bar, Chart, ChartKind};
        let mut doc = Document::new("Report");
        let bars = vec![Bar {
            label: "/a|<b>".into(),
            value: 3.0,
        }];
        doc.chart(Chart::new(
            "Per endpoint",
            Axis::linear("requests"),
            Axis::linear("path"),
            ChartKind::Bars(bars),
        ));
        assert_eq!(
            render(&doc),
            "## Report\n\n**Chart: Per endpoint**\n\n- /a\\|&lt;b&gt;: 3 requests\n"
        );
    }
}
