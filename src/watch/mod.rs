//! `rlctl watch`: a continuous dry run of a policy on live access logs.
//!
//! [`follow`] reads files like `tail -F` across rotations; [`parse`] turns the
//! lines into requests with the ingestion parsers; [`reorder`] puts requests
//! from several files back in time order within `--max-delay`; [`shadow`]
//! replays them through every rule of the policy on the log's own timestamps
//! (the decisions `rlctl simulate` makes on the same lines); [`rolling`] keeps
//! the last hour's figures in fixed-size structures; [`metrics`] renders them
//! for Prometheus and [`http`] serves them; [`top`] keeps each rule's most
//! rejected clients and [`tracked`] their profiles. Time is read through [`clock`], so
//! tests drive it by hand.
//!
//! This module never imports the command line layers.

pub mod clock;
pub mod distinct;
pub mod exempt;
pub mod follow;
pub mod http;
pub mod metrics;
pub mod parse;
pub mod reached;
pub mod reorder;
pub mod rolling;
pub mod shadow;
pub mod verdict;
pub mod watcher;

pub mod session;
#[cfg(test)]
mod testing;
pub mod top;
pub mod tracked;
pub mod view;
