//! Seeded synthetic access logs for fixtures, demos and benchmarks
//! (`rlctl generate`). This module owns the configuration and the run; the
//! parts live in [`rng`] (deterministic random numbers), [`catalog`] (names,
//! agents, paths), [`profiles`] (who the
//! clients are), [`routes`] (the endpoints and their answers), [`traffic`]
//! (arrival times and the time-ordered merge), [`clock`] (timestamps) and
//! [`writer`] (combined, JSON and `log_format` lines). It never reads logs.
//!
//! The same configuration and seed give byte-identical output on every
//! platform and with every dependency version: the random numbers and the
//! floating-point functions they use are implemented here.
//!
//! # The traffic mix
//!
//! `--clients N` counts source addresses (N >= 6). They are:
//!
//! | kind | how many | behaviour |
//! |---|---|---|
//! | steady | the rest | Poisson arrivals at a per-client rate drawn lognormal (median 0.2 req/s, sigma 1.0, capped at 10 req/s); 40% browsers (static assets, referers), 60% API clients (35% of them with a `$remote_user` such as `acme-17`); 15% behind a proxy (`$http_x_forwarded_for` = `10.x.y.z`); a twelfth (at least two) on IPv6 (`2001:db8::/32`) |
//! | batch | one per 50 clients (at least 1) | every 5 minutes (random phase) a burst of 50-200 requests (Poisson count) spread over 2-6 s on orders and users; 0.002 req/s in between; all in one /24, user `svc-...` |
//! | runaway | 1 (2 from 100 clients) | 0.1 req/s, except one episode per run (start at 15-75% of it, lasting 1/12 of it: 5 minutes of an hour) looping on one endpoint at 25 (second one: 40) req/s; 35% of the loop is answered 429 |
//! | NAT office | 1 address | 15 + N/10 browser users with distinct `$remote_user` (`anna.smith`...), each Poisson at lognormal median 0.05 req/s, sigma 0.5 |
//! | crawlers | one per 40 clients (at least 1) | user agent with `bot` (Googlebot, bingbot...), Poisson at lognormal median 0.8 req/s, sigma 0.3, over product pages, blog, search, robots.txt, sitemap |
//! | monitor | 1 | `GET /health` every 10 s +-5% from `10.0.x.y` |
//!
//! Endpoints: `GET /api/users/{id}`, `/api/users/{id}/notifications`,
//! `/api/orders/{uuid}`, `/api/products?page=`, `/api/search?q=`, `/static/...`,
//! `/products/{id}`, `/blog/{slug}`, `/`, `/health`, `/robots.txt`,
//! `/sitemap.xml`, `/favicon.ico`; `POST /api/orders`, `/api/cart/items`,
//! `/login`. Statuses are mostly 200/201/304, with some 404, 400, 401 and 409
//! and a few 500 (answer tables in [`routes`]).
//!
//! # Length
//!
//! `--duration D` generates the requests that arrive in `[start, start + D)`.
//! `--lines N` instead sets the run length D to N divided by the mix's expected
//! rate (the sum of every profile's long-run mean rate), so N lines span about
//! one run and every component keeps its share; generation then continues past
//! D if needed (runaway episodes recur every D) and stops at exactly N lines.
//!
//! # Shapes for benchmarks and heuristics (opt-in, see [`Shapes`])
//!
//! Without these flags the output is what it always was. With them:
//!
//! - `--distinct-paths N`: a quarter of the requests of steady clients, office
//!   users and crawlers ask for one of N high-cardinality raw paths (hashed
//!   assets, short hex ids, base62 ids, slugs; [`distinct`]). The first N such
//!   requests each ask for a new one, so a log of 4N lines or more (a little
//!   more with scanners or batch workers in the mix) holds all N.
//! - `--scanners K`: K more addresses probing many distinct paths, answered
//!   mostly 404 ([`scanners`]).
//! - `--shuffle`: each epoch-aligned minute's lines in a seeded random order.
//! - `--logged-at-end`: each request written when it ends (its time plus its
//!   request time), stamped with when it began, as Apache's `%t` is: lines a
//!   little out of time order ([`order`]).
//! - `--servers K`: the requests dealt to K servers; each server's log is
//!   time-sorted and they are written one after another ([`order`]). Rotated
//!   files out of order are a shell recipe: `split -n l/10 -d all.log part.`,
//!   then `cat part.07 part.02 ...`.
//!
//! `--clients` scales to millions: the cost per line is a heap step
//! (logarithmic in the clients), and addresses stay distinct at any count.

