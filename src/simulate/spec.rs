//! What the user asks for ([`AlgorithmSpec`]: kind, limit, burst, nginx delay) and
//! its validation into a ready [`Limiter`].
//!
//! Validation explains itself: a burst given to an algorithm without one, a delay
//! given to anything but the leaky bucket, a burst of 0 where it would admit
//! nothing, or a rate nginx cannot express are errors, never silently ignored.

use std::fmt;
use std::str::FromStr;

use super::Algorithm;
use super::fixed_window::FixedWindow;
use super::gcra::Gcra;
use super::leaky_bucket::LeakyBucket;
use super::sliding_counter::SlidingCounter;
use super::sliding_log::SlidingLog;
use super::token_bucket::TokenBucket;
use crate::units::Limit;

/// The six algorithms, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlgorithmKind {
    /// Epoch-aligned windows, a counter per window.
    FixedWindow,
    /// Exact log of admitted requests in the last W.
    SlidingLog,
    /// Weighted estimate from the previous and current window (Redis formulation).
    SlidingCounter,
    /// Continuously refilled bucket of B tokens.
    TokenBucket,
    /// nginx `limit_req`.
    LeakyBucket,
    /// Generic cell rate algorithm (theoretical arrival time).
    Gcra,
}

impl AlgorithmKind {
    /// Every algorithm, in the order `--algo all` reports them.
    pub const ALL: [AlgorithmKind; 6] = [
        AlgorithmKind::FixedWindow,
        AlgorithmKind::SlidingLog,
        AlgorithmKind::SlidingCounter,
        AlgorithmKind::TokenBucket,
        AlgorithmKind::LeakyBucket,
        AlgorithmKind::Gcra,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::FixedWindow => "fixed-window",
            AlgorithmKind::SlidingLog => "sliding-log",
            AlgorithmKind::SlidingCounter => "sliding-counter",
            AlgorithmKind::TokenBucket => "token-bucket",
            AlgorithmKind::LeakyBucket => "leaky-bucket",
            AlgorithmKind::Gcra => "gcra",
        }
    }

    /// Whether the algorithm takes a burst (token-bucket, gcra, leaky-bucket).
    pub fn has_burst(self) -> bool {
        matches!(
            self,
            AlgorithmKind::TokenBucket | AlgorithmKind::LeakyBucket | AlgorithmKind::Gcra
        )
    }
}

impl fmt::Display for AlgorithmKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AlgorithmKind {
    type Err = SpecError;

    fn from_str(text: &str) -> Result<Self, SpecError> {
        let wanted = text.trim();
        AlgorithmKind::ALL
            .into_iter()
            .find(|kind| kind.name() == wanted)
            .ok_or_else(|| SpecError::UnknownAlgorithm(text.to_string()))
    }
}

/// nginx's `delay=N` / `nodelay` for the leaky bucket: which admitted requests
/// would be held back, and for how long. Decisions do not depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Delay {
    /// `nodelay`: admitted requests are served at once.
    NoDelay,
    /// `delay=N`: the first N excess requests pass at once, later ones wait.
    After(u64),
}

impl fmt::Display for Delay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Delay::NoDelay => f.write_str("nodelay"),
            Delay::After(n) => write!(f, "delay={n}"),
        }
    }
}

