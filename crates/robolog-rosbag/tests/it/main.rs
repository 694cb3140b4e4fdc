//! The integration tests of robolog-rosbag: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/hostile/` is a binary of its own: it installs the counting global allocator,
//! whose peak is process-wide, so no other test may allocate beside it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod hostile_generated;
mod interop;
mod lending;
mod linear_agree;
mod positional;
mod query_prefix;
mod testdata_manifest;
mod truncation;
mod undeclared_connection;
mod write_and_reindex;
