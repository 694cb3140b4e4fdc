//! MCAP files: a sans-io record parser, streaming and indexed readers, a single-pass writer,
//! `doctor`-style checks and recovery of truncated or corrupt files, plus read-only support for
//! the pre-ratification draft layout.

#![forbid(unsafe_code)]