/// Why an [`AlgorithmSpec`] cannot be simulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error(
        "unknown algorithm `{0}`: expected fixed-window, sliding-log, sliding-counter, token-bucket, leaky-bucket or gcra"
    )]
    /// A name that is none of the six.
    UnknownAlgorithm(String),
    #[error(
        "unknown algorithm `{0}`: expected all, fixed-window, sliding-log, sliding-counter, token-bucket, leaky-bucket or gcra"
    )]
    /// A name that is neither `all` nor one of the six (`--algo`).
    UnknownAlgoChoice(String),
    #[error(
        "{kind} has no burst (it admits at most {limit} per window), so a burst does not apply; token-bucket, gcra and leaky-bucket take one"
    )]
    /// A burst for fixed-window, sliding-log or sliding-counter.
    BurstNotApplicable { kind: AlgorithmKind, limit: Limit },
    #[error(
        "a delay (`delay=N` or `nodelay`) applies only to leaky-bucket (nginx limit_req), not to {kind}"
    )]
    /// `delay=N` / `nodelay` for anything but the leaky bucket.
    DelayNotApplicable { kind: AlgorithmKind },
    #[error(
        "{kind} needs a burst of at least 1: with burst 0 it would admit nothing (only leaky-bucket, nginx's limit_req, takes a burst of 0)"
    )]
    /// Burst 0 for token-bucket or gcra.
    ZeroBurst { kind: AlgorithmKind },
    #[error(
        "rate {limit} is below nginx's resolution for leaky-bucket: {requests}·1000/{secs} rounds to 0 milli-requests per second (nginx's slowest configurable rate is 1r/m)"
    )]
    /// A leaky-bucket rate that nginx's integer milli-requests/s truncate to 0.
    RateTooLow {
        limit: Limit,
        requests: u64,
        secs: u32,
    },
    #[error("{kind} with limit {limit} and burst {burst} is too large to simulate exactly")]
    /// Scaled values that do not fit in 64 bits.
    TooLarge {
        kind: AlgorithmKind,
        limit: Limit,
        burst: u64,
    },
}

/// One algorithm with its limit: what `rlctl simulate --algo K --limit L/W
/// [--burst B] [--delay N | --nodelay]` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AlgorithmSpec {
    /// Which algorithm.
    pub kind: AlgorithmKind,
    /// L requests per window W.
    pub limit: Limit,
    /// B; `None` takes the default (L for token-bucket and gcra, 0 for leaky-bucket).
    pub burst: Option<u64>,
    /// nginx's `delay=N` / `nodelay`; leaky-bucket only (`None` means `delay=0`).
    pub delay: Option<Delay>,
}

impl AlgorithmSpec {
    /// A spec with default burst and delay.
    pub fn new(kind: AlgorithmKind, limit: Limit) -> Self {
        AlgorithmSpec {
            kind,
            limit,
            burst: None,
            delay: None,
        }
    }

    /// The burst actually used: the given one or the algorithm's default;
    /// `None` for algorithms without a burst.
    pub fn effective_burst(&self) -> Option<u64> {
        match self.kind {
            AlgorithmKind::TokenBucket | AlgorithmKind::Gcra => {
                Some(self.burst.unwrap_or(self.limit.requests))
            }
            AlgorithmKind::LeakyBucket => Some(self.burst.unwrap_or(0)),
            _ => None,
        }
    }

    /// Checks the spec and builds the limiter it describes.
    pub fn limiter(&self) -> Result<Limiter, SpecError> {
        let kind = self.kind;
        if self.burst.is_some() && !kind.has_burst() {
            return Err(SpecError::BurstNotApplicable {
                kind,
                limit: self.limit,
            });
        }
        if self.delay.is_some() && kind != AlgorithmKind::LeakyBucket {
            return Err(SpecError::DelayNotApplicable { kind });
        }
        let burst = self.effective_burst().unwrap_or(0);
        if burst == 0 && matches!(kind, AlgorithmKind::TokenBucket | AlgorithmKind::Gcra) {
            return Err(SpecError::ZeroBurst { kind });
        }
        let too_large = || SpecError::TooLarge {
            kind,
            limit: self.limit,
            burst,
        };
        let limit = self.limit;
        Ok(match kind {
            AlgorithmKind::FixedWindow => Limiter::FixedWindow(FixedWindow::new(limit)),
            AlgorithmKind::SlidingLog => Limiter::SlidingLog(SlidingLog::new(limit)),
            AlgorithmKind::SlidingCounter => Limiter::SlidingCounter(SlidingCounter::new(limit)),
            AlgorithmKind::TokenBucket => {
                Limiter::TokenBucket(TokenBucket::new(limit, burst).ok_or_else(too_large)?)
            }
            AlgorithmKind::Gcra => Limiter::Gcra(Gcra::new(limit, burst).ok_or_else(too_large)?),
            AlgorithmKind::LeakyBucket => {
                let delay = self.delay.unwrap_or(Delay::After(0));
                let bucket = LeakyBucket::new(limit, burst, delay).ok_or_else(too_large)?;
                if bucket.rate() == 0 {
                    return Err(SpecError::RateTooLow {
                        limit,
                        requests: limit.requests,
                        secs: limit.window.secs(),
                    });
                }
                Limiter::LeakyBucket(bucket)
            }
        })
    }
}

