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

use super::record::{LineParser, Record, SkipReason};

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
    let Some(body) = line.strip_prefix(b"{\"log\":\"") else {
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
pub struct ContainerParser {
    wrapper: Wrapper,
    inner: Box<dyn LineParser>,
    /// The unescaped inner line of a Docker entry (reused).
    buffer: Vec<u8>,
}

impl ContainerParser {
    /// Wraps `inner`, the parser of the lines inside the wrapper.
    pub fn new(wrapper: Wrapper, inner: Box<dyn LineParser>) -> Self {
        ContainerParser {
            wrapper,
            inner,
            buffer: Vec::new(),
        }
    }
}

impl LineParser for ContainerParser {
    fn parse<'a>(&mut self, line: &'a [u8], record: &mut Record<'a>) -> Result<(), SkipReason> {
        match unwrap(self.wrapper, line) {
            Unwrapped::Line(inner) => self.inner.parse(inner, record),
            Unwrapped::Owned(inner) => {
                self.buffer = inner;
                let mut scratch = Record::default();
                scratch.clear(record.extra.len());
                self.inner.parse(&self.buffer, &mut scratch)?;
                *record = scratch.into_owned();
                Ok(())
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
