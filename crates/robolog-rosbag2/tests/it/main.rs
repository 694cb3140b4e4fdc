//! Integration tests of robolog-rosbag2.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod interop;
mod recordings;
mod recover;
mod sqlite_read;
mod support;
mod write;
