//! `--format table`: aligned text for a terminal, coloured unless `NO_COLOR` is
//! set or the output is not a terminal. All text passes through
//! [`escape::terminal`], so log content cannot move the cursor or clear the screen.

use std::fmt::Write;

use super::chart;
use super::document::{Align, Block, Document, NO_ROWS, Table};
use crate::text::escape;

const BOLD: &str = "\x1b[1m";
const YELLOW: &str = "\x1b[33m";
const RESET: &str = "\x1b[0m";

/// Renders `doc` as aligned text.
pub fn render(doc: &Document, colour: bool) -> String {
    let paint = |code: &str, text: &str| {
        if colour {
            format!("{code}{text}{RESET}")
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    let _ = writeln!(out, "{}", paint(BOLD, &escape::terminal(&doc.title)));
    for block in doc.shown_blocks() {
        match block {
            Block::Heading(h) => {
                let _ = write!(out, "\n{}\n", paint(BOLD, &escape::terminal(h)));
            }
            Block::Paragraph(p) => {
                let _ = writeln!(out, "{}", escape::terminal(p));
            }
            Block::Warning(w) => {
                let _ = writeln!(out, "{} {}", paint(YELLOW, "warning:"), escape::terminal(w));
            }
            Block::Facts(facts) => {
                let width = facts
                    .iter()
                    .map(|(k, _)| k.chars().count())
                    .max()
                    .unwrap_or(0);
                for (k, v) in facts {
                    let _ = writeln!(
                        out,
                        "  {:<width$}  {}",
                        escape::terminal(k),
                        escape::terminal(v)
                    );
                }
            }
            Block::Table(t) if t.rows.is_empty() => {
                let _ = writeln!(out, "  {NO_ROWS}");
            }
            Block::Table(t) => render_table(t, &mut out),
            Block::Chart(c) => {
                // Terminals cannot draw: the chart's key figures instead.
                let mut lines = chart::summary(c).into_iter();
                let title = lines.next().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{} {}",
                    paint(BOLD, "chart:"),
                    escape::terminal(&title)
                );
                for line in lines {
                    let _ = writeln!(out, "  {}", escape::terminal(&line));
                }
            }
        }
    }
    out
}

/// Cells wider than this are cut with an ellipsis, so a long path cannot push the
/// other columns off the screen (the JSON, CSV and Markdown outputs keep it whole).
const MAX_CELL_CHARS: usize = 60;

fn clip(cell: &str) -> String {
    let escaped = escape::terminal(cell);
    if escaped.chars().count() <= MAX_CELL_CHARS {
        return escaped.into_owned();
    }
    let mut cut: String = escaped.chars().take(MAX_CELL_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// `t` as aligned text, as in [`render`] (each line indented by two
/// spaces), with every cell whole (escaped, not cut): a listing to read
/// row by row, such as `export --check`'s.
pub fn whole_table_text(t: &Table) -> String {
    let mut out = String::new();
    align(t, |c| escape::terminal(c).into_owned(), &mut out);
    out
}

fn render_table(t: &Table, out: &mut String) {
    align(t, clip, out);
}

/// The rows of `t`, each cell made text by `cell`, in aligned columns.
fn align(t: &Table, cell: impl Fn(&str) -> String, out: &mut String) {
    let cells: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|r| r.iter().map(|c| cell(c)).collect())
        .collect();
    let widths: Vec<usize> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, (title, _))| {
            cells
                .iter()
                .map(|r| r[i].chars().count())
                .chain([title.chars().count()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |row: &[String]| {
        let parts: Vec<String> = row
            .iter()
            .zip(&t.columns)
            .zip(&widths)
            .map(|((cell, (_, align)), &w)| match align {
                Align::Left => format!("{cell:<w$}"),
                Align::Right => format!("{cell:>w$}"),
            })
            .collect();
        format!("  {}", parts.join("  ").trim_end())
    };
    let titles: Vec<String> = t.columns.iter().map(|(title, _)| title.clone()).collect();
    let _ = writeln!(out, "{}", line(&titles));
    for row in &cells {
        let _ = writeln!(out, "{}", line(row));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_and_escapes() {
        let mut doc = Document::new("T");
        let mut t = Table::new(&["client", "requests>"]);
        t.row(vec!["a\x1b[2J".into(), "5".into()]);
        t.row(vec!["bb".into(), "120".into()]);
        doc.table(t);
        doc.warning("careful");
        let text = render(&doc, false);
        assert_eq!(
            text,
            "T\n  client    requests\n  a\\x1b[2J         5\n  bb             120\nwarning: careful\n"
        );
        assert!(render(&doc, true).contains("\x1b[1mT\x1b[0m"));
        assert_eq!(clip(&"x".repeat(100)).chars().count(), MAX_CELL_CHARS);
    }

    #[test]
    fn charts_are_summarised_and_escaped() {
        use crate::output::document::{Axis, Bar, Chart, ChartKind};
        let mut doc = Document::new("T");
        let bars = vec![Bar {
            label: "/a\x1b[2J".into(),
            value: 3.0,
        }];
        doc.chart(Chart::new(
            "Per endpoint",
            Axis::linear("requests"),
            Axis::linear("path"),
            ChartKind::Bars(bars),
        ));
        assert_eq!(
            render(&doc, false),
            "T\nchart: Per endpoint\n  /a\\x1b[2J: 3 requests\n"
        );
    }
}
