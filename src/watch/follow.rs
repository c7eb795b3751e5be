//! Following one file like `tail -F`, on its bytes, by polling.
//!
//! Each [`Follower::poll`] looks at the path (`stat`, following symlinks) and
//! reads what was appended since the last poll, handing back whole lines:
//! - at start the file is read from the start of its last line (or from byte 0
//!   with `from_start`), after the comment lines before it when the file
//!   starts with `#` (a W3C header: [`Followed::Header`]); a file that
//!   appears later is read from byte 0;
//! - a partial last line is held until its newline arrives;
//! - a new file at the path (rename-and-create, deleted and recreated) is read
//!   from byte 0, while the old one is still read until it has stayed quiet for
//!   the linger time (writers keep writing to a renamed file until they reopen);
//! - a file that shrinks, or whose first bytes or bytes just before the read
//!   offset changed (copytruncate, then written past the old offset before the
//!   next poll), is read again from byte 0;
//! - a line longer than [`MAX_LINE_BYTES`](crate::ingest::lines::MAX_LINE_BYTES) is discarded as it streams by and
//!   reported with its length, so memory never grows with line length;
//! - a path that is missing, not a regular file, or unreadable is reported once
//!   per change of condition and looked at again on the next poll: never an error;
//! - a file that starts like gzip or zstd is not read (its bytes are no lines
//!   until decompressed, and a compressed stream cannot be followed as it
//!   grows): reported once as [`FileEvent::Compressed`], whether it was so
//!   when opened, got its first bytes later or was rewritten so (the watch
//!   makes that an error; the follower only reports it).
//!
//! Time comes in as an argument (the linger), so tests drive it by hand. This
//! module knows nothing about log formats.

use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use assemble::LineAssembler;
use handle::Handle;

/// The most bytes one poll reads from one file, so that one busy file does not
/// starve the others; [`Polled::more`] says when more is waiting.
pub const READ_BUDGET: u64 = 8 << 20;
/// How long a rotated-away file is still read after it last grew.
pub const DEFAULT_LINGER: Duration = Duration::from_secs(5);
/// How far back from the end the start of the last line is looked for.
const TAIL_SEARCH: u64 = 64 << 10;
/// Size of one read.
const READ_BYTES: usize = 1 << 20;

/// What a poll found, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Followed {
    /// Whole lines, each ending with `\n` (one is added to the last line of a
    /// file that is finished without one), of one file: `file` counts the
    /// files opened at the path, from 1, so that the lines a rotated-away
    /// file still gets are told from those of the file that took its place.
    Lines { file: u32, data: Vec<u8> },
    /// One line longer than [`MAX_LINE_BYTES`](crate::ingest::lines::MAX_LINE_BYTES), of `bytes` bytes, not kept.
    TooLong { bytes: u64 },
    /// Something happened to the file.
    Event(FileEvent),
    /// The comment lines (`#…`) before the offset the file numbered `file`
    /// is first followed from, each with its newline: a W3C header, its
    /// `#Date:` lines. They come right after the file's
    /// [`FileEvent::Opened`], only when there are some, and are no lines of
    /// the followed part.
    Header { file: u32, lines: Vec<u8> },
}

/// A change in what the path holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileEvent {
    /// A file was opened and is read from byte `offset`.
    Opened { offset: u64 },
    /// A new file took the path (rename-and-create, deleted and recreated).
    Replaced,
    /// The file shrank or was rewritten in place (copytruncate): read again from byte 0.
    Truncated,
    /// The path is gone (an open file is still read).
    Missing,
    /// The path is not a regular file (a directory, a FIFO, ...).
    NotAFile,
    /// The path cannot be read: the reason.
    Unreadable(String),
    /// The file at the path is compressed (`gzip` or `zstd`) and is not read.
    Compressed(&'static str),
    /// A rotated-away file stayed quiet for the linger time and was closed.
    Closed,
}

/// What one poll read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Polled {
    /// Bytes read.
    pub bytes: u64,
    /// True when the read budget ran out before the end of a file.
    pub more: bool,
}

/// How the path looked at the last poll, so that each problem is reported once.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Condition {
    Readable,
    Missing,
    NotAFile,
    Unreadable(String),
}

/// Follows one path.
#[derive(Debug)]
pub struct Follower {
    path: PathBuf,
    from_start: bool,
    linger: Duration,
    /// False until the first poll looked at the path.
    looked: bool,
    /// How many files were opened at the path (the number of the last).
    opened: u32,
    current: Option<Handle>,
    /// Rotated-away files, read until quiet.
    retired: Vec<Handle>,
    condition: Condition,
    buf: Vec<u8>,
}

impl Follower {
    /// Follows `path`: from the start of its last line, or from byte 0 with
    /// `from_start`; rotated-away files are read until quiet for `linger`.
    pub fn new(path: &Path, from_start: bool, linger: Duration) -> Self {
        Follower {
            path: path.to_path_buf(),
            from_start,
            linger,
            looked: false,
            opened: 0,
            current: None,
            retired: Vec::new(),
            condition: Condition::Readable,
            buf: Vec::new(),
        }
    }

    /// The path followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True while the file numbered `file` (see [`Followed::Lines`]) is read:
    /// the file at the path, or a rotated-away one not yet closed.
    pub fn reads(&self, file: u32) -> bool {
        self.current
            .iter()
            .chain(&self.retired)
            .any(|handle| handle.lines.file == file)
    }

    /// True when a regular file is open at the path.
    pub fn readable(&self) -> bool {
        self.condition == Condition::Readable && self.current.is_some()
    }

