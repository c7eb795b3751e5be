//! Opening inputs: files or `-` (stdin), decompressed by magic bytes (gzip,
//! including concatenated members as `logrotate` writes them; zstd), with a
//! shared byte counter for the progress bar.
//!
//! A large uncompressed regular file is memory-mapped instead of read: parsers
//! then read the page cache directly, without the copy `read` makes. Set
//! `RLCTL_NO_MMAP=1` to read such files too (a mapped file that another process
//! truncates while rlctl reads it ends the process with SIGBUS).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Advice, Mmap};

use super::IngestError;

/// How an input is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The magic numbers of the compressed formats inputs are read in.
    pub const MAGIC: [(&[u8], Compression); 2] = [
        (&[0x1f, 0x8b], Compression::Gzip),
        (&[0x28, 0xb5, 0x2f, 0xfd], Compression::Zstd),
    ];

    /// How an input whose first bytes are `first` is compressed.
    pub fn of(first: &[u8]) -> Compression {
        Compression::MAGIC
            .iter()
            .find(|(magic, _)| first.starts_with(magic))
            .map_or(Compression::None, |&(_, kind)| kind)
    }

    /// Its name in reports and messages.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
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
    pub data: Data,
}

/// Where an input's bytes come from.
pub enum Data {
    /// A stream to read (stdin, compressed or small files).
    Stream(Box<dyn Read + Send>),
    /// A memory-mapped file (its consumer adds to the byte counter as it goes).
    Mapped(Arc<Mmap>),
}

/// Files at least this large are mapped rather than read.
pub const MAP_MIN_BYTES: u64 = 4 << 20;

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
            counter: counter.clone(),
        },
    );
    let compression = Compression::of(buffered.fill_buf().map_err(io_err)?);
    let mappable = compression == Compression::None
        && size.is_some_and(|n| n >= MAP_MIN_BYTES)
        && std::env::var_os("RLCTL_NO_MMAP").is_none_or(|v| v.is_empty() || v == "0");
    if mappable && let Some(map) = map_file(path) {
        // Those bytes are counted again as the mapped chunks are consumed.
        counter.fetch_sub(buffered.buffer().len() as u64, Ordering::Relaxed);
        return Ok(Input {
            name,
            path: path.to_path_buf(),
            compression,
            size,
            data: Data::Mapped(Arc::new(map)),
        });
    }
    let reader: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(buffered),
        Compression::Gzip => Box::new(GzipMembers::new(buffered)),
        Compression::Zstd => Box::new(zstd::Decoder::with_buffer(buffered).map_err(io_err)?),
    };
    Ok(Input {
        name,
        path: path.to_path_buf(),
        compression,
        size,
        data: Data::Stream(reader),
    })
}

/// The gzip members of an input, one after another (as `zcat` reads them),
/// which may be followed by zero bytes (tape blocks, some log shippers, a
/// file preallocated then written): GNU gzip ignores those with a warning,
/// and so does this. Any other byte after a member is an error that says
/// so, not a stream cut short.
struct GzipMembers<R: BufRead> {
    /// The member being read; `None` once the input has ended.
    member: Option<flate2::bufread::GzDecoder<R>>,
}

impl<R: BufRead> GzipMembers<R> {
    fn new(input: R) -> Self {
        GzipMembers {
            member: Some(flate2::bufread::GzDecoder::new(input)),
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = &mut self.member else {
                return Ok(0);
            };
            let n = member.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // The member ended, its trailer read: what follows it decides.
            let mut input = self.member.take().expect("matched above").into_inner();
            match input.fill_buf()? {
                [] => return Ok(0),
                // A member's magic bytes (the second, past the end of the
                // buffer, is the decoder's to check).
                [0x1f, 0x8b, ..] | [0x1f] => {
                    self.member = Some(flate2::bufread::GzDecoder::new(input))
                }
                [0, ..] => {
                    let zeros = skip_zeros(&mut input)?;
                    return match input.fill_buf()? {
                        [] => Ok(0),
                        [0x1f, 0x8b, ..] => Err(member_after_zeros(zeros)),
                        _ => Err(not_gzip_after_members(zeros)),
                    };
                }
                _ => return Err(not_gzip_after_members(0)),
            }
        }
    }
}

/// The error for bytes after the last member that are neither a member nor
/// zero padding (`zeros` zero bytes came first).
fn not_gzip_after_members(zeros: u64) -> io::Error {
    let after = match zeros {
        0 => String::new(),
        n => format!(" and {n} zero bytes"),
    };
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "bytes after the last gzip member{after} are not gzip (trailing \
             garbage, as `gzip -t` calls it): cut them off, or decompress \
             the file and read the text"
        ),
    )
}

/// The error for a member after `zeros` zero bytes that follow another:
/// GNU gzip stops at the zeros too, so its requests would be left out.
fn member_after_zeros(zeros: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "a gzip member follows {zeros} zero bytes after the one before it, and GNU gzip \
             stops at such zeros: take them out, so that every member is read"
        ),
    )
}

/// Reads past the zero bytes at the front of `input`; how many there were.
fn skip_zeros(input: &mut impl BufRead) -> io::Result<u64> {
    let mut skipped = 0;
    loop {
        let bytes = input.fill_buf()?;
        let (zeros, all) = match bytes.iter().position(|&b| b != 0) {
            Some(i) => (i, false),
            None => (bytes.len(), true),
        };
        input.consume(zeros);
        skipped += zeros as u64;
        if zeros == 0 || !all {
            return Ok(skipped);
        }
    }
}

/// Maps a regular file read-only; `None` when it cannot be (it is then read).
fn map_file(path: &Path) -> Option<Mmap> {
    let file = File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    // SAFETY: the map is only ever read, as bytes, through `&[u8]`. Another
    // process changing the file while it is mapped could change bytes under that
    // reference; log files are appended to (bytes beyond the mapped length) or
    // rotated by renaming, which leave the mapped bytes as they are. Truncation
    // while mapped raises SIGBUS on access (documented above, with the opt-out).
    let map = unsafe { Mmap::map(&file) }.ok()?;
    let _ = map.advise(Advice::Sequential); // a hint; ignoring a refusal is harmless
    Some(map)
}
