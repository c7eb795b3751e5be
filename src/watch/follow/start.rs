//! Whether a followed file is a compressed one, from its first bytes.

use std::fs::File;
use std::os::unix::fs::FileExt;

use crate::ingest::source::Compression;

/// What a file's first bytes say about it.
pub(super) enum Start {
    /// Nothing yet, or only the first bytes of a compressed format's magic
    /// number: wait for more.
    Unknown,
    Plain,
    Compressed(&'static str),
}

/// Looks at the first bytes of `file` for the magic numbers ingestion
/// decompresses by ([`Compression::MAGIC`]).
pub(super) fn start_of(file: &File) -> Start {
    let mut first = [0u8; 4];
    let Ok(read) = file.read_at(&mut first, 0) else {
        return Start::Plain; // the read that follows reports the error
    };
    let first = &first[..read];
    if first.is_empty() {
        return Start::Unknown;
    }
    match Compression::of(first) {
        Compression::None
            if Compression::MAGIC
                .iter()
                .any(|(magic, _)| magic.starts_with(first)) =>
        {
            Start::Unknown
        }
        Compression::None => Start::Plain,
        kind => Start::Compressed(kind.name()),
    }
}
