//! An open file of the followed path and how far it was read: reading what
//! it gained, and telling when it was rewritten under the read offset.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use super::assemble::LineAssembler;
use super::start::{Start, start_of};
use super::{FileEvent, Followed, Polled, READ_BUDGET};

/// Bytes before the read offset compared on each poll to see a copytruncate
/// that the writer has already filled past the old offset.
const SIGNATURE_BYTES: usize = 32;
/// Bytes at the start of the file (those before the read offset) compared on
/// each poll too: lines of one shape can end alike at the old offset, while
/// their first bytes (a newer time, another client) differ.
pub(super) const HEAD_BYTES: usize = 4096;

/// An open file and how far it was read.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) file: File,
    /// (device, inode).
    pub(super) id: (u64, u64),
    pub(super) offset: u64,
    /// The bytes just before `offset`, as read.
    pub(super) signature: Vec<u8>,
    /// The file's first bytes, up to `offset` and [`HEAD_BYTES`], as read.
    pub(super) head: Vec<u8>,
    /// What the file's first bytes said, once they were there: a
    /// compressed file is reported once and never read.
    pub(super) plain: Option<bool>,
    pub(super) lines: LineAssembler,
    pub(super) last_growth: Duration,
}

impl Handle {
    /// Reads up to the budget from `offset`.
    pub(super) fn read(
        &mut self,
        buf: &mut [u8],
        now: Duration,
        out: &mut Vec<Followed>,
    ) -> io::Result<Polled> {
        let mut polled = Polled::default();
        // A file is looked at from byte 0 whatever the offset, as it opens or
        // after a truncation, and whenever it gets its first bytes.
        if self.plain.is_none() {
            match start_of(&self.file) {
                Start::Unknown => return Ok(polled),
                Start::Plain => self.plain = Some(true),
                Start::Compressed(kind) => {
                    self.plain = Some(false);
                    out.push(Followed::Event(FileEvent::Compressed(kind)));
                }
            }
        }
        if self.plain == Some(false) {
            return Ok(polled);
        }
        loop {
            if polled.bytes >= READ_BUDGET {
                polled.more = true;
                break;
            }
            let n = match self.file.read_at(buf, self.offset) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let data = &buf[..n];
            if self.head.len() < HEAD_BYTES && self.head.len() as u64 == self.offset {
                let take = n.min(HEAD_BYTES - self.head.len());
                self.head.extend_from_slice(&data[..take]);
            }
            self.offset += n as u64;
            polled.bytes += n as u64;
            self.signature
                .extend_from_slice(&data[n.saturating_sub(SIGNATURE_BYTES)..]);
            let excess = self.signature.len().saturating_sub(SIGNATURE_BYTES);
            self.signature.drain(..excess);
            self.lines.push(data, out);
        }
        if polled.bytes > 0 {
            self.last_growth = now;
        }
        Ok(polled)
    }

    /// True when the file no longer holds what was read before `offset`:
    /// it is shorter, or its first bytes or those just before `offset` changed.
    pub(super) fn rewritten(&self, len: u64) -> bool {
        if len < self.offset {
            return true;
        }
        let changed = |was: &[u8], at: u64| {
            let mut now = vec![0; was.len()];
            !was.is_empty() && (self.file.read_exact_at(&mut now, at).is_err() || now != was)
        };
        changed(&self.signature, self.offset - self.signature.len() as u64)
            || changed(&self.head, 0)
    }
}

/// The first bytes of `file`, up to `offset` and [`HEAD_BYTES`] (none when
/// they cannot be read): what a file followed from `offset` holds before it.
pub(super) fn head_of(file: &File, offset: u64) -> Vec<u8> {
    let mut head = vec![0; offset.min(HEAD_BYTES as u64) as usize];
    match file.read_exact_at(&mut head, 0) {
        Ok(()) => head,
        Err(_) => Vec::new(),
    }
}
