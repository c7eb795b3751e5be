//! One watch put together: a follower and a parser per file, the reorder
//! buffer and the shadow policy. [`Watcher::step`] polls every file once and
//! decides every request the reorder buffer releases; the caller decides when
//! to step again (see [`super::session`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use super::follow::{FileEvent, Followed, Follower};
use super::metrics::{FileFigures, Snapshot};
use super::parse::FileParser;
use super::reorder::Reorder;
use super::shadow::{Request, RuleFigures, Shadow, ShadowError};
use super::verdict::{Judgement, Verdict};
use crate::ingest::{self, IngestError};
use crate::policy::{CheckedRule, Exemption};
use crate::simulate::gateway::Gateway;
use crate::units::Millis;

/// How much log time passes between two sweeps of idle state.
const SWEEP_EVERY_MS: Millis = 1000;
/// How far ahead of the wall clock a timestamp may be before its request is
/// set aside (a bogus future time would otherwise make every later line late).
pub const FUTURE_TOLERANCE_MS: Millis = 3_600_000;

/// What a watch needs, validated.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// The files to follow.
    pub files: Vec<PathBuf>,
    /// Read each file from its start instead of its end.
    pub from_start: bool,
    /// How long (log time) the reorder buffer waits for late lines.
    pub max_delay_ms: Millis,
    /// How far behind the newest time decided a late request can still be
    /// placed in its client's time order (limiter states are kept so long).
    pub max_lateness_ms: Millis,
    /// How long a rotated-away file is still read after it last grew.
    pub linger: Duration,
    /// Format, keys (with every rule's key, see [`super::shadow::keys_for`]) and routes.
    pub ingest: ingest::Settings,
    /// The policy's limit rules.
    pub rules: Vec<CheckedRule>,
    /// The policy's exemptions (their keys among `ingest.keys`, see
    /// [`super::shadow::keys_for_policy`]).
    pub exemptions: Vec<Exemption>,
    /// `--gateway`: replay each rule as this gateway enforces it.
    pub gateway: Option<Gateway>,
    /// `--until-clients-hit` / `--for`, judged every minute of log time
    /// and when `--for` has passed ([`Verdict::due`]).
    pub verdict: Option<Verdict>,
}

/// Why a watch stops.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Shadow(#[from] ShadowError),
    #[error(
        "{file} is {kind}-compressed: watch follows plain logs as they are written; \
         replay a compressed log with `rlctl simulate --policy FILE`"
    )]
    Compressed { file: String, kind: &'static str },
}

/// What one step did.
#[derive(Debug, Default)]
pub struct Step {
    /// Bytes read.
    pub bytes: u64,
    /// Requests read (lines skipped are not requests).
    pub requests: u64,
    /// True when a file has more to read right away.
    pub more: bool,
    /// What happened to the files: (file, event).
    pub events: Vec<(String, FileEvent)>,
    /// Files whose format detection gave up on their first lines, the first
    /// time it did: (file, why). Their lines are skipped and counted, and
    /// detection is tried again on the lines after them.
    pub undetected: Vec<(String, String)>,
}

#[derive(Debug)]
struct Watched {
    name: String,
    follower: Follower,
    parser: FileParser,
    events: BTreeMap<String, u64>,
}

/// A running watch.
#[derive(Debug)]
pub struct Watcher {
    settings: WatchSettings,
    files: Vec<Watched>,
    reorder: Reorder<Request>,
    shadow: Shadow,
    followed: Vec<Followed>,
    released: Vec<(Millis, Request)>,
    last_sweep: Option<Millis>,
    verdict: Option<Verdict>,
    judged_at: Option<Millis>,
    judgement: Judgement,
    /// The wall clock at the last step.
    wall_ms: Millis,
    /// Requests set aside for a timestamp too far in the future.
    future: u64,
}

/// The name of a file event in metrics.
pub fn event_name(event: &FileEvent) -> &'static str {
    match event {
        FileEvent::Opened { .. } => "opened",
        FileEvent::Replaced => "replaced",
        FileEvent::Truncated => "truncated",
        FileEvent::Missing => "missing",
        FileEvent::NotAFile => "not_a_file",
        FileEvent::Unreadable(_) => "unreadable",
        FileEvent::Compressed(_) => "compressed",
        FileEvent::Closed => "closed",
    }
}

