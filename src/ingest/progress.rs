//! How ingestion reports its progress: a small trait the caller implements
//! (the command layer draws a bar on a terminal). Ingestion only calls it; it
//! never draws anything itself.

use std::fmt::Debug;

/// Receives the progress of one ingestion, from one thread at a time.
pub trait Progress: Send + Sync + Debug {
    /// Ingestion starts; the inputs hold `total_bytes` on disk (0 when unknown).
    fn start(&self, total_bytes: u64);
    /// Ingestion starts reading the input named `name` (as written by its
    /// author: escape it before showing it).
    fn input(&self, name: &str);
    /// `bytes_read` bytes of all inputs have been read so far.
    fn advance(&self, bytes_read: u64);
    /// Ingestion is over (not called when it stops on an error).
    fn finish(&self);
}
