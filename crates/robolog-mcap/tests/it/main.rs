//! The integration tests of robolog-mcap: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/hostile.rs` and `tests/memory.rs` are binaries of their own: each installs a
//! global allocator (the counting one, dhat's heap profiler) whose figures are process-wide.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod check;
mod chunk_copy;
mod conformance;
mod data_section_crc;
mod draft;
mod hostile_generated;
mod index_damage;
mod interop;
mod lending;
mod lz4_halves;
mod order;
mod positional;
mod query_chunks;
mod query_prefix;
mod recover;
mod robustness;
mod samples;
mod seekable;
mod support;
mod writer;
