//! robolog-cdr's integration tests, one binary (the counting-allocator hostile test is the
//! other, `tests/hostile`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;
mod edge_cases;
mod fast_path;
mod hostile_generated;
mod interop;
mod json;
mod projection;
mod properties;
mod support;
mod wire_vectors;
