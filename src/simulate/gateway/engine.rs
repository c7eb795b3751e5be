//! The dispatch from a [`Model`] to its engine (one small state machine per
//! gateway): the [`Engine`] and [`State`] enums, and [`Algorithm`] for
//! [`Model`]. A key's state starts as [`State::Fresh`] and becomes its engine's
//! empty state on first use.

use super::{
    Fidelity, Model, aws_waf, cloudflare, envoy, envoy_ratelimit, haproxy, kong, redis_swc, traefik,
};
use crate::simulate::{Algorithm, leaky_bucket};
use crate::units::Millis;

/// The state type of one engine, stored in [`State`] under its own variant.
trait EngineState: Default + Sized {
    fn get(state: &mut State) -> Option<&mut Self>;
    fn wrap(self) -> State;
}

/// Runs `f` on the engine state inside `state`, first replacing a fresh (or
/// foreign) state by the engine's empty state.
fn on_state<S: EngineState, R>(state: &mut State, f: impl FnOnce(&mut S) -> R) -> R {
    if let Some(s) = S::get(state) {
        return f(s);
    }
    let mut fresh = S::default();
    let result = f(&mut fresh);
    *state = fresh.wrap();
    result
}

/// Declares the engines (one per model) with their state types, and the
/// dispatch of [`Algorithm`] from [`Model`] to the engine; a key's state starts
/// as [`State::Fresh`] and becomes its engine's empty state on first use.
macro_rules! engines {
    ($($variant:ident($ty:ty, $state:ty)),* $(,)?) => {
        #[derive(Debug, Clone)]
        pub(super) enum Engine {
            $($variant($ty)),*
        }

        /// The state of one key under any gateway model.
        #[derive(Debug, Clone, Default)]
        pub enum State {
            /// No request seen yet.
            #[default]
            Fresh,
            $(
                #[doc = concat!("State of the `", stringify!($variant), "` model.")]
                $variant($state)
            ),*
        }

        $(impl EngineState for $state {
            fn get(state: &mut State) -> Option<&mut Self> {
                match state {
                    State::$variant(s) => Some(s),
                    _ => None,
                }
            }

            fn wrap(self) -> State {
                State::$variant(self)
            }
        })*

        impl Algorithm for Model {
            type State = State;

            fn allows(&self, state: &mut State, t: Millis) -> bool {
                match &self.engine {
                    $(Engine::$variant(alg) => on_state(state, |s: &mut $state| alg.allows(s, t))),*
                }
            }

            fn record(&self, state: &mut State, t: Millis) -> u64 {
                match &self.engine {
                    $(Engine::$variant(alg) => on_state(state, |s: &mut $state| alg.record(s, t))),*
                }
            }

            fn rejected(&self, state: &mut State, t: Millis) {
                if !self.sees_rejections {
                    return;
                }
                match &self.engine {
                    $(Engine::$variant(alg) => on_state(state, |s: &mut $state| alg.rejected(s, t))),*
                }
            }

            /// A fresh state is idle; an engine state is when its engine says so.
            fn is_idle(&self, state: &State, t: Millis) -> bool {
                match (&self.engine, state) {
                    (_, State::Fresh) => true,
                    $((Engine::$variant(alg), State::$variant(s)) => alg.is_idle(s, t),)*
                    // A foreign state is replaced by the engine's empty one on first use.
                    _ => true,
                }
            }

            fn instant_capacity(&self) -> u64 {
                match &self.engine {
                    $(Engine::$variant(alg) => alg.instant_capacity()),*
                }
            }

            fn burst_convention(&self) -> String {
                let convention = match &self.engine {
                    $(Engine::$variant(alg) => alg.burst_convention()),*
                };
                let label = match self.gateway.fidelity() {
                    Fidelity::Exact => "",
                    Fidelity::Model => " (model, not exact)",
                };
                format!("{}{label}: {convention}", self.gateway)
            }
        }
    };
}

engines! {
    Nginx(leaky_bucket::LeakyBucket, leaky_bucket::State),
    Haproxy(haproxy::FreqCtr, haproxy::State),
    Envoy(envoy::Continuous, envoy::ContinuousState),
    EnvoyTimer(envoy::Timer, envoy::TimerState),
    EnvoyRatelimit(envoy_ratelimit::FixedWindow, envoy_ratelimit::State),
    Traefik(traefik::Bucket, traefik::State),
    Kong(kong::Windows, kong::State),
    AwsWaf(aws_waf::RateBased, aws_waf::State),
    Cloudflare(cloudflare::RateLimit, cloudflare::State),
    RedisSwc(redis_swc::RedisSwc, redis_swc::State),
}
