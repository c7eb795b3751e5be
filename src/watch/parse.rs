//! Followed lines to parsed chunks, with the ingestion parsers: the same
//! format detection, keys, endpoints and skip reasons as `rlctl analyze`, one
//! batch of whole lines at a time, with counts that reconcile per file
//! (lines + entries glued onto them = parsed + skipped, by reason).
//!
//! With `--log-format auto`, a file's first lines are held until detection
//! decides (as ingestion does on the first lines of an input). When it cannot
//! decide on enough lines (not an access log, binary garbage), those lines are
//! counted as skipped ([`SkipReason::FormatNotDetected`]), the failure is
//! handed to the watch once to report ([`FileParser::take_undetected`]), and
//! detection starts again on the lines after them: never an error. The format
//! found stays for the life of the watch, across rotations, but for the columns of a
//! W3C file: a `#Fields:` header that names other columns (a rotation, an IIS
//! restart after its fields were changed) is read as the header of the lines
//! after it ([`LineParser::follow_headers`]).
//!
//! Each file at the path has its own parser, by the follower's number for it:
//! the file whose lines decided detection gets the parser detection chose,
//! every other one a fork of it as detection made it (the detected format,
//! read afresh), so that a new file's header does not change how the lines a
//! rotated-away file still gets are read. The header read before following
//! starts goes to its own file's parser. Lines held for detection are read by
//! the parser of the file whose lines decided it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::ingest::KeptPaths;
use crate::ingest::chunk::{ChunkContext, ChunkResult, parse_chunk};
use crate::ingest::detect;
use crate::ingest::record::{LineParser, SkipReason};
use crate::ingest::{FormatChoice, IngestError, Settings, parser_for};

/// Bytes held at most while the format is being detected (overlong lines
/// and all).
const HELD_BYTES: usize = 1 << 20;
/// Non-blank lines after which detection must have decided.
const DETECT_LINES: usize = 50;

/// What one file's lines became.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FileCounts {
    /// Every line read, parsed or skipped.
    pub lines: u64,
    /// Entries glued after another on the same line, parsed or skipped on
    /// their own (`lines + glued = parsed + skipped`).
    pub glued: u64,
    pub parsed: u64,
    /// Skipped lines by reason (the ingestion's wording).
    pub skipped: BTreeMap<String, u64>,
}

impl FileCounts {
    /// Skipped lines, all reasons.
    pub fn skipped_total(&self) -> u64 {
        self.skipped.values().sum()
    }

    fn skip(&mut self, reason: SkipReason, n: u64) {
        self.lines += n;
        *self.skipped.entry(reason.to_string()).or_default() += n;
    }
}

/// Parses the lines of one followed file.
pub struct FileParser {
    name: String,
    /// The parser as detection made it, once the format is known: what a
    /// file without a parser yet forks.
    detected: Option<Box<dyn LineParser>>,
    /// The parser of each file still read at the path, by its number
    /// ([`crate::watch::follow::Followed::Lines`]).
    parsers: Vec<(u32, Box<dyn LineParser>)>,
    /// The format in words, once known.
    format: String,
    /// Lines held until the format is detected.
    undetected: Vec<u8>,
    /// Comment lines from before where following started (a W3C header):
    /// detection reads them, and the parser reads them before the first
    /// followed lines, uncounted.
    preamble: Vec<u8>,
    /// The number of the file the preamble is of.
    preamble_file: u32,
    counts: FileCounts,
    /// True once detection gave up on held lines.
    gave_up: bool,
    /// Why detection first gave up, until the watch takes it to report it.
    detect_failure: Option<String>,
}

impl std::fmt::Debug for FileParser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileParser")
            .field("name", &self.name)
            .field("format", &self.format)
            .field("counts", &self.counts)
            .finish()
    }
}

impl FileParser {
    /// A parser for the file called `name` (in messages and metrics).
    pub fn new(name: &str) -> Self {
        FileParser {
            name: name.to_string(),
            detected: None,
            parsers: Vec::new(),
            format: String::new(),
            undetected: Vec::new(),
            preamble: Vec::new(),
            preamble_file: 0,
            counts: FileCounts::default(),
            gave_up: false,
            detect_failure: None,
        }
    }

    /// The counts so far.
    pub fn counts(&self) -> &FileCounts {
        &self.counts
    }

    /// The format used, once known ("combined (detected)", "json", ...).
    pub fn format(&self) -> &str {
        &self.format
    }

    /// Counts a line too long to keep.
    pub fn too_long(&mut self) {
        self.counts.skip(SkipReason::TooLong, 1);
    }

    /// Takes the comment lines from before where following started (see
    /// [`crate::watch::follow::Followed::Header`]).
    pub fn header(&mut self, file: u32, lines: &[u8], settings: &Settings) {
        (self.preamble, self.preamble_file) = (lines.to_vec(), file);
        if self.detected.is_some() {
            self.read_preamble(settings);
        }
    }

    /// Has the parser of the preamble's file read it.
    fn read_preamble(&mut self, settings: &Settings) {
        let preamble = std::mem::take(&mut self.preamble);
        if !preamble.is_empty() {
            let parser = self.parser_of(self.preamble_file);
            // Not counted: the lines precede the followed ones.
            parse_chunk(&preamble, 1, parser, &context(settings));
        }
    }