/// A validated, ready-to-run algorithm (static dispatch: one variant per algorithm).
#[derive(Debug, Clone)]
pub enum Limiter {
    /// [`AlgorithmKind::FixedWindow`].
    FixedWindow(FixedWindow),
    /// [`AlgorithmKind::SlidingLog`].
    SlidingLog(SlidingLog),
    /// [`AlgorithmKind::SlidingCounter`].
    SlidingCounter(SlidingCounter),
    /// [`AlgorithmKind::TokenBucket`].
    TokenBucket(TokenBucket),
    /// [`AlgorithmKind::LeakyBucket`].
    LeakyBucket(LeakyBucket),
    /// [`AlgorithmKind::Gcra`].
    Gcra(Gcra),
    /// A rule as a gateway product enforces it ([`super::gateway`]).
    Gateway(super::gateway::Model),
}

/// Runs `$body` with `$alg` bound to the concrete algorithm inside a [`Limiter`],
/// so generic code is monomorphised per algorithm instead of dispatched per decision.
macro_rules! with_algorithm {
    ($limiter:expr, $alg:ident => $body:expr) => {
        match $limiter {
            $crate::simulate::Limiter::FixedWindow($alg) => $body,
            $crate::simulate::Limiter::SlidingLog($alg) => $body,
            $crate::simulate::Limiter::SlidingCounter($alg) => $body,
            $crate::simulate::Limiter::TokenBucket($alg) => $body,
            $crate::simulate::Limiter::LeakyBucket($alg) => $body,
            $crate::simulate::Limiter::Gcra($alg) => $body,
            $crate::simulate::Limiter::Gateway($alg) => $body,
        }
    };
}
pub(crate) use with_algorithm;

impl Limiter {
    /// The algorithm itself, to be told apart by its type.
    pub(crate) fn as_any(&self) -> &dyn std::any::Any {
        with_algorithm!(self, alg => alg)
    }

    /// Which algorithm this is (for a gateway model: the policy rule's).
    pub fn kind(&self) -> AlgorithmKind {
        match self {
            Limiter::FixedWindow(_) => AlgorithmKind::FixedWindow,
            Limiter::SlidingLog(_) => AlgorithmKind::SlidingLog,
            Limiter::SlidingCounter(_) => AlgorithmKind::SlidingCounter,
            Limiter::TokenBucket(_) => AlgorithmKind::TokenBucket,
            Limiter::LeakyBucket(_) => AlgorithmKind::LeakyBucket,
            Limiter::Gcra(_) => AlgorithmKind::Gcra,
            Limiter::Gateway(model) => model.kind(),
        }
    }

    /// How many requests it admits at once from the empty state.
    pub fn instant_capacity(&self) -> u64 {
        with_algorithm!(self, alg => alg.instant_capacity())
    }

    /// One line stating the burst convention followed.
    pub fn burst_convention(&self) -> String {
        with_algorithm!(self, alg => alg.burst_convention())
    }

    /// Whether it reports how long admitted requests would wait: the leaky bucket
    /// (nginx), whose delays are all 0 with `nodelay`, and the gateway models
    /// that delay requests (nginx, Traefik).
    pub fn reports_delays(&self) -> bool {
        match self {
            Limiter::LeakyBucket(_) => true,
            Limiter::Gateway(model) => model.reports_delays(),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
