//! Views: library results turned into what the commands show, a
//! [`crate::output::document::Document`] for the text formats and a serde
//! struct for the JSON contract, plus the `--decisions` CSV. The views here are
//! the ones several commands share.
//!
//! A view takes library types (and library settings that say what to show);
//! it never takes a command's options, and it writes nothing to a terminal.

pub mod analysis;
pub mod decisions;
pub mod findings;
pub mod scenarios;
