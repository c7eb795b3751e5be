//! Bytes to whole lines for the follower: a partial last line is held until
//! its newline arrives, and a line longer than [`MAX_LINE_BYTES`] is dropped as
//! it streams by and reported with its length, so memory never grows with
//! line length.

use super::Followed;
use crate::ingest::lines::MAX_LINE_BYTES;

/// Bytes on their way to becoming whole lines.
#[derive(Debug, Default)]
pub(super) struct LineAssembler {
    pub(super) partial: Vec<u8>,
    /// The length so far of a line found too long (its bytes are dropped).
    overlong: Option<u64>,
}

impl LineAssembler {
    pub(super) fn push(&mut self, mut data: &[u8], out: &mut Vec<Followed>) {
        while let Some(end) = memchr::memchr(b'\n', data) {
            self.end_line(&data[..end], out);
            data = &data[end + 1..];
        }
        self.extend(data);
    }

    fn extend(&mut self, bytes: &[u8]) {
        if let Some(len) = &mut self.overlong {
            *len += bytes.len() as u64;
        } else if self.partial.len() + bytes.len() > MAX_LINE_BYTES {
            self.overlong = Some((self.partial.len() + bytes.len()) as u64);
            self.partial = Vec::new();
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self, tail: &[u8], out: &mut Vec<Followed>) {
        if self.partial.is_empty() && self.overlong.is_none() && tail.len() <= MAX_LINE_BYTES {
            push_line(out, tail);
            return;
        }
        self.extend(tail);
        match self.overlong.take() {
            Some(bytes) => out.push(Followed::TooLong { bytes }),
            None => push_line(out, &self.partial),
        }
        self.partial.clear();
    }

    /// Ends the file: a partial last line becomes a line.
    pub(super) fn finish(&mut self, out: &mut Vec<Followed>) {
        if !self.partial.is_empty() || self.overlong.is_some() {
            self.end_line(&[], out);
        }
    }
}

fn push_line(out: &mut Vec<Followed>, line: &[u8]) {
    if let Some(Followed::Lines(buf)) = out.last_mut() {
        buf.extend_from_slice(line);
        buf.push(b'\n');
    } else {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line);
        buf.push(b'\n');
        out.push(Followed::Lines(buf));
    }
}
