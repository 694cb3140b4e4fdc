//! The integration tests of robolog-msg: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/hostile.rs` is a binary of its own: it installs the counting global allocator,
//! whose peak is process-wide, so no other test may allocate beside it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod edge_cases;
mod fixtures;
mod hostile_generated;
mod idl;
mod interfaces;
mod interop;
mod package_tree;
mod properties;
mod ros2_schemas;
#[cfg(feature = "standard-interfaces")]
mod standard_interfaces;
mod type_hash;
