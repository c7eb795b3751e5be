//! Rendering of results: one file per output format, all fed the same
//! [`document::Document`] (JSON excepted: it serializes each command's result
//! types, the stable contract), plus the escaping every format relies on and the
//! atomic writing of output files.

pub mod chart;
pub mod csv;
pub mod document;
pub mod escape;
pub mod html;
pub mod markdown;
pub mod table;

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

use crate::cli::OutputFormat;
use document::Document;

/// Renders a result as `format`: `doc` for the text formats, `data` for JSON.
pub fn render(
    format: OutputFormat,
    doc: &Document,
    data: &impl Serialize,
    colour: bool,
) -> anyhow::Result<Vec<u8>> {
    Ok(match format {
        OutputFormat::Table => table::render(doc, colour).into_bytes(),
        OutputFormat::Markdown => markdown::render(doc).into_bytes(),
        OutputFormat::Csv => self::csv::render(doc)?.into_bytes(),
        OutputFormat::Json => json(data)?,
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

/// Writes a file through a temporary file in the same directory and a rename, so
/// a failed write (a full disk) never leaves a half-written file in place of a good one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "output path has no file name")
    })?;
    let tmp = dir.join(format!(
        ".{}.rlctl-{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(&dir.path().join("missing/out.json"), b"x").is_err());
    }
}