mod addresses;
pub mod catalog;
pub mod clock;
pub mod distinct;
pub mod order;
mod outcomes;
pub mod profiles;
pub mod rng;
pub mod routes;
pub mod scanners;
pub mod traffic;
pub mod writer;

#[cfg(test)]
mod shape_tests;
#[cfg(test)]
mod tests;

use std::io::{self, Write};

use clock::TimeOffset;
use distinct::PoolAssigner;
use order::{LoggedAtEnd, ShuffleMinutes};
use profiles::{MIN_CLIENTS, Profile};
use rng::Rng;
use routes::Route;
use traffic::{Event, Traffic};
use writer::{COMBINED, JsonFormat, LineFormat, TemplateFormat};

use crate::units::{MS_PER_SEC, Millis, Window};

/// Why a generator configuration is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenerateError {
    #[error(
        "invalid start `{0}`: expected YYYY-MM-DDTHH:MM:SSZ in the years 1 to 9999, e.g. 2026-01-05T00:00:00Z"
    )]
    Start(String),
    #[error("invalid time offset `{0}`: expected +HHMM or -HHMM, e.g. +0000, -0500, +0530")]
    TimeOffset(String),
    #[error(
        "unknown log_format variable `{0}`; supported: $remote_addr $remote_user $time_local \
         $time_iso8601 $msec $request $request_method $request_uri $uri $args $query_string \
         $server_protocol $host $status $body_bytes_sent $http_referer $http_user_agent \
         $http_x_forwarded_for $request_time"
    )]
    Variable(String),
    #[error(
        "unknown format `{0}`: expected combined, json, or an nginx log_format string with \
         $variables"
    )]
    Format(String),
    #[error("--clients must be at least {MIN_CLIENTS} (one client of every kind), got {0}")]
    TooFewClients(u32),
    #[error(
        "the log would reach {0}, outside the years 1 to 9999 that rlctl reads; give another --start or a shorter run"
    )]
    OutOfYears(String),
    #[error("--lines must be at least 1")]
    NoLines,
    #[error("--distinct-paths must be at least 1")]
    NoDistinctPaths,
    #[error("--servers must be between 1 and 1000, got {0}")]
    Servers(u32),
}

/// The line format to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// nginx's `combined`.
    Combined,
    /// One JSON object per line.
    Json,
    /// A literal nginx `log_format` string.
    Template(String),
}

impl Format {
    /// `combined`, `json`, or a string containing `$` variables.
    pub fn parse(text: &str) -> Result<Format, GenerateError> {
        match text {
            "combined" => Ok(Format::Combined),
            "json" => Ok(Format::Json),
            t if t.contains('$') => Ok(Format::Template(t.to_string())),
            t => Err(GenerateError::Format(t.to_string())),
        }
    }
}

/// How much traffic to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// Every request arriving within this span of the start.
    Duration(Window),
    /// Exactly this many lines (see the module doc).
    Lines(u64),
}

/// A complete generator configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Source addresses (the NAT office counts once).
    pub clients: u32,
    /// How much traffic to write.
    pub length: Length,
    /// Seed of every random draw.
    pub seed: u64,
    /// The first instant, epoch milliseconds.
    pub start: Millis,
    /// The line format.
    pub format: Format,
    /// Zone offset printed in `$time_local` and `$time_iso8601`.
    pub time_offset: TimeOffset,
    /// Opt-in traffic shapes and line orders (none by default).
    pub shapes: Shapes,
}

