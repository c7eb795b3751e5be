//! The lowest layer of plain helpers every other module may use: escaping of
//! log-derived text ([`escape`]), atomic file writes ([`atomic`]) and calendar
//! arithmetic and date formatting ([`time`]).
//!
//! It owns no domain types and imports nothing from the rest of the crate but
//! [`crate::units`]: ingestion, export, frames and rendering all sit above it.

pub mod atomic;
pub mod escape;
pub mod time;
