//! `rlctl watch`: settings to a [`Watcher`], the metrics server, the session
//! loop with the chosen stdout output, and the verdict as the exit code.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;

use crate::Outcome;
use crate::cli::WatchArgs;
use crate::options::{self, WatchOutput};
use crate::scenario::gateway::{policy_notes, prefix_note};
use crate::text::escape;
use crate::watch::clock::SystemClock;
use crate::watch::follow::FileEvent;
use crate::watch::http::{MetricsServer, Published};
use crate::watch::metrics::Snapshot;
use crate::watch::session::{self, Ending, JsonLines, Outputs, SessionError};
use crate::watch::view;
use crate::watch::watcher::Watcher;

/// The stdout output and the notices on stderr.
struct Terminal {
    output: WatchOutput,
    quiet: bool,
    jsonl: JsonLines<io::Stdout>,
}

impl Outputs for Terminal {
    fn refresh(&mut self, snapshot: &Snapshot) -> io::Result<()> {
        if self.output != WatchOutput::View {
            return Ok(());
        }
        let mut out = io::stdout().lock();
        // Home, clear the screen, then the frame.
        write!(out, "\x1b[H\x1b[2J{}", view::frame(snapshot))?;
        out.flush()
    }

    fn summary(&mut self, snapshot: &Snapshot) -> io::Result<()> {
        match self.output {
            WatchOutput::Jsonl => self.jsonl.summary(snapshot),
            _ => Ok(()),
        }
    }

    fn event(&mut self, file: &str, event: &FileEvent) -> io::Result<()> {
        if self.quiet || self.output == WatchOutput::View {
            return Ok(());
        }
        let what = match event {
            FileEvent::Opened { offset } => format!("following from byte {offset}"),
            FileEvent::Replaced => "a new file took the path (rotated)".into(),
            FileEvent::Truncated => "truncated (copytruncate): reading from the start".into(),
            FileEvent::Missing => "missing".into(),
            FileEvent::NotAFile => "is not a regular file".into(),
            FileEvent::Unreadable(reason) => format!("cannot be read: {reason}"),
            FileEvent::Compressed(kind) => format!("is {kind}-compressed: not followed"),
            FileEvent::Closed => "rotated-away file closed".into(),
        };
        eprintln!(
            "rlctl: {}: {}",
            escape::terminal(file),
            escape::terminal(&what)
        );
        Ok(())
    }

    fn undetected(&mut self, _file: &str, why: &str) -> io::Result<()> {
        if self.quiet || self.output == WatchOutput::View {
            return Ok(());
        }
        eprintln!(
            "rlctl: {}; still following: lines in no format detected are skipped and counted (\"log format not detected\"), and detection is tried again on the lines after them",
            escape::terminal(why)
        );
        Ok(())
    }
}

/// Runs `rlctl watch`.
pub fn run(args: WatchArgs) -> anyhow::Result<Outcome> {
    let settings = options::watch_settings(&args)?;
    let mut watcher = Watcher::new(settings.watch.clone())?;
    let gateways: Vec<_> = settings.watch.gateway.into_iter().collect();
    let rule_keys = settings.watch.rules.iter().map(|r| r.key.text.as_str());
    if let Some(note) = prefix_note(&settings.watch.ingest.keys.primary, rule_keys, &gateways)
        && !settings.quiet
    {
        eprintln!("rlctl: note: {note}");
    }
    let notes = policy_notes(&settings.watch.rules, &settings.watch.exemptions, &gateways);
    for note in notes.iter().filter(|_| !settings.quiet) {
        eprintln!("rlctl: note: {}", escape::terminal(note));
    }
    let published: Published = Arc::new(Mutex::new(String::new()));
    let _server = match settings.listen {
        Some(addr) => {
            let server = MetricsServer::start(addr, published.clone())
                .with_context(|| format!("cannot serve metrics on {addr}"))?;
            if !settings.quiet {
                eprintln!("rlctl: metrics at http://{}/metrics", server.addr());
            }
            Some(server)
        }
        None => None,
    };
    let mut terminal = Terminal {
        output: settings.output,
        quiet: settings.quiet,
        jsonl: JsonLines(io::stdout()),
    };
    // SIGINT and SIGTERM end the watch with its figures so far.
    static STOP: AtomicBool = AtomicBool::new(false);
    ctrlc::set_handler(|| STOP.store(true, Ordering::Relaxed))
        .context("cannot handle SIGINT and SIGTERM")?;
    let verdict = settings.watch.verdict.is_some();
    let ending = match session::run(
        &mut watcher,
        &SystemClock::default(),
        &settings.session,
        Some(&published),
        &mut terminal,
        &STOP,
    ) {
        // A reader that stopped early (`| head`) is no verdict.
        Err(SessionError::Output(e)) if verdict && e.kind() == io::ErrorKind::BrokenPipe => {
            anyhow::bail!("standard output was closed before the verdict was decided")
        }
        ending => ending?,
    };
    let threshold = settings.watch.verdict.as_ref().map_or(0.0, |v| v.threshold);
    match ending {
        Ending::Passed => {
            eprintln!(
                "rlctl: PASS: every rule's share of clients hit was at or below {:.2}% at each judgement (every minute of log time) for {} of log time",
                threshold * 100.0,
                args.hold,
            );
            Ok(Outcome::Success)
        }
        Ending::Failed {
            rule,
            share,
            hit,
            seen,
        } => {
            eprintln!(
                "rlctl: FAIL: rule {}: {:.2}% of clients hit ({hit} of {seen} in the last hour of log time), above --until-clients-hit {:.2}%",
                escape::terminal(&rule),
                share * 100.0,
                threshold * 100.0,
            );
            Ok(Outcome::GateFailed)
        }
        Ending::Stopped if verdict => {
            anyhow::bail!("stopped (SIGINT or SIGTERM) before the verdict was decided")
        }
        Ending::Stopped => Ok(Outcome::Success),
    }
}