/// Opt-in shapes (module doc); the default adds none and keeps the time order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shapes {
    /// Size of the high-cardinality path pool (`--distinct-paths`).
    pub distinct_paths: Option<u32>,
    /// Scanner addresses added to the cast (`--scanners`).
    pub scanners: u32,
    /// Shuffle each minute's lines (`--shuffle`).
    pub shuffle: bool,
    /// Write each request when it ends (`--logged-at-end`).
    pub logged_at_end: bool,
    /// Servers whose time-sorted logs are concatenated (`--servers`; 1: one log).
    pub servers: u32,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            distinct_paths: None,
            scanners: 0,
            shuffle: false,
            logged_at_end: false,
            servers: 1,
        }
    }
}

impl Default for Config {
    /// The CLI defaults: 200 clients, 1 hour, seed 42, 2026-01-05T00:00:00Z, combined.
    fn default() -> Self {
        Config {
            clients: 200,
            length: Length::Duration(Window::from_secs(3600).expect("non-zero")),
            seed: 42,
            start: 1_767_571_200_000,
            format: Format::Combined,
            time_offset: TimeOffset::default(),
            shapes: Shapes::default(),
        }
    }
}

/// A validated configuration, ready to write.
pub struct Generator {
    profiles: Vec<Profile>,
    seed: u64,
    start: Millis,
    run_secs: u64,
    line_limit: Option<u64>,
    format: Format,
    time_offset: TimeOffset,
    shapes: Shapes,
}

/// Bytes gathered before each write to the output.
const CHUNK: usize = 1 << 20;

impl Generator {
    /// Checks the configuration and draws the cast of clients.
    pub fn new(config: &Config) -> Result<Self, GenerateError> {
        if config.clients < MIN_CLIENTS {
            return Err(GenerateError::TooFewClients(config.clients));
        }
        let shows_local = line_format(&config.format, config.time_offset)?.shows_local_time();
        let shapes = config.shapes;
        if shapes.distinct_paths == Some(0) {
            return Err(GenerateError::NoDistinctPaths);
        }
        if !(1..=1000).contains(&shapes.servers) {
            return Err(GenerateError::Servers(shapes.servers));
        }
        let mut profiles = profiles::cast(config.clients, &mut Rng::derive(config.seed, 0));
        if shapes.scanners > 0 {
            let taken = profiles.iter().map(|p| p.addr.as_str()).collect();
            let rng = &mut Rng::derive(config.seed, SCANNER_STREAM);
            let scanners = scanners::scanners(shapes.scanners, rng, &taken);
            profiles.extend(scanners);
        }
        let (run_secs, line_limit) = match config.length {
            Length::Duration(window) => (u64::from(window.secs()), None),
            Length::Lines(0) => return Err(GenerateError::NoLines),
            Length::Lines(n) => {
                let rate: f64 = profiles.iter().map(|p| p.timing.mean_rate()).sum();
                ((n as f64 / rate).ceil().max(1.0) as u64, Some(n))
            }
        };
        // The run's first and last instants (about the last, with `--lines`),
        // checked before a line is written.
        let offset = shows_local.then_some(config.time_offset);
        let last = (config.start)
            .saturating_add((run_secs as i64).saturating_mul(MS_PER_SEC))
            .saturating_sub(1);
        if let Some(when) =
            clock::out_of_range(config.start, offset).or_else(|| clock::out_of_range(last, offset))
        {
            return Err(GenerateError::OutOfYears(when));
        }
        Ok(Generator {
            profiles,
            seed: config.seed,
            start: config.start,
            run_secs,
            line_limit,
            format: config.format.clone(),
            time_offset: config.time_offset,
            shapes,
        })
    }

