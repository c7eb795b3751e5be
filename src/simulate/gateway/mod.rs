//! The policy as each gateway product enforces it: one model per gateway, each
//! a small state machine behind [`Algorithm`](super::Algorithm), replayed by the same loop as the
//! six algorithms (as [`Limiter::Gateway`]).
//!
//! A model takes a policy rule as `rlctl export --target X` converts it (the
//! "policy rule → gateway parameters" mapping sits beside each model and is
//! computed from the same policy fields as the exporter; tests check that the
//! numbers match the exported text) and decides as the product's own code does:
//! its window alignment, time resolution, arithmetic (doubles where the product
//! uses doubles) and whether rejected requests still count
//! ([`Algorithm::rejected`](super::Algorithm::rejected)).
//!
//! Two models (`aws-waf`, `cloudflare`) follow the vendors' documentation, which
//! describes the behaviour only approximately: they are labelled
//! [`Fidelity::Model`] and must never be presented as exact.
//!
//! Each rule is modelled on its own; several rules combine as in the replay loop
//! (admitted only when every applicable rule admits). Products that stop at the
//! first rejecting limiter after others consumed (Envoy's descriptors, Traefik's
//! middleware chain) or merge rules (Kong's one plugin per route) can differ
//! when several rules apply to one request: see `docs/gateways.md`.

pub mod aws_waf;
mod bounds;
pub mod check;
pub mod cloudflare;
mod engine;
pub mod envoy;
mod envoy_codec;
pub mod envoy_ratelimit;
pub mod haproxy;
pub mod haproxy_target;
pub mod kong;
mod kong_path;
mod model;
pub mod nginx;
mod nginx_uri;
mod path_escapes;
pub mod redis_swc;
pub mod request_names;
pub mod traefik;
mod traefik_path;

#[cfg(test)]
mod properties;

use std::fmt;
use std::str::FromStr;

use super::spec::{AlgorithmSpec, Limiter};
use crate::ingest::key::{ForwardedReading, KeyReading};
use engine::Engine;
pub use engine::State;
pub use model::Model;
pub use request_names::{MethodReading, NameReading, PathReading, ProtocolReading};

/// The gateways `rlctl simulate --gateway` replays, named as on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gateway {
    /// nginx `limit_req` (the leaky bucket, bit for bit).
    Nginx,
    /// HAProxy stick-table `gpc_rate` counters (`freq_ctr`), as exported.
    Haproxy,
    /// HAProxy with `http_req_rate` tracking: denied requests count.
    HaproxyReqRate,
    /// Envoy ≥ 1.31 local rate limit: continuous token bucket in doubles.
    Envoy,
    /// Envoy < 1.31 local rate limit: `tokens_per_fill` every `fill_interval`.
    EnvoyTimer,
    /// envoyproxy/ratelimit, the global rate limit service.
    EnvoyRatelimit,
    /// Traefik's RateLimit middleware (golang.org/x/time/rate).
    Traefik,
    /// Kong's rate-limiting plugin with `policy: local` (as exported).
    Kong,
    /// Kong's rate-limiting plugin with `policy: redis` (counts rejections).
    KongRedis,
    /// AWS WAF rate-based rules (documented model).
    AwsWaf,
    /// Cloudflare rate limiting rules (documented model).
    Cloudflare,
    /// The widely deployed Redis Lua sliding window counter, in doubles.
    RedisSwc,
}

/// Whether a model reproduces the product's code or its documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fidelity {
    /// Decides as the product's source code does (with the stated exceptions).
    Exact,
    /// Follows the vendor's approximate documentation: a model, never exact.
    Model,
}

impl fmt::Display for Fidelity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fidelity::Exact => "exact",
            Fidelity::Model => "model",
        })
    }
}