impl Watcher {
    /// A watch of `settings.files` with `settings.rules` in shadow.
    pub fn new(settings: WatchSettings) -> Result<Watcher, WatchError> {
        let shadow = Shadow::with_policy(
            &settings.rules,
            &settings.exemptions,
            settings.gateway,
            &settings.ingest.keys,
        )?
        .with_lateness(settings.max_lateness_ms);
        if let ingest::FormatChoice::LogFormat { .. } | ingest::FormatChoice::Json =
            settings.ingest.format
        {
            ingest::parser_for(&settings.ingest.format, &settings.ingest)?;
        }
        let files = settings
            .files
            .iter()
            .map(|path| {
                let name = path.display().to_string();
                Watched {
                    follower: Follower::new(path, settings.from_start, settings.linger),
                    parser: FileParser::new(&name),
                    name,
                    events: BTreeMap::new(),
                }
            })
            .collect();
        Ok(Watcher {
            reorder: Reorder::new(settings.max_delay_ms),
            files,
            shadow,
            followed: Vec::new(),
            released: Vec::new(),
            last_sweep: None,
            verdict: settings.verdict.clone(),
            judged_at: None,
            judgement: Judgement::Waiting,
            wall_ms: Millis::MAX,
            future: 0,
            settings,
        })
    }

    /// Polls every file once (`now`: the monotonic clock; `wall_ms`: the wall
    /// clock, against which future timestamps are judged) and decides what
    /// the reorder buffer releases.
    pub fn step(&mut self, now: Duration, wall_ms: Millis) -> Result<Step, WatchError> {
        self.wall_ms = wall_ms;
        let mut step = Step::default();
        for i in 0..self.files.len() {
            self.followed.clear();
            let polled = self.files[i].follower.poll(now, &mut self.followed);
            step.bytes += polled.bytes;
            step.more |= polled.more;
            let followed = std::mem::take(&mut self.followed);
            for item in &followed {
                self.take(i, item, &mut step)?;
            }
            self.followed = followed;
            let Watched {
                follower, parser, ..
            } = &mut self.files[i];
            parser.forget_closed(|file| follower.reads(file));
        }
        self.reorder.release(&mut self.released);
        self.decide_released();
        Ok(step)
    }

    /// Releases what is older than `until` even without newer lines (a quiet
    /// log: the wall clock minus the delay).
    pub fn release_until(&mut self, until: Millis) {
        self.reorder.release_until(until, &mut self.released);
        self.decide_released();
    }

    /// Ends the watch: partial lines become lines, everything held is decided.
    pub fn finish(&mut self) -> Result<(), WatchError> {
        let mut step = Step::default();
        for i in 0..self.files.len() {
            self.followed.clear();
            self.files[i].follower.finish(&mut self.followed);
            let followed = std::mem::take(&mut self.followed);
            for item in &followed {
                self.take(i, item, &mut step)?;
            }
            let file = &mut self.files[i];
            if let Some(chunk) = file.parser.finish(&self.settings.ingest)? {
                self.hold(i, &chunk);
            }
        }
        self.drain();
        Ok(())
    }

    /// Decides every request the reorder buffer holds (a watch stopped by an
    /// error: the lines already read are decided).
    pub fn drain(&mut self) {
        self.reorder.flush(&mut self.released);
        self.decide_released();
    }

    /// Puts a chunk's requests into the reorder buffer, setting aside those
    /// more than [`FUTURE_TOLERANCE_MS`] ahead of the wall clock; returns
    /// how many requests the chunk held.
    fn hold(&mut self, file: usize, chunk: &ingest::chunk::ChunkResult) -> u64 {
        let limit = self.wall_ms.saturating_add(FUTURE_TOLERANCE_MS);
        let requests = self.shadow.requests(chunk);
        let held = requests.len() as u64;
        for (t, request) in requests {
            if t > limit {
                self.future += 1;
            } else {
                self.reorder.push(t, file, request);
            }
        }
        held
    }