    /// The run length D in seconds (derived from the line count with `--lines`).
    pub fn run_secs(&self) -> u64 {
        self.run_secs
    }

    /// Every profile, indexed by [`Event::profile`].
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The requests in time order.
    pub fn events(&self) -> impl Iterator<Item = Event> + '_ {
        let traffic = Traffic::new(
            &self.profiles,
            self.seed,
            self.start,
            self.run_secs as i64 * 1000,
            self.line_limit.is_some(),
            self.shapes.distinct_paths.is_some(),
        );
        let mut pool = self.shapes.distinct_paths.map(|n| {
            (
                PoolAssigner::new(n, self.seed),
                Rng::derive(self.seed, POOL_STREAM),
            )
        });
        traffic
            .take(self.line_limit.map_or(usize::MAX, |n| n as usize))
            .map(move |mut event| {
                if let (Route::Distinct(_), Some((assigner, rng))) = (event.route, &mut pool) {
                    event.route = Route::Distinct(assigner.next_index());
                    (event.status, event.body_bytes, event.request_time_ms) =
                        event.route.outcome(rng);
                }
                event
            })
    }

    /// The requests in the order they are written: time order, unless
    /// `--servers`, `--shuffle` or `--logged-at-end` reorder them
    /// ([`order`]). Each server's share is picked from a fresh pass over the
    /// requests, so memory stays that of one pass (one minute's requests with
    /// `--shuffle`, the requests still running with `--logged-at-end`).
    pub fn written_events(&self) -> Box<dyn Iterator<Item = Event> + '_> {
        let (servers, seed) = (self.shapes.servers, self.seed);
        if servers == 1 && !self.shapes.shuffle && !self.shapes.logged_at_end {
            return Box::new(self.events());
        }
        Box::new((0..servers).flat_map(move |server| {
            let mine = self
                .events()
                .enumerate()
                .filter(move |&(i, _)| order::server_of(seed, i as u64, servers) == server)
                .map(|(_, e)| e);
            let written: Box<dyn Iterator<Item = Event>> = if self.shapes.shuffle {
                Box::new(ShuffleMinutes::new(mine, seed, u64::from(server)))
            } else if self.shapes.logged_at_end {
                Box::new(LoggedAtEnd::new(mine))
            } else {
                Box::new(mine)
            };
            written
        }))
    }

    /// Writes every line to `out` in large chunks; returns the line count.
    pub fn write_to(&self, out: &mut dyn Write) -> io::Result<u64> {
        let mut format = line_format(&self.format, self.time_offset)
            .expect("the format was checked when the generator was built");
        let mut buf = Vec::with_capacity(CHUNK + 4096);
        let mut lines = 0;
        let offset = format.shows_local_time().then_some(self.time_offset);
        // The run's span was checked when the generator was built; with
        // `--lines` the run goes on until the count is reached.
        for event in self.written_events() {
            if let Some(when) = clock::out_of_range(event.ts, offset) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    GenerateError::OutOfYears(when),
                ));
            }
            let profile = &self.profiles[event.profile as usize];
            format.write_line(&event, profile, &mut buf);
            lines += 1;
            if buf.len() >= CHUNK {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
        out.write_all(&buf)?;
        out.flush()?;
        Ok(lines)
    }
}

/// Random streams of the opt-in shapes, apart from the per-profile ones
/// (numbered from 1 by profile index) and the cast's (0).
const SCANNER_STREAM: u64 = 0x7363_616E << 32;
const POOL_STREAM: u64 = 0x6F75_7463 << 32;

/// The line writer for `format`.
fn line_format(format: &Format, offset: TimeOffset) -> Result<Box<dyn LineFormat>, GenerateError> {
    Ok(match format {
        Format::Combined => Box::new(TemplateFormat::parse(COMBINED, offset)?),
        Format::Json => Box::new(JsonFormat::new()),
        Format::Template(t) => Box::new(TemplateFormat::parse(t, offset)?),
    })
}