    /// Looks at the path and reads what is new, appending it to `out`.
    pub fn poll(&mut self, now: Duration, out: &mut Vec<Followed>) -> Polled {
        if self.buf.is_empty() {
            self.buf = vec![0; READ_BYTES];
        }
        let mut polled = self.poll_retired(now, out);
        let first = !self.looked;
        self.looked = true;
        match fs::metadata(&self.path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.set_condition(Condition::Missing, out)
            }
            Err(e) => self.set_condition(Condition::Unreadable(e.to_string()), out),
            Ok(meta) if !meta.is_file() => {
                self.retire_current(now, out);
                self.set_condition(Condition::NotAFile, out);
            }
            Ok(meta) => self.check_file(&meta, first, now, out),
        }
        if let Some(handle) = &mut self.current {
            match handle.read(&mut self.buf, now, out) {
                Ok(p) => {
                    polled.bytes += p.bytes;
                    polled.more |= p.more;
                }
                Err(e) => {
                    let reason = e.to_string();
                    self.set_condition(Condition::Unreadable(reason), out);
                }
            }
        }
        polled
    }

    /// Ends following: every partial last line becomes a line (as when a
    /// rotated-away file is closed). The files stay open, so that the last
    /// figures still say which path was readable.
    pub fn finish(&mut self, out: &mut Vec<Followed>) {
        for handle in self.retired.iter_mut().chain(&mut self.current) {
            handle.lines.finish(out);
        }
    }

    fn poll_retired(&mut self, now: Duration, out: &mut Vec<Followed>) -> Polled {
        let mut polled = Polled::default();
        let linger = self.linger;
        let buf = &mut self.buf;
        self.retired.retain_mut(|handle| {
            match handle.read(buf, now, out) {
                Ok(p) => {
                    polled.bytes += p.bytes;
                    polled.more |= p.more;
                    if p.bytes > 0 || now.saturating_sub(handle.last_growth) < linger {
                        return true;
                    }
                }
                Err(e) => out.push(Followed::Event(FileEvent::Unreadable(e.to_string()))),
            }
            handle.lines.finish(out);
            out.push(Followed::Event(FileEvent::Closed));
            false
        });
        polled
    }

    /// Moves the open file to the retired ones, after reading what it holds
    /// now (so its lines come before those of the file that replaces it).
    fn retire_current(&mut self, now: Duration, out: &mut Vec<Followed>) {
        if let Some(mut handle) = self.current.take() {
            if let Err(e) = handle.read(&mut self.buf, now, out) {
                out.push(Followed::Event(FileEvent::Unreadable(e.to_string())));
            }
            // The linger counts from the rotation: a writer that was quiet
            // before it still writes here until it reopens.
            handle.last_growth = now;
            self.retired.push(handle);
        }
    }

    /// A regular file is at the path: the one being read (truncated or not), or a new one.
    fn check_file(&mut self, meta: &Metadata, first: bool, now: Duration, out: &mut Vec<Followed>) {
        let id = (meta.dev(), meta.ino());
        if let Some(handle) = self.current.as_mut().filter(|h| h.id == id) {
            if handle.rewritten(meta.len()) {
                handle.lines.finish(out);
                handle.offset = 0;
                handle.signature.clear();
                handle.head.clear();
                handle.plain = None;
                out.push(Followed::Event(FileEvent::Truncated));
            }
            self.set_condition(Condition::Readable, out);
            return;
        }
        let opened = File::open(&self.path).and_then(|file| {
            let meta = file.metadata()?;
            Ok((file, meta))
        });
        let (file, meta) = match opened {
            Ok(opened) => opened,
            Err(e) => return self.set_condition(Condition::Unreadable(e.to_string()), out),
        };
        let offset = if first && !self.from_start {
            start_of_last_line(&file, meta.len())
        } else {
            0
        };
        let header = header::comment_lines(&file, offset);
        let head = handle::head_of(&file, offset);
        if self.opened > 0 {
            out.push(Followed::Event(FileEvent::Replaced));
        }
        self.opened += 1;
        self.retire_current(now, out);
        self.current = Some(Handle {
            file,
            id: (meta.dev(), meta.ino()),
            offset,
            signature: Vec::new(),
            head,
            plain: None,
            lines: LineAssembler::new(self.opened),
            last_growth: now,
        });
        out.push(Followed::Event(FileEvent::Opened { offset }));
        if !header.is_empty() {
            out.push(Followed::Header {
                file: self.opened,
                lines: header,
            });
        }
        self.set_condition(Condition::Readable, out);
    }

    fn set_condition(&mut self, condition: Condition, out: &mut Vec<Followed>) {
        if condition == self.condition {
            return;
        }
        let event = match &condition {
            Condition::Readable => None,
            Condition::Missing => Some(FileEvent::Missing),
            Condition::NotAFile => Some(FileEvent::NotAFile),
            Condition::Unreadable(reason) => Some(FileEvent::Unreadable(reason.clone())),
        };
        out.extend(event.map(Followed::Event));
        self.condition = condition;
    }
}

/// Where the last line of a file of `len` bytes starts (0 when no newline is
/// found within the last [`TAIL_SEARCH`] bytes of a file no longer than that;
/// `len` when none is found in a longer one).
fn start_of_last_line(file: &File, len: u64) -> u64 {
    let from = len.saturating_sub(TAIL_SEARCH);
    let mut tail = vec![0; (len - from) as usize];
    if file.read_exact_at(&mut tail, from).is_err() {
        return len;
    }
    match memchr::memrchr(b'\n', &tail) {
        Some(i) => from + i as u64 + 1,
        None if from == 0 => 0,
        None => len,
    }
}

mod assemble;
mod handle;
mod header;
mod start;
#[cfg(test)]
mod tests;
