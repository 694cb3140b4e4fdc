//! Integration tests of robolog-rosbag2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod interop;
mod recordings;
mod recover;
mod support;
mod write;
