//! Code shared by the test modules (the conformance helpers also by
//! `examples/conformance_runner.rs`).

pub(crate) mod codecs;
pub(crate) mod conformance;
pub(crate) mod draft_writer;
