//! Container log wrappers, stripped before the access log inside is parsed:
//!
//! - the CRI format kubelet writes under `/var/log/pods` (containerd, CRI-O):
//!   `2024-01-01T00:00:00.123456789Z stdout F <line>`, where the tag `P` marks
//!   a partial line (the runtime splits lines over 16 KiB) and `F` a full one
//!   or the last part ([CRI logging design](https://github.com/kubernetes/design-proposals-archive/blob/main/node/kubelet-cri-logging.md),
//!   `pkg/kubelet/kuberuntime/logs/logs.go` in kubernetes/kubernetes);
//! - Docker's `json-file` driver: `{"log":"<line>\n","stream":"stdout","time":"…"}`,
//!   where a `log` without the final `\n` is a partial line
//!   (`daemon/logger/jsonfilelog` in moby/moby).
//!
//! Chunks of an input are parsed independently, so the parts of a split line
//! are not joined: each partial part is skipped with its own reason (the last
//! part is read as it is, and usually skipped as malformed). Access-log lines
//! over 16 KiB are rare.

use std::borrow::Cow;

use serde::Deserialize;

use super::record::{LineParser, Record, SkipReason, parse_with};

/// A container log wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrapper {
    /// `TIME STREAM TAG LINE` (Kubernetes nodes).
    Cri,
    /// Docker `json-file` objects.
    DockerJson,
}

impl Wrapper {
    /// The name used in messages.
    pub fn name(self) -> &'static str {
        match self {
            Wrapper::Cri => "cri",
            Wrapper::DockerJson => "docker-json",
        }
    }
}

/// One line with its wrapper taken off.
#[derive(Debug, PartialEq, Eq)]
pub enum Unwrapped<'a> {
    /// The whole inner line, borrowed.
    Line(&'a [u8]),
    /// The whole inner line, unescaped from JSON.
    Owned(Vec<u8>),
    /// A part of a longer line.
    Partial,
    /// The line does not have the wrapper's shape.
    NotWrapped,
}

/// The wrapper most of `lines` have, if at least half have one.
pub fn detect<L: AsRef<[u8]>>(lines: &[L]) -> Option<Wrapper> {
    let half = lines.len().div_ceil(2).max(1);
    [Wrapper::Cri, Wrapper::DockerJson].into_iter().find(|&w| {
        lines
            .iter()
            .filter(|l| unwrap(w, l.as_ref()) != Unwrapped::NotWrapped)
            .count()
            >= half
    })
}

/// The inner lines of `head` (the first bytes of an input), one per line,
/// for detecting the format inside the wrapper.
pub fn unwrap_head(wrapper: Wrapper, head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(head.len());
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        match unwrap(wrapper, line) {
            Unwrapped::Line(inner) => out.extend_from_slice(inner),
            Unwrapped::Owned(inner) => out.extend_from_slice(&inner),
            Unwrapped::Partial | Unwrapped::NotWrapped => continue,
        }
        out.push(b'\n');
    }
    out
}

/// Takes the wrapper off `line`.
pub fn unwrap(wrapper: Wrapper, line: &[u8]) -> Unwrapped<'_> {
    match wrapper {
        Wrapper::Cri => unwrap_cri(line),
        Wrapper::DockerJson => unwrap_docker(line),
    }
}

fn unwrap_cri(line: &[u8]) -> Unwrapped<'_> {
    let mut fields = line.splitn(4, |&b| b == b' ');
    let (Some(time), Some(stream), Some(tag)) = (fields.next(), fields.next(), fields.next())
    else {
        return Unwrapped::NotWrapped;
    };
    let looks_like_time = time.len() >= 20 && time[4] == b'-' && time[10] == b'T';
    if !looks_like_time || !matches!(stream, b"stdout" | b"stderr") {
        return Unwrapped::NotWrapped;
    }
    // Tags are `:`-separated; the first says full (F) or partial (P).
    match tag.split(|&b| b == b':').next() {
        Some(b"F") => Unwrapped::Line(fields.next().unwrap_or_default()),
        Some(b"P") => Unwrapped::Partial,
        _ => Unwrapped::NotWrapped,
    }
}