    /// Parses whole lines (`data` ends with a newline) of the file numbered
    /// `file`. Returns `None` while the format is still being detected (the
    /// lines are held, or counted as skipped when detection gave up on them).
    pub fn parse(
        &mut self,
        file: u32,
        data: &[u8],
        settings: &Settings,
    ) -> Result<Option<ChunkResult>, IngestError> {
        if self.detected.is_none() {
            self.undetected.extend_from_slice(data);
            match self.choose(settings)? {
                None => return Ok(None),
                Some(parser) => {
                    self.detected = Some(parser.fork());
                    self.parsers.push((file, parser));
                    self.read_preamble(settings);
                }
            }
        }
        let held = std::mem::take(&mut self.undetected);
        let data = if held.is_empty() { data } else { &held[..] };
        let ctx = context(settings);
        let first_line = self.counts.lines + 1;
        let chunk = parse_chunk(data, first_line, self.parser_of(file), &ctx);
        self.counts.lines += chunk.lines;
        self.counts.glued += chunk.glued;
        self.counts.parsed += chunk.parsed;
        for (reason, n) in &chunk.skipped {
            *self.counts.skipped.entry(reason.to_string()).or_default() += n;
        }
        Ok(Some(chunk))
    }

    /// The parser of the file numbered `file`, once the format is known (a
    /// fork of the detected one for a file that has none yet).
    fn parser_of(&mut self, file: u32) -> &mut dyn LineParser {
        let at = match self.parsers.iter().position(|(n, _)| *n == file) {
            Some(at) => at,
            None => {
                let detected = self.detected.as_ref().expect("the format is known");
                let mut fork = detected.fork();
                fork.follow_headers();
                self.parsers.push((file, fork));
                self.parsers.len() - 1
            }
        };
        self.parsers[at].1.as_mut()
    }

    /// Drops the parsers of files that are no longer read.
    pub fn forget_closed(&mut self, reads: impl Fn(u32) -> bool) {
        self.parsers.retain(|(file, _)| reads(*file));
    }

    /// The parser for this file, once the held lines decide it (as ingestion
    /// chooses it for the head of an input); `None` while detection has not
    /// seen enough lines to give up.
    fn choose(&mut self, settings: &Settings) -> Result<Option<Box<dyn LineParser>>, IngestError> {
        // What ingestion decides on: up to `HEAD_BYTES` of lines, a longer
        // line before them skipped.
        let head = detect::head(&self.undetected);
        let lines = non_blank_lines(head);
        let enough = head.len() >= detect::HEAD_BYTES
            || lines >= DETECT_LINES
            || self.undetected.len() >= HELD_BYTES;
        // Detection also reads the header from before the followed lines.
        let with_header;
        let head = match self.preamble.is_empty() {
            true => head,
            false => {
                with_header = [&self.preamble[..], head].concat();
                detect::head(&with_header)
            }
        };
        // Blank lines alone decide nothing yet (ingestion reads a whole
        // input of them as blank, but a followed file may go on).
        if lines == 0 && !enough {
            return Ok(None);
        }
        match detect::choose(settings, Some(head), &self.name) {
            Ok(mut chosen) => {
                self.format = chosen.description;
                // A followed file is read line after line: a W3C header that
                // names other columns is the header of the lines after it.
                chosen.parser.follow_headers();
                Ok(Some(chosen.parser))
            }
            Err(IngestError::Detect { .. }) if !enough => Ok(None),
            Err(e @ IngestError::Detect { .. }) => {
                self.give_up(&e);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Detection found no format in enough held lines: they are counted as
    /// skipped, and detection starts again on the lines after them (a file
    /// that begins with a program's own messages may go on as an access log).
    fn give_up(&mut self, error: &IngestError) {
        let lines = memchr::memchr_iter(b'\n', &self.undetected).count() as u64;
        self.counts.skip(SkipReason::FormatNotDetected, lines);
        self.undetected.clear();
        if !self.gave_up {
            self.gave_up = true;
            self.detect_failure = Some(error.to_string());
        }
    }

    /// Why detection gave up on this file's lines, the first time it did,
    /// once: the watch reports it.
    pub fn take_undetected(&mut self) -> Option<String> {
        self.detect_failure.take()
    }

    /// Ends the file: held lines are parsed with the combined parser when the
    /// format was never detected (they are then counted, mostly as malformed).
    pub fn finish(&mut self, settings: &Settings) -> Result<Option<ChunkResult>, IngestError> {
        if self.detected.is_some() || self.undetected.is_empty() {
            return Ok(None);
        }
        self.detected = Some(parser_for(&FormatChoice::Combined, settings)?);
        // The held lines' file does not matter: no parser has read any yet.
        self.parse(0, &[], settings)
    }
}

/// What every chunk of a followed file is parsed with.
fn context(settings: &Settings) -> ChunkContext<'_> {
    ChunkContext {
        keys: &settings.keys,
        routes: &settings.routes,
        paths: KeptPaths::All,
    }
}

fn non_blank_lines(data: &[u8]) -> usize {
    data.split(|&b| b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count()
}

#[cfg(test)]
mod tests;
