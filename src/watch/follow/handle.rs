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

/// An open file and how far it was read.
#[derive(Debug)]
pub(super) struct Handle {
    pub(super) file: File,
    /// (device, inode).
    pub(super) id: (u64, u64),
    pub(super) offset: u64,
    /// The bytes just before `offset`, as read.
    pub(super) signature: Vec<u8>,
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

    /// True when the file no longer holds what was read before `offset`.
    pub(super) fn rewritten(&self, len: u64) -> bool {
        if len < self.offset {
            return true;
        }
        let mut now = vec![0; self.signature.len()];
        let at = self.offset - self.signature.len() as u64;
        !self.signature.is_empty()
            && (self.file.read_exact_at(&mut now, at).is_err() || now != self.signature)
    }
}
