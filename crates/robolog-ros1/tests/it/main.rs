//! The integration tests of robolog-ros1: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/hostile.rs` is a binary of its own: it installs the counting global allocator,
//! whose peak is process-wide, so no other test may allocate beside it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod edge_cases;
mod fuzz_regressions;
mod hostile_generated;
mod interop;
mod properties;
mod wire_vector;
