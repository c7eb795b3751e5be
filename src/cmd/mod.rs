//! One module per subcommand: each turns its arguments into settings, calls the
//! library and writes the result.

pub mod analyze;
pub mod convert;
pub mod export;
pub mod generate;
pub mod report;
pub mod simulate;
pub mod sql;
pub mod watch;
