//! Opening inputs: files or `-` (stdin), decompressed by magic bytes (gzip,
//! including concatenated members as `logrotate` writes them; zstd), with a
//! shared byte counter for the progress bar.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::IngestError;

/// How an input is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// An opened input.
pub struct Input {
    /// The name shown in messages (`-` shows as `<stdin>`).
    pub name: String,
    pub path: PathBuf,
    pub compression: Compression,
    /// Size on disk, when known (progress bar total).
    pub size: Option<u64>,
    /// The decompressed bytes.
    pub reader: Box<dyn Read + Send>,
}

/// Counts bytes as they are read from disk (before decompression).
struct Counting<R> {
    inner: R,
    counter: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// A display name for `path`.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    }
}

/// Opens `path` (or stdin for `-`) and sets up decompression.
pub fn open(path: &Path, counter: Arc<AtomicU64>) -> Result<Input, IngestError> {
    let name = display_name(path);
    let io_err = |source: io::Error| IngestError::Open {
        file: name.clone(),
        source,
    };
    let (raw, size): (Box<dyn Read + Send>, Option<u64>) = if path == Path::new("-") {
        (Box::new(io::stdin()), None)
    } else {
        let meta = std::fs::metadata(path).map_err(io_err)?;
        if meta.is_dir() {
            return Err(IngestError::Open {
                file: name,
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "is a directory, not a log file",
                ),
            });
        }
        (
            Box::new(File::open(path).map_err(io_err)?),
            Some(meta.len()),
        )
    };
    let mut buffered = BufReader::with_capacity(
        1 << 20,
        Counting {
            inner: raw,
            counter,
        },
    );
    let magic = buffered.fill_buf().map_err(io_err)?;
    let compression = match magic {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
        _ => Compression::None,
    };
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(buffered),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
        Compression::Zstd => Box::new(zstd::Decoder::with_buffer(buffered).map_err(io_err)?),
    };
    Ok(Input {
        name,
        path: path.to_path_buf(),
        compression,
        size,
        reader,
    })
}
