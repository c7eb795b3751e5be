//! Whether a followed file is a compressed one, from its first bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;

/// What a file's first bytes say about it.
pub(super) enum Start {
    /// Nothing yet, or only the first bytes of a compressed format's magic
    /// number: wait for more.
    Unknown,
    Plain,
    Compressed(&'static str),
}

/// Looks at the first bytes of `file` for the magic numbers ingestion
/// decompresses by (gzip, zstd).
pub(super) fn start_of(file: &File) -> Start {
    const MAGIC: [(&[u8], &str); 2] =
        [(&[0x1f, 0x8b], "gzip"), (&[0x28, 0xb5, 0x2f, 0xfd], "zstd")];
    let mut first = [0u8; 4];
    let Ok(read) = file.read_at(&mut first, 0) else {
        return Start::Plain; // the read that follows reports the error
    };
    let first = &first[..read];
    if first.is_empty() {
        return Start::Unknown;
    }
    for (magic, kind) in MAGIC {
        if first.starts_with(magic) {
            return Start::Compressed(kind);
        }
        if magic.starts_with(first) {
            return Start::Unknown;
        }
    }
    Start::Plain
}
