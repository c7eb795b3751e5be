//! Rendering of results: one file per output format, all fed the same
//! [`document::Document`] (JSON excepted: it serializes each command's result
//! types, the stable contract). Escaping and atomic writes live below, in
//! [`crate::text`].

pub mod chart;
pub mod csv;
pub mod document;
pub mod html;
pub mod junit;
pub mod markdown;
pub mod progress;
pub mod table;

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::text::atomic::write_atomic;
use document::Document;

/// The formats a command's result renders to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text for a terminal.
    Table,
    /// The stable JSON contract.
    Json,
    /// Comma-separated rows.
    Csv,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page with inline SVG charts.
    Html,
}

/// Renders a result as `format`: `doc` for the text formats, `data` for JSON.
pub fn render(
    format: Format,
    doc: &Document,
    data: &impl Serialize,
    colour: bool,
) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        Format::Table => table::render(doc, colour).into_bytes(),
        Format::Markdown => markdown::render(doc).into_bytes(),
        Format::Csv => self::csv::render(doc)?.into_bytes(),
        Format::Html => html::render(doc).into_bytes(),
        Format::Json => json(data)?,
    })
}

/// Pretty JSON with a final newline.
pub fn json(data: &impl Serialize) -> serde_json::Result<Vec<u8>> {
    let mut bytes = serde_json::to_vec_pretty(data)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// Writes `bytes` to `path`, or to stdout when `path` is `None` or `-`.
pub fn write_output(path: Option<&Path>, bytes: &[u8]) -> io::Result<()> {
    match path {
        Some(p) if p != Path::new("-") => write_atomic(p, bytes),
        _ => {
            let mut stdout = io::stdout().lock();
            stdout.write_all(bytes)?;
            stdout.flush()
        }
    }
}
