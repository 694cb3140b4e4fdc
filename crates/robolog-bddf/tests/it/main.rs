//! The integration tests of robolog-bddf: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/hostile.rs` is a binary of its own: it installs the counting global allocator,
//! whose peak is process-wide, so no other test may allocate beside it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod corruption;
mod fuzz_regressions;
mod golden;
mod hostile_generated;
mod positional;
mod recover;
mod roundtrip;
mod sample;
mod truncation;
