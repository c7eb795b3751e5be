//! Splitting a byte stream into chunks of whole lines.
//!
//! Chunks are large (megabytes) so that parsing can run on several threads.
//! Memory never grows with line length: a line longer than [`MAX_LINE_BYTES`] is
//! reported as a [`Piece::TooLong`] and its bytes are discarded as they stream by.
//! Lines are numbered where the pieces are put back in order (counting the
//! lines of every piece before), so this thread never counts newlines.

use std::io::{self, Read};
use std::ops::{Deref, Range};
use std::sync::Arc;

use memmap2::Mmap;

/// The longest line rlctl parses; longer lines are skipped and counted.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Target size of a chunk.
pub const CHUNK_BYTES: usize = 4 << 20;

/// What the splitters yield.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece {
    /// Whole lines (the last one may lack its newline at the end of input).
    Lines { data: ChunkData },
    /// One line too long to keep, of `len` bytes.
    TooLong { len: u64 },
}

/// The bytes of a chunk: a buffer it was read into, or a range of a mapped file.
pub enum ChunkData {
    Owned(Vec<u8>),
    Mapped { map: Arc<Mmap>, range: Range<usize> },
}

impl Deref for ChunkData {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            ChunkData::Owned(data) => data,
            ChunkData::Mapped { map, range } => &map[range.clone()],
        }
    }
}

impl From<Vec<u8>> for ChunkData {
    fn from(data: Vec<u8>) -> Self {
        ChunkData::Owned(data)
    }
}

impl PartialEq for ChunkData {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for ChunkData {}

impl std::fmt::Debug for ChunkData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

/// Where the splitter gets a fresh buffer when it hands one over: a recycled
/// one, or `None` when the consumer has gone (reading stops).
pub type BufferSource = Box<dyn FnMut() -> Option<Vec<u8>> + Send>;

/// Splits a reader into [`Piece`]s.
pub struct Splitter<R> {
    reader: R,
    /// The buffer being filled; `carry[..filled]` holds data, the rest is scratch.
    carry: Vec<u8>,
    filled: usize,
    done: bool,
    chunk_bytes: usize,
    buffers: Option<BufferSource>,
    /// Whether the first bytes were read (and a byte order mark dropped).
    started: bool,
    /// A read error met after whole lines, returned after them.
    failed: Option<io::Error>,
}

impl<R: Read> Splitter<R> {
    /// A splitter with the default chunk size.
    pub fn new(reader: R) -> Self {
        Self::with_chunk_size(reader, CHUNK_BYTES)
    }

    /// A splitter with chunks of about `chunk_bytes` (at least `MAX_LINE_BYTES + 1` in practice).
    pub fn with_chunk_size(reader: R, chunk_bytes: usize) -> Self {
        Splitter {
            reader,
            carry: Vec::new(),
            filled: 0,
            done: false,
            chunk_bytes,
            buffers: None,
            started: false,
            failed: None,
        }
    }

    /// Takes the buffers of the pieces it yields from `buffers` (which the
    /// consumer refills with the `data` of pieces it is done with), so that a
    /// long input reuses a few buffers instead of allocating one per chunk.
    pub fn with_buffers(mut self, buffers: BufferSource) -> Self {
        self.buffers = Some(buffers);
        self
    }

    /// Reads until the buffer holds `chunk_bytes` or the input ends; true at end of input.
    fn fill(&mut self) -> io::Result<bool> {
        let want = self.chunk_bytes.max(self.filled + 1);
        if self.carry.len() < want {
            self.carry.resize(want, 0);
        }
        while self.filled < want {
            match self.reader.read(&mut self.carry[self.filled..want]) {
                Ok(0) => return Ok(true),
                Ok(n) => self.filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }

    /// [`Self::fill`], the first time without the byte order mark the input
    /// may start with (and filled again after it).
    fn fill_past_bom(&mut self) -> io::Result<bool> {
        let at_end = self.fill()?;
        if std::mem::replace(&mut self.started, true) {
            return Ok(at_end);
        }
        let bom = bom_len(&self.carry[..self.filled]);
        if bom == 0 {
            return Ok(at_end);
        }
        self.carry.copy_within(bom..self.filled, 0);
        self.filled -= bom;
        if at_end { Ok(true) } else { self.fill() }
    }

    /// Discards bytes up to and including the next newline; returns how many were dropped.
    fn discard_line(&mut self) -> io::Result<u64> {
        let mut dropped = 0u64;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.carry[..self.filled]) {
                dropped += i as u64;
                self.carry.copy_within(i + 1..self.filled, 0);
                self.filled -= i + 1;
                return Ok(dropped);
            }
            dropped += self.filled as u64;
            self.filled = 0;
            let at_end = self.fill()?;
            if at_end && memchr::memchr(b'\n', &self.carry[..self.filled]).is_none() {
                dropped += self.filled as u64;
                self.filled = 0;
                self.done = true;
                return Ok(dropped);
            }
        }
    }

