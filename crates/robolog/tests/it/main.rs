//! The integration tests of robolog: one module per subject, all in this one test binary
//! (one link, one process for the lot).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod check_recover;
mod chunk_copy;
mod convert;
mod decode;
mod decode_ros2;
mod interop;
mod migrate;
mod open;
mod robustness;
mod rosbag2;
mod roundtrip;
mod type_hash;
