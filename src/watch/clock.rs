//! The two clocks `rlctl watch` reads, behind one trait so tests drive time by
//! hand: a monotonic clock for polling, lingering and intervals, and the wall
//! clock for the lag (now minus the newest log timestamp). Decisions never read
//! either: limiters run on the log's own timestamps.

use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::units::Millis;

/// Where `watch` reads the time and how it waits.
pub trait Clock: Send + Sync {
    /// Time elapsed since the clock started (never decreases).
    fn elapsed(&self) -> Duration;
    /// Wall-clock time in milliseconds since the Unix epoch.
    fn wall_ms(&self) -> Millis;
    /// Waits `d` (a manual clock just advances).
    fn sleep(&self, d: Duration);
}

/// The machine's clocks.
#[derive(Debug)]
pub struct SystemClock {
    start: Instant,
}

impl Default for SystemClock {
    fn default() -> Self {
        SystemClock {
            start: Instant::now(),
        }
    }
}

impl Clock for SystemClock {
    fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    fn wall_ms(&self) -> Millis {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    }

    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// A clock that moves only when told to (tests): `sleep` advances both clocks.
#[derive(Debug)]
pub struct ManualClock {
    /// (elapsed, wall ms).
    now: Mutex<(Duration, Millis)>,
}

impl ManualClock {
    /// A clock whose wall time starts at `wall_ms`.
    pub fn new(wall_ms: Millis) -> Self {
        ManualClock {
            now: Mutex::new((Duration::ZERO, wall_ms)),
        }
    }

    /// Moves both clocks forward by `d`.
    pub fn advance(&self, d: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        now.0 += d;
        now.1 += i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    }
}

impl Clock for ManualClock {
    fn elapsed(&self) -> Duration {
        self.now.lock().unwrap_or_else(|e| e.into_inner()).0
    }

    fn wall_ms(&self) -> Millis {
        self.now.lock().unwrap_or_else(|e| e.into_inner()).1
    }

    fn sleep(&self, d: Duration) {
        self.advance(d);
    }
}