    /// Hands over `carry[..end]` as a piece, keeping the rest for the next one;
    /// `None` when the consumer has gone.
    fn take_lines(&mut self, end: usize) -> Option<Piece> {
        let mut next = match &mut self.buffers {
            Some(source) => source()?,
            None => Vec::new(),
        };
        let rest = self.filled - end;
        if next.len() < rest {
            next.resize(rest.max(self.chunk_bytes), 0);
        }
        next[..rest].copy_from_slice(&self.carry[end..self.filled]);
        let mut data = std::mem::replace(&mut self.carry, next);
        data.truncate(end);
        self.filled = rest;
        Some(Piece::Lines { data: data.into() })
    }
}

impl<R: Read> Iterator for Splitter<R> {
    type Item = io::Result<Piece>;

    fn next(&mut self) -> Option<io::Result<Piece>> {
        if self.done {
            return None;
        }
        if let Some(e) = self.failed.take() {
            self.done = true;
            return Some(Err(e));
        }
        let at_end = match self.fill_past_bom() {
            Ok(end) => end,
            Err(e) => {
                // The whole lines read before the error come first (a
                // truncated gzip member holds many), then the error.
                if let Some(i) = memchr::memrchr(b'\n', &self.carry[..self.filled]) {
                    self.failed = Some(e);
                    let piece = self.take_lines(i + 1);
                    self.done |= piece.is_none();
                    return piece.map(Ok);
                }
                self.done = true;
                return Some(Err(e));
            }
        };
        if at_end {
            self.done = true;
            return (self.filled > 0)
                .then(|| self.take_lines(self.filled))
                .flatten()
                .map(Ok);
        }
        match memchr::memrchr(b'\n', &self.carry[..self.filled]) {
            Some(i) => {
                let piece = self.take_lines(i + 1);
                self.done |= piece.is_none();
                piece.map(Ok)
            }
            None => Some(self.discard_line().map(|len| Piece::TooLong { len })),
        }
    }
}

/// The length of the UTF-8 byte order mark `data` starts with (0 without
/// one): an editor's or a Windows tool's mark before the first line is no
/// part of it, nor of its client's address.
fn bom_len(data: &[u8]) -> usize {
    if data.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    }
}

/// Splits a memory-mapped file into [`Piece`]s as [`Splitter`] splits a stream:
/// chunks of about `chunk_bytes` ending at a line end, and lines that do not fit
/// in a chunk as [`Piece::TooLong`]. Nothing is copied.
pub struct MapSplitter {
    map: Arc<Mmap>,
    pos: usize,
    chunk_bytes: usize,
}

impl MapSplitter {
    /// A splitter over all of `map`.
    pub fn new(map: Arc<Mmap>, chunk_bytes: usize) -> Self {
        MapSplitter {
            pos: bom_len(&map),
            map,
            chunk_bytes,
        }
    }
}

impl Iterator for MapSplitter {
    type Item = io::Result<Piece>;

    fn next(&mut self) -> Option<io::Result<Piece>> {
        let (start, len) = (self.pos, self.map.len());
        if start >= len {
            return None;
        }
        let chunk = self.chunk_bytes.max(1);
        let end = if len - start < chunk {
            len // the rest, the last line with or without its newline
        } else {
            let window_end = start + chunk;
            match memchr::memrchr(b'\n', &self.map[start..window_end]) {
                Some(i) => start + i + 1,
                None => {
                    // No line end within a chunk: the line is too long to keep.
                    let line_end = memchr::memchr(b'\n', &self.map[start..]).map(|i| start + i);
                    self.pos = line_end.map_or(len, |i| i + 1);
                    let len = line_end.unwrap_or(len) - start;
                    return Some(Ok(Piece::TooLong { len: len as u64 }));
                }
            }
        };
        self.pos = end;
        Some(Ok(Piece::Lines {
            data: ChunkData::Mapped {
                map: self.map.clone(),
                range: start..end,
            },
        }))
    }
}

#[cfg(test)]
mod tests;
