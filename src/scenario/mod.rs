//! Scenarios: the rules of a `--limit` or a policy, with the algorithms asked
//! for, replayed together over an event table.
//!
//! [`plan`] turns limits and rules into scenarios, [`execute`] replays them (with
//! the deployment) into per-rule and overall results, [`compare`](mod@compare) holds them
//! against the decisions a log records, and [`sampling`] estimates figures for
//! all clients from a replay of a key sample, and [`gateway`] turns a
//! scenario into the same rules as each gateway product enforces them. `rlctl simulate` and `rlctl
//! report` both run on this.
//!
//! It sits above [`crate::simulate`] (the algorithms and the replay) and
//! [`crate::policy`] (the rules), and knows nothing about log formats,
//! terminals, files or command-line options.

pub mod compare;
pub mod execute;
pub mod exempt;
pub mod gateway;
pub mod kong;
pub mod names;
pub mod plan;
mod route_match;
pub mod sampling;
mod selection;
pub mod traefik;

pub use compare::{Comparison, compare};
pub use execute::{RuleResult, ScenarioResult, ScenarioRunner};
pub use exempt::{ExemptMasks, Unmatched, unmatched};
pub use gateway::GatewayChoice;
pub use plan::{AlgoChoice, AlgoOptions, KeyRef, Planned, PlannedRule, Scenario};
pub use sampling::{Estimate, Sampling};
