//! From profiles to timestamped requests: each profile's [`Timing`] becomes a
//! stream of arrivals, and [`Traffic`] merges the streams into one time-ordered
//! sequence of [`Event`]s.
//!
//! Arrivals are a Poisson process whose rate is piecewise constant (steady,
//! bursts, loop episodes), or a fixed interval with jitter (the monitor). Each
//! stream draws from its own generator, derived from the seed and the stream's
//! index, so streams never shift each other. Times are kept in milliseconds
//! after the start as `f64` and floored to whole milliseconds on output.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::catalog::REFERERS;
use super::distinct;
use super::profiles::{Kind, Profile};
use super::rng::Rng;
use super::routes::{Route, RouteKind};
use crate::units::Millis;

/// When a profile sends requests. Rates are per second, spans in seconds.
#[derive(Debug, Clone, PartialEq)]
pub enum Timing {
    /// A Poisson process at a constant rate.
    Poisson { rate: f64 },
    /// Bursts of `size` requests (uniform in the range, as a Poisson count)
    /// spread over `spread` seconds, every `period` seconds from `phase`; a
    /// trickle at `idle_rate` in between.
    Bursts {
        period: f64,
        phase: f64,
        size: (u32, u32),
        spread: (f64, f64),
        idle_rate: f64,
    },
    /// `base_rate` normally; in each cycle of the run, an episode starting at
    /// fraction `start` of the cycle and lasting fraction `length` of it, a loop
    /// on `route` at `loop_rate`, of which a share `throttled` is answered 429.
    Loop {
        base_rate: f64,
        loop_rate: f64,
        start: f64,
        length: f64,
        route: Route,
        throttled: f64,
    },
    /// Every `interval` seconds, each gap off by up to +-`jitter` of it.
    Fixed { interval: f64, jitter: f64 },
}

impl Timing {
    /// The long-run average rate in requests per second.
    pub fn mean_rate(&self) -> f64 {
        match *self {
            Timing::Poisson { rate } => rate,
            Timing::Bursts {
                period,
                size,
                idle_rate,
                ..
            } => f64::from(size.0 + size.1) / 2.0 / period + idle_rate,
            Timing::Loop {
                base_rate,
                loop_rate,
                length,
                ..
            } => base_rate * (1.0 - length) + loop_rate * length,
            Timing::Fixed { interval, .. } => 1.0 / interval,
        }
    }
}

/// One request, ready to be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// When it arrived, epoch milliseconds.
    pub ts: Millis,
    /// Index of the profile that sent it.
    pub profile: u32,
    /// What was requested.
    pub route: Route,
    /// `$status`.
    pub status: u16,
    /// `$body_bytes_sent`.
    pub body_bytes: u32,
    /// `$request_time` in milliseconds.
    pub request_time_ms: u32,
    /// `$http_referer`, if any.
    pub referer: Option<&'static str>,
}

/// A constant-rate stretch of a stream: `rate` per ms until `until` (ms).
struct Segment {
    rate: f64,
    until: f64,
    looping: bool,
}

/// One profile's arrivals.
struct Stream {
    rng: Rng,
    burst_seed: u64,
    clock: f64,
}

impl Stream {
    /// The next arrival after the clock (ms after the start) and whether it
    /// falls in a loop episode; `None` at or past `end`.
    fn arrive(&mut self, timing: &Timing, cycle: f64, end: f64) -> Option<(f64, bool)> {
        if let Timing::Fixed { interval, jitter } = *timing {
            let step = interval * 1000.0;
            self.clock += if self.clock == 0.0 {
                self.rng.uniform_in(1.0, step)
            } else {
                step * (1.0 + self.rng.uniform_in(-jitter, jitter))
            };
            return (self.clock < end).then_some((self.clock, false));
        }
        let mut t = self.clock;
        while t < end {
            let seg = self.segment(timing, cycle, t);
            debug_assert!(seg.until > t, "segment must move forward");
            if seg.rate > 0.0 {
                let next = t + self.rng.exponential(seg.rate);
                if next < seg.until {
                    self.clock = next;
                    return (next < end).then_some((next, seg.looping));
                }
            }
            t = seg.until;
        }
        None
    }

