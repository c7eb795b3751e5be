//! Helpers shared by the integration tests: real engines to compare against.

pub mod nginx;
