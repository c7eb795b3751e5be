//! Bytes to whole lines for the follower: a partial last line is held until
//! its newline arrives, and a line longer than [`MAX_LINE_BYTES`] is dropped as
//! it streams by and reported with its length, so memory never grows with
//! line length.

use super::Followed;
use crate::ingest::lines::MAX_LINE_BYTES;

/// Bytes on their way to becoming whole lines.
#[derive(Debug)]
pub(super) struct LineAssembler {
    /// The number of the file the bytes come from ([`Followed::Lines`]).
    pub(super) file: u32,
    pub(super) partial: Vec<u8>,
    /// The length so far of a line found too long (its bytes are dropped).
    overlong: Option<u64>,
}

impl LineAssembler {
    pub(super) fn new(file: u32) -> Self {
        LineAssembler {
            file,
            partial: Vec::new(),
            overlong: None,
        }
    }

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
            push_line(out, self.file, tail);
            return;
        }
        self.extend(tail);
        match self.overlong.take() {
            Some(bytes) => out.push(Followed::TooLong { bytes }),
            None => push_line(out, self.file, &self.partial),
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

/// Appends `line` to the last lines of `out` when they are of the same file.
fn push_line(out: &mut Vec<Followed>, file: u32, line: &[u8]) {
    match out.last_mut() {
        Some(Followed::Lines { file: last, data }) if *last == file => {
            data.extend_from_slice(line);
            data.push(b'\n');
        }
        _ => {
            let mut data = Vec::with_capacity(line.len() + 1);
            data.extend_from_slice(line);
            data.push(b'\n');
            out.push(Followed::Lines { file, data });
        }
    }
}
