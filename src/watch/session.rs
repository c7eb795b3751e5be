//! The watch loop: step the [`Watcher`], sleep when there is nothing to read,
//! release quiet lines by the wall clock, publish the metrics, refresh the
//! outputs, write a summary per interval, and stop on the verdict.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::clock::Clock;
use super::follow::FileEvent;
use super::http::Published;
use super::metrics::{Snapshot, render};
use super::verdict::Judgement;
use super::watcher::{Step, WatchError, Watcher};

/// How often the loop runs (the verdict that may end it is the watcher's).
#[derive(Debug, Clone)]
pub struct SessionSettings {
    /// Pause between polls when nothing was waiting.
    pub poll: Duration,
    /// How often the metrics text and the terminal view are refreshed.
    pub refresh: Duration,
    /// `--interval`: one summary per interval (`--format jsonl`).
    pub interval: Option<Duration>,
}

/// Where a session's results go besides `/metrics`.
pub trait Outputs {
    /// Called every refresh.
    fn refresh(&mut self, _snapshot: &Snapshot) -> io::Result<()> {
        Ok(())
    }
    /// Called every interval.
    fn summary(&mut self, _snapshot: &Snapshot) -> io::Result<()> {
        Ok(())
    }
    /// Called when something happens to a file.
    fn event(&mut self, _file: &str, _event: &FileEvent) -> io::Result<()> {
        Ok(())
    }
    /// Called once for a file whose format could not be detected on its
    /// first lines (`why`: the detection's message); it is still followed.
    fn undetected(&mut self, _file: &str, _why: &str) -> io::Result<()> {
        Ok(())
    }
}

/// How a session ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ending {
    /// The verdict passed.
    Passed,
    /// The verdict failed: `rule`'s share of clients hit, `hit` of `seen`.
    Failed {
        rule: String,
        share: f64,
        hit: u64,
        seen: u64,
    },
    /// Asked to stop.
    Stopped,
}

/// Why a session stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error(transparent)]
    Watch(#[from] WatchError),
    #[error("cannot write the watch output: {0}")]
    Output(#[from] io::Error),
}

/// Runs until the verdict decides or `stop` is set.
pub fn run(
    watcher: &mut Watcher,
    clock: &dyn Clock,
    settings: &SessionSettings,
    published: Option<&Published>,
    outputs: &mut dyn Outputs,
    stop: &AtomicBool,
) -> Result<Ending, SessionError> {
    let mut next_refresh = Duration::ZERO;
    let mut next_summary = settings.interval.map(|i| clock.elapsed() + i);
    loop {
        if stop.load(Ordering::Relaxed) {
            return stopped(watcher, clock, published, outputs);
        }
        let step = match watcher.step(clock.elapsed(), clock.wall_ms()) {
            Ok(step) => step,
            Err(e) => {
                // The error matters more than output that could not be written.
                let _ = last_summary(watcher, clock, published, outputs);
                return Err(e.into());
            }
        };
        report(&step, outputs)?;
        // Quiet (no request read; lines skipped do not count): release what
        // the wall clock has passed by the delay. Not on every step caught
        // up: a busy log behind the wall clock would have its lines released
        // before the other files' lines within --max-delay of them came.
        if step.requests == 0 {
            watcher.release_until(clock.wall_ms().saturating_sub(watcher.max_delay_ms()));
        }
        let now = clock.elapsed();
        if now >= next_refresh {
            let snapshot = publish(watcher, clock, published, outputs)?;
            next_refresh = now + settings.refresh;
            if let Some(at) = next_summary.filter(|&at| now >= at) {
                outputs.summary(&snapshot)?;
                next_summary = settings.interval.map(|i| at.max(now) + i);
            }
        }
        if let Some(ending) = ending(watcher.judgement()) {
            // The figures the verdict was decided on, as a last summary too.
            let snapshot = publish(watcher, clock, published, outputs)?;
            outputs.summary(&snapshot)?;
            return Ok(ending);
        }
        if !step.more {
            clock.sleep(settings.poll);
        }
    }
}

/// Tells the outputs what a step found happened to the files.
fn report(step: &Step, outputs: &mut dyn Outputs) -> io::Result<()> {
    for (file, event) in &step.events {
        outputs.event(file, event)?;
    }
    for (file, why) in &step.undetected {
        outputs.undetected(file, why)?;
    }
    Ok(())
}

/// Ends a watch asked to stop: every file is read once more (what was
/// written since the last poll, up to one poll's budget), a partial last
/// line is read as a line (no newline will come now; `simulate` reads it
/// too), everything held is decided, then the metrics and a last summary.
fn stopped(
    watcher: &mut Watcher,
    clock: &dyn Clock,
    published: Option<&Published>,
    outputs: &mut dyn Outputs,
) -> Result<Ending, SessionError> {
    let read = watcher
        .step(clock.elapsed(), clock.wall_ms())
        .and_then(|step| {
            watcher.finish()?;
            Ok(step)
        });
    match read {
        Ok(step) => report(&step, outputs)?,
        Err(e) => {
            // The error matters more than output that could not be written.
            let _ = last_summary(watcher, clock, published, outputs);
            return Err(e.into());
        }
    }
    last_summary(watcher, clock, published, outputs)?;
    Ok(ending(watcher.judgement()).unwrap_or(Ending::Stopped))
}

/// How the session ends on `judgement`, if it is decided.
fn ending(judgement: &Judgement) -> Option<Ending> {
    match judgement {
        Judgement::Waiting => None,
        Judgement::Passed => Some(Ending::Passed),
        Judgement::Failed {
            rule,
            share,
            hit,
            seen,
        } => Some(Ending::Failed {
            rule: rule.clone(),
            share: *share,
            hit: *hit,
            seen: *seen,
        }),
    }
}

/// Decides what the reorder buffer holds, then publishes the figures so far
/// in the metrics and as a last summary (a watch asked to stop, after its last
/// read, or stopped by an error).
fn last_summary(
    watcher: &mut Watcher,
    clock: &dyn Clock,
    published: Option<&Published>,
    outputs: &mut dyn Outputs,
) -> io::Result<()> {
    watcher.drain();
    let snapshot = publish(watcher, clock, published, outputs)?;
    outputs.summary(&snapshot)
}

fn publish(
    watcher: &Watcher,
    clock: &dyn Clock,
    published: Option<&Published>,
    outputs: &mut dyn Outputs,
) -> io::Result<Snapshot> {
    let snapshot = watcher.snapshot(clock.wall_ms());
    if let Some(published) = published {
        *published.lock().unwrap_or_else(|e| e.into_inner()) = render(&snapshot);
    }
    outputs.refresh(&snapshot)?;
    Ok(snapshot)
}

/// Writes one JSON object per summary (`--format jsonl`).
#[derive(Debug)]
pub struct JsonLines<W: io::Write>(pub W);

impl<W: io::Write> Outputs for JsonLines<W> {
    fn summary(&mut self, snapshot: &Snapshot) -> io::Result<()> {
        serde_json::to_writer(&mut self.0, snapshot)?;
        self.0.write_all(b"\n")?;
        self.0.flush()
    }
}

#[cfg(test)]
mod tests;