    /// The constant-rate stretch holding `t`. Boundaries are whole milliseconds,
    /// so `floor` lands exactly on them when `t` is one.
    fn segment(&self, timing: &Timing, cycle: f64, t: f64) -> Segment {
        let steady = |rate: f64, until| Segment {
            rate: rate / 1000.0,
            until,
            looping: false,
        };
        match *timing {
            Timing::Poisson { rate } => steady(rate, f64::INFINITY),
            Timing::Bursts {
                period,
                phase,
                size,
                spread,
                idle_rate,
            } => {
                let (period, phase) = ((period * 1000.0).round(), (phase * 1000.0).round());
                if t < phase {
                    return steady(idle_rate, phase);
                }
                let k = ((t - phase) / period).floor();
                let begin = phase + k * period;
                let mut burst = Rng::derive(self.burst_seed, k as u64);
                let count = f64::from(burst.between(size.0, size.1));
                let spread = (burst.uniform_in(spread.0, spread.1) * 1000.0).round();
                if t < begin + spread {
                    steady(count * 1000.0 / spread, begin + spread)
                } else {
                    steady(idle_rate, begin + period)
                }
            }
            Timing::Loop {
                base_rate,
                loop_rate,
                start,
                length,
                ..
            } => {
                let begin_in_cycle = (start * cycle).round();
                let length = (length * cycle).round().max(1.0);
                let begin = (t / cycle).floor() * cycle + begin_in_cycle;
                if t < begin {
                    steady(base_rate, begin)
                } else if t < begin + length {
                    Segment {
                        rate: loop_rate / 1000.0,
                        until: begin + length,
                        looping: true,
                    }
                } else {
                    steady(base_rate, begin + cycle)
                }
            }
            Timing::Fixed { .. } => unreachable!("fixed timing has no rate"),
        }
    }
}

/// What an arrival asks for and how it is answered. With `pool`, a share of
/// the requests of steady clients, office users and crawlers asks for a
/// `--distinct-paths` pool path (its index is set later, in output order).
fn request(profile: &Profile, looping: bool, pool: bool, rng: &mut Rng) -> (Route, u16, u32, u32) {
    let looped = match profile.timing {
        Timing::Loop {
            route, throttled, ..
        } if looping => Some((route, throttled)),
        _ => None,
    };
    if let Some((route, throttled)) = looped {
        if rng.chance(throttled) {
            return (route, 429, 169, 0);
        }
        let (status, bytes, ms) = route.outcome(rng);
        return (route, status, bytes, ms);
    }
    let pooled = matches!(profile.kind, Kind::Steady | Kind::Office | Kind::Crawler);
    if pool && pooled && rng.chance(distinct::POOL_SHARE) {
        // Index 0 stands for "not assigned yet"; its shape (an asset) is not
        // the one the index gets, so the outcome is drawn once it is known.
        return (Route::Distinct(0), 0, 0, 0);
    }
    let pick = rng.weighted(profile.mix.iter().map(|&(_, w)| w));
    let kind: RouteKind = profile.mix[pick].0;
    let route = Route::draw(kind, profile.own_user_id, rng);
    let (status, bytes, ms) = route.outcome(rng);
    (route, status, bytes, ms)
}

/// The time-ordered merge of every profile's requests.
pub struct Traffic<'a> {
    profiles: &'a [Profile],
    streams: Vec<Stream>,
    pending: Vec<Option<Event>>,
    heap: BinaryHeap<Reverse<(Millis, u32)>>,
    start: Millis,
    cycle: f64,
    end: f64,
    pool: bool,
}

impl<'a> Traffic<'a> {
    /// Requests from `start` for `cycle_ms` milliseconds, or without end when
    /// `unbounded` (loop episodes then recur every cycle). Ties in the same
    /// millisecond are ordered by profile index. With `pool`, some requests ask
    /// for a `--distinct-paths` pool path (see [`request`]).
    pub fn new(
        profiles: &'a [Profile],
        seed: u64,
        start: Millis,
        cycle_ms: i64,
        unbounded: bool,
        pool: bool,
    ) -> Self {
        let mut traffic = Traffic {
            profiles,
            streams: Vec::with_capacity(profiles.len()),
            pending: vec![None; profiles.len()],
            heap: BinaryHeap::with_capacity(profiles.len()),
            start,
            cycle: cycle_ms as f64,
            end: if unbounded {
                f64::INFINITY
            } else {
                cycle_ms as f64
            },
            pool,
        };
        for i in 0..profiles.len() {
            let index = i as u64 + 1;
            traffic.streams.push(Stream {
                rng: Rng::derive(seed, index),
                burst_seed: Rng::derive(seed, index | 1 << 63).next_u64(),
                clock: 0.0,
            });
            traffic.advance(i);
        }
        traffic
    }

    fn advance(&mut self, i: usize) {
        let profile = &self.profiles[i];
        let stream = &mut self.streams[i];
        self.pending[i] = None;
        let Some((t, looping)) = stream.arrive(&profile.timing, self.cycle, self.end) else {
            return;
        };
        let (route, status, body_bytes, request_time_ms) =
            request(profile, looping, self.pool, &mut stream.rng);
        let referer =
            (profile.browser && stream.rng.chance(0.85)).then(|| *stream.rng.pick(&REFERERS));
        let event = Event {
            ts: self.start + t.floor() as i64,
            profile: i as u32,
            route,
            status,
            body_bytes,
            request_time_ms,
            referer,
        };
        self.pending[i] = Some(event);
        self.heap.push(Reverse((event.ts, i as u32)));
    }
}

impl Iterator for Traffic<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        let Reverse((_, i)) = self.heap.pop()?;
        let event = self.pending[i as usize]?;
        self.advance(i as usize);
        Some(event)
    }
}