/// A rule a gateway model cannot take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GatewayError {
    #[error(
        "unknown gateway `{0}`: expected nginx, haproxy, haproxy-req-rate, envoy, envoy-timer, envoy-ratelimit, traefik, kong, kong-redis, aws-waf, cloudflare or redis-swc"
    )]
    /// A name that is none of the gateways.
    Unknown(String),
    #[error(
        "unknown gateway `{0}`: expected all, nginx, haproxy, haproxy-req-rate, envoy, envoy-timer, envoy-ratelimit, traefik, kong, kong-redis, aws-waf, cloudflare or redis-swc"
    )]
    /// A name that is neither `all` nor one of the gateways (`--gateway`).
    UnknownChoice(String),
    #[error("{gateway}: limit {limit}{burst} is too large for the gateway's counters")]
    /// Converted parameters that do not fit the product's integer types.
    TooLarge {
        gateway: &'static str,
        limit: crate::units::Limit,
        /// ` with burst B` when the rule has one (often what is too large).
        burst: String,
    },
}

impl Gateway {
    /// Every gateway, in the order `--gateway all` reports them.
    pub const ALL: [Gateway; 12] = [
        Gateway::Nginx,
        Gateway::Haproxy,
        Gateway::HaproxyReqRate,
        Gateway::Envoy,
        Gateway::EnvoyTimer,
        Gateway::EnvoyRatelimit,
        Gateway::Traefik,
        Gateway::Kong,
        Gateway::KongRedis,
        Gateway::AwsWaf,
        Gateway::Cloudflare,
        Gateway::RedisSwc,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Gateway::Nginx => "nginx",
            Gateway::Haproxy => "haproxy",
            Gateway::HaproxyReqRate => "haproxy-req-rate",
            Gateway::Envoy => "envoy",
            Gateway::EnvoyTimer => "envoy-timer",
            Gateway::EnvoyRatelimit => "envoy-ratelimit",
            Gateway::Traefik => "traefik",
            Gateway::Kong => "kong",
            Gateway::KongRedis => "kong-redis",
            Gateway::AwsWaf => "aws-waf",
            Gateway::Cloudflare => "cloudflare",
            Gateway::RedisSwc => "redis-swc",
        }
    }

    /// Exact (from the product's code) or a model (from its documentation).
    pub fn fidelity(self) -> Fidelity {
        match self {
            Gateway::AwsWaf | Gateway::Cloudflare => Fidelity::Model,
            _ => Fidelity::Exact,
        }
    }

    /// How the configuration `rlctl export` writes for it reads a rule's key
    /// from a request: nginx's `map` keys X-Forwarded-For's first token as
    /// text, HAProxy's `req.hdr_ip` and AWS WAF's forwarded IP read only an
    /// address there; the others read it as the policy does. Each keys on
    /// whole addresses, not the prefixes of `--cidr4`/`--cidr6`, except the
    /// Redis script, whose key is whatever the application passes it (see
    /// [`KeyReading`]).
    pub fn key_reading(self) -> KeyReading {
        let forwarded = match self {
            Gateway::Nginx => ForwardedReading::TokenAsWritten,
            Gateway::Haproxy => ForwardedReading::AddressElseConnection,
            Gateway::AwsWaf => ForwardedReading::AddressOrUncounted,
            _ => ForwardedReading::AsLogged,
        };
        KeyReading {
            forwarded,
            whole_addresses: self != Gateway::RedisSwc,
            text_bytes: (self == Gateway::Haproxy).then_some(haproxy::STRING_KEY_BYTES),
            missing_as_address: self.runs_one_plugin(),
            exempt_ignores_case: self.runs_one_plugin(),
        }
    }

    /// The `rlctl export --target` whose configuration this replays, if any.
    pub fn export_target(self) -> Option<&'static str> {
        match self {
            Gateway::Nginx => Some("nginx"),
            Gateway::Haproxy => Some("haproxy"),
            Gateway::Envoy | Gateway::EnvoyTimer => Some("envoy"),
            Gateway::Traefik => Some("traefik"),
            Gateway::Kong | Gateway::KongRedis => Some("kong"),
            Gateway::AwsWaf => Some("aws-waf"),
            Gateway::HaproxyReqRate
            | Gateway::EnvoyRatelimit
            | Gateway::Cloudflare
            | Gateway::RedisSwc => None,
        }
    }

    /// Whether each instance of the product counts on its own (its counters
    /// live in the process: nginx, HAProxy, Envoy's local filter, Traefik,
    /// Kong's `local` policy); the others share theirs (a Redis, or the
    /// vendor's service), so instances change nothing.
    pub fn counts_per_instance(self) -> bool {
        matches!(
            self,
            Gateway::Nginx
                | Gateway::Haproxy
                | Gateway::HaproxyReqRate
                | Gateway::Envoy
                | Gateway::EnvoyTimer
                | Gateway::Traefik
                | Gateway::Kong
        )
    }

    /// Whether the product runs one rate-limiting plugin per request (Kong),
    /// so that a policy's rules become its plugins rather than each limiting
    /// on its own ([`crate::export::kong_plan`]).
    pub fn runs_one_plugin(self) -> bool {
        matches!(self, Gateway::Kong | Gateway::KongRedis)
    }

    /// Whether the product still counts a request it rejects.
    pub fn counts_rejected(self) -> bool {
        matches!(
            self,
            Gateway::HaproxyReqRate
                | Gateway::EnvoyRatelimit
                | Gateway::KongRedis
                | Gateway::AwsWaf
                | Gateway::Cloudflare
        )
    }

    /// The model of `spec` as this gateway enforces its exported configuration.
    pub fn model(self, spec: &AlgorithmSpec) -> Result<Model, GatewayError> {
        let too_large = || GatewayError::TooLarge {
            gateway: self.name(),
            limit: spec.limit,
            burst: spec
                .burst
                .map(|b| format!(" with burst {b}"))
                .unwrap_or_default(),
        };
        let (engine, parameters) = match self {
            Gateway::Nginx => {
                let p = nginx::Params::of(spec);
                (
                    Engine::Nginx(p.bucket().ok_or_else(too_large)?),
                    p.describe(),
                )
            }
            Gateway::Haproxy | Gateway::HaproxyReqRate => {
                let p = if self == Gateway::Haproxy {
                    haproxy::FreqCtr::of(spec)
                } else {
                    haproxy::FreqCtr::tracked(spec)
                };
                (Engine::Haproxy(p.clone()), p.describe())
            }
            Gateway::Envoy => {
                let b = envoy::Params::of(spec).ok_or_else(too_large)?;
                (Engine::Envoy(envoy::Continuous::new(b)), b.describe(false))
            }
            Gateway::EnvoyTimer => {
                let b = envoy::Params::of(spec).ok_or_else(too_large)?;
                (Engine::EnvoyTimer(envoy::Timer::new(b)), b.describe(true))
            }
            Gateway::EnvoyRatelimit => {
                let m = envoy_ratelimit::FixedWindow::of(spec);
                (Engine::EnvoyRatelimit(m.clone()), m.describe())
            }
            Gateway::Traefik => {
                let m = traefik::Bucket::of(spec).ok_or_else(too_large)?;
                (Engine::Traefik(m.clone()), m.describe())
            }
            Gateway::Kong | Gateway::KongRedis => {
                let policy = if self == Gateway::Kong {
                    kong::Policy::Local
                } else {
                    kong::Policy::Redis
                };
                let m = kong::Windows::of(spec, policy);
                (Engine::Kong(m.clone()), m.describe())
            }
            Gateway::AwsWaf => {
                let m = aws_waf::RateBased::of(spec);
                (Engine::AwsWaf(m.clone()), m.describe())
            }
            Gateway::Cloudflare => {
                let m = cloudflare::RateLimit::of(spec);
                (Engine::Cloudflare(m.clone()), m.describe())
            }
            Gateway::RedisSwc => {
                let m = redis_swc::RedisSwc::of(spec);
                (Engine::RedisSwc(m.clone()), m.describe())
            }
        };
        Ok(Model {
            gateway: self,
            kind: spec.kind,
            engine,
            parameters,
            sees_rejections: true,
        })
    }

    /// [`Gateway::model`] as a [`Limiter`] for the replay loop.
    pub fn limiter(self, spec: &AlgorithmSpec) -> Result<Limiter, GatewayError> {
        self.model(spec).map(Limiter::Gateway)
    }
}

impl fmt::Display for Gateway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Gateway {
    type Err = GatewayError;

    fn from_str(text: &str) -> Result<Self, GatewayError> {
        let wanted = text.trim();
        Gateway::ALL
            .into_iter()
            .find(|g| g.name() == wanted)
            .ok_or_else(|| GatewayError::Unknown(text.to_string()))
    }
}

#[cfg(test)]
mod tests;
