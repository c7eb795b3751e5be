//! Rendering of results: one file per output format behind one trait, and the
//! escaping every format relies on.

pub mod escape;
