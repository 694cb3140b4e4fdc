//! Code shared by the test modules.

#[cfg(feature = "lz4")]
pub(crate) mod lz4_frames;
