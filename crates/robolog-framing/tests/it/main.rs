//! The integration tests of robolog-framing: one module per subject, all in this one test binary
//! (one link, one process for the lot).
//!
//! `tests/worker_pool.rs` is a binary of its own: it needs a worker pool with exactly the
//! threads it asks for, and the pool is process-wide.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod byte_io;
mod compression;
mod disabled_codecs;
mod files;
mod interop;
mod lz4_halves;
mod parallel_map;
mod prefix_decode;
mod support;
