//! Findings about a log's structure: what `check` reports and what opening a damaged file
//! notices. The type is robolog-framing's, shared by every format crate, so a problem reads
//! the same from the facade and from a format crate.

pub use robolog_framing::{Problem, ProblemKind, Severity};