#[derive(Deserialize)]
struct DockerLine<'a> {
    #[serde(borrow)]
    log: Cow<'a, str>,
    #[serde(default)]
    stream: Option<Cow<'a, str>>,
}

fn unwrap_docker(line: &[u8]) -> Unwrapped<'_> {
    let Some(body) = line.strip_prefix(DOCKER_LOG) else {
        return Unwrapped::NotWrapped;
    };
    // Docker writes `log`, `stream`, `time` in this order: a line whose only
    // escape is the final `\n` is borrowed as it is.
    if let Some(end) = memchr::memchr2(b'"', b'\\', body)
        && body[end..].starts_with(b"\\n\",\"stream\":\"")
    {
        return Unwrapped::Line(&body[..end]);
    }
    let Ok(entry) = serde_json::from_slice::<DockerLine<'_>>(line) else {
        return Unwrapped::NotWrapped;
    };
    if entry.stream.is_none() {
        return Unwrapped::NotWrapped;
    }
    let Some(text) = entry.log.strip_suffix('\n') else {
        return Unwrapped::Partial;
    };
    let text = text.strip_suffix('\r').unwrap_or(text);
    Unwrapped::Owned(text.as_bytes().to_vec())
}

/// A parser that takes a container wrapper off each line and hands the inner
/// line to the parser of its format.
///
/// An inner line holding two entries (one glued onto the other) is read as
/// two: [`LineParser::glued`] gives where the second starts in the wrapped
/// line, and [`LineParser::parse_glued`], given the wrapped line from there,
/// reads that entry's inner text.
pub struct ContainerParser {
    wrapper: Wrapper,
    inner: Box<dyn LineParser>,
    /// The unescaped inner line of a Docker entry (reused).
    buffer: Vec<u8>,
    /// The entry glued after the one last parsed, if the inner parser found one.
    glued: Option<Glued>,
}

/// An entry of an inner line glued after the entry before it.
#[derive(Debug, Clone, Copy)]
struct Glued {
    /// Where it starts in the wrapped line last given.
    at: usize,
    /// Where its text is in the wrapped line from there (what
    /// `parse_glued` is given).
    text: Text,
}

/// Where an entry's inner text is.
#[derive(Debug, Clone, Copy)]
enum Text {
    /// In the wrapped line given, `start` bytes in, up to `suffix` bytes
    /// before its end (the wrapper's tail).
    Line { start: usize, suffix: usize },
    /// In [`ContainerParser::buffer`] from `from`; the wrapped line given is
    /// the JSON-escaped text of the same from `start`.
    Buffer { start: usize, from: usize },
}

impl ContainerParser {
    /// Wraps `inner`, the parser of the lines inside the wrapper.
    pub fn new(wrapper: Wrapper, inner: Box<dyn LineParser>) -> Self {
        ContainerParser {
            wrapper,
            inner,
            buffer: Vec::new(),
            glued: None,
        }
    }

    /// Where the inner text of `line` is, unwrapped.
    fn text_of(&mut self, line: &[u8]) -> Result<Text, SkipReason> {
        match unwrap(self.wrapper, line) {
            Unwrapped::Line(inner) => {
                // CRI's line is the end of the wrapped line, Docker's follows `{"log":"`.
                let start = match self.wrapper {
                    Wrapper::Cri => line.len() - inner.len(),
                    Wrapper::DockerJson => DOCKER_LOG.len(),
                };
                let suffix = line.len() - start - inner.len();
                Ok(Text::Line { start, suffix })
            }
            Unwrapped::Owned(inner) => {
                self.buffer = inner;
                Ok(Text::Buffer {
                    start: DOCKER_LOG.len(),
                    from: 0,
                })
            }
            Unwrapped::Partial => Err(SkipReason::Malformed(
                "partial container log line (the runtime split a line over 16 KiB)",
            )),
            Unwrapped::NotWrapped => Err(SkipReason::Malformed(match self.wrapper {
                Wrapper::Cri => "not a CRI container log line (TIME STREAM TAG LINE)",
                Wrapper::DockerJson => "not a Docker json-file log line",
            })),
        }
    }