    fn take(&mut self, i: usize, item: &Followed, step: &mut Step) -> Result<(), WatchError> {
        let file = &mut self.files[i];
        match item {
            Followed::Lines { file: number, data } => {
                let chunk = file.parser.parse(*number, data, &self.settings.ingest)?;
                if let Some(why) = file.parser.take_undetected() {
                    *file.events.entry("undetected".to_string()).or_default() += 1;
                    step.undetected.push((file.name.clone(), why));
                }
                if let Some(chunk) = chunk {
                    step.requests += self.hold(i, &chunk);
                }
            }
            Followed::TooLong { .. } => file.parser.too_long(),
            Followed::Header {
                file: number,
                lines,
            } => file.parser.header(*number, lines, &self.settings.ingest),
            Followed::Event(FileEvent::Compressed(kind)) => {
                return Err(WatchError::Compressed {
                    file: file.name.clone(),
                    kind,
                });
            }
            Followed::Event(event) => {
                *file
                    .events
                    .entry(event_name(event).to_string())
                    .or_default() += 1;
                step.events.push((file.name.clone(), event.clone()));
            }
        }
        Ok(())
    }

    fn decide_released(&mut self) {
        let mut released = std::mem::take(&mut self.released);
        for (t, request) in released.drain(..) {
            // A late request's own time is older: the verdict's clock is the
            // newest time decided, but not past the wall clock (a line far
            // ahead, decided at a stop, would settle a verdict held `--for`).
            let now = self.shadow.now().map_or(t, |now| now.max(t));
            let now = now.min(self.wall_ms);
            if let Some(v) = &self.verdict
                && v.due(now, self.judged_at)
            {
                self.judge(now);
            }
            self.shadow.decide(t, &request);
        }
        self.released = released;
        if let Some(now) = self.shadow.now()
            && self
                .last_sweep
                .is_none_or(|last| now - last >= SWEEP_EVERY_MS)
        {
            self.shadow.sweep(now);
            self.last_sweep = Some(now);
        }
    }

    /// Judges the verdict on the figures as of log time `t` (before the
    /// request at `t`); a decided verdict stays.
    fn judge(&mut self, t: Millis) {
        let Some(verdict) = &mut self.verdict else {
            return;
        };
        self.judged_at = Some(t);
        if self.judgement == Judgement::Waiting {
            self.shadow.sweep(t);
            self.judgement = verdict.judge(t, &self.shadow.figures_at(t));
        }
    }

    /// Where the verdict stands (`Waiting` without one).
    pub fn judgement(&self) -> &Judgement {
        &self.judgement
    }

    /// The rules' figures.
    pub fn rules(&self) -> Vec<RuleFigures> {
        self.shadow.figures()
    }

    /// The log time of the last request decided.
    pub fn log_now(&self) -> Option<Millis> {
        self.shadow.now()
    }

    /// The delay the reorder buffer waits.
    pub fn max_delay_ms(&self) -> Millis {
        self.settings.max_delay_ms
    }

    /// Everything exported, with the lag against `wall_ms`.
    pub fn snapshot(&self, wall_ms: Millis) -> Snapshot {
        let mut skipped = BTreeMap::new();
        let files = self
            .files
            .iter()
            .map(|f| {
                let counts = f.parser.counts();
                for (reason, n) in &counts.skipped {
                    *skipped.entry(reason.clone()).or_default() += n;
                }
                FileFigures {
                    file: f.name.clone(),
                    lines: counts.lines,
                    glued: counts.glued,
                    parsed: counts.parsed,
                    readable: f.follower.readable(),
                    events: f.events.clone(),
                }
            })
            .collect();
        let newest = self.reorder.newest();
        Snapshot {
            rules: self.shadow.figures(),
            files,
            skipped,
            exempt_requests: self.shadow.exempt(),
            late_lines: self.reorder.late(),
            future_requests: self.future,
            pending: self.reorder.len(),
            newest_ms: newest,
            lag_seconds: newest.map(|n| (wall_ms - n) as f64 / 1000.0),
        }
    }
}

#[cfg(test)]
mod tests;