    /// The entry glued after the one just read from `text` of `line`, if the
    /// inner parser found one (`inner_len`: the length of the text it read).
    fn glued_after(&mut self, line: &[u8], text: Text, inner_len: usize) -> Option<Glued> {
        let inner_at = self
            .inner
            .glued()
            .filter(|&at| (1..inner_len).contains(&at))?;
        // The wrapped line `parse` is given next starts with the entry's text.
        let (at, text) = match text {
            Text::Line { start, suffix } => (start + inner_at, Text::Line { start: 0, suffix }),
            Text::Buffer { start, from } => (
                start + escaped_len(&line[start..], inner_at),
                Text::Buffer {
                    start: 0,
                    from: from + inner_at,
                },
            ),
        };
        (at < line.len()).then_some(Glued { at, text })
    }

    /// Reads the entry whose inner text is `text` of `line` (`glued_on`:
    /// one glued after another) with the inner parser.
    fn read<'a>(
        &mut self,
        line: &'a [u8],
        text: Text,
        glued_on: bool,
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        match text {
            Text::Line { start, suffix } => {
                let inner_text = &line[start..line.len() - suffix];
                let parsed = parse_with(self.inner.as_mut(), glued_on, inner_text, record);
                self.glued = self.glued_after(line, text, inner_text.len());
                parsed
            }
            Text::Buffer { from, .. } => {
                let buffer = std::mem::take(&mut self.buffer);
                let mut scratch = Record::default();
                scratch.clear(record.extra.len());
                let parsed =
                    parse_with(self.inner.as_mut(), glued_on, &buffer[from..], &mut scratch);
                if parsed.is_ok() {
                    *record = scratch.into_owned();
                }
                self.glued = self.glued_after(line, text, buffer.len() - from);
                self.buffer = buffer;
                parsed
            }
        }
    }
}

/// How a Docker `json-file` line starts: its inner text follows.
const DOCKER_LOG: &[u8] = b"{\"log\":\"";

/// The bytes of JSON string text (`escaped`) that unescape to its first `n`
/// bytes.
fn escaped_len(escaped: &[u8], n: usize) -> usize {
    let (mut raw, mut plain) = (0, 0);
    while plain < n && raw < escaped.len() {
        let (raw_step, plain_step) = match (escaped[raw], escaped.get(raw + 1)) {
            (b'\\', Some(b'u')) => {
                let code = escaped
                    .get(raw + 2..raw + 6)
                    .and_then(|hex| std::str::from_utf8(hex).ok())
                    .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                    .unwrap_or(0);
                match code {
                    // A surrogate pair: two escapes, one four-byte character.
                    0xD800..=0xDBFF => (12, 4),
                    0..=0x7F => (6, 1),
                    0x80..=0x7FF => (6, 2),
                    _ => (6, 3),
                }
            }
            (b'\\', _) => (2, 1),
            _ => (1, 1),
        };
        raw += raw_step;
        plain += plain_step;
    }
    raw.min(escaped.len())
}

impl LineParser for ContainerParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        self.glued = None;
        let text = self.text_of(line)?;
        self.read(line, text, false, record)
    }

    fn parse_glued<'a>(
        &mut self,
        line: &'a [u8],
        record: &mut Record<'a>,
    ) -> Result<(), SkipReason> {
        match self.glued.take() {
            Some(glued) => self.read(line, glued.text, true, record),
            None => self.parse(line, record),
        }
    }

    fn glued(&mut self) -> Option<usize> {
        self.glued.map(|g| g.at)
    }

    fn follow_headers(&mut self) {
        self.inner.follow_headers();
    }

    fn fork(&self) -> Box<dyn LineParser> {
        Box::new(ContainerParser::new(self.wrapper, self.inner.fork()))
    }

    fn name(&self) -> String {
        format!("{}: {}", self.wrapper.name(), self.inner.name())
    }

    fn in_order(&self) -> bool {
        self.inner.in_order()
    }
}

#[cfg(test)]
mod tests;
