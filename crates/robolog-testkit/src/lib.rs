//! Test support shared by the robolog crates (a dev-dependency only, never published).
//!
//! - [`testdata`]: paths into the workspace's `testdata/` folder;
//! - [`alloc`]: a counting global allocator, to bound what a reader allocates;
//! - [`hostile`]: the hand-made hostile files under `testdata/bad/` and their checks;
//! - [`truncation`]: the one truncation sweep every format's tests use;
//! - [`sample_bytes`]: deterministic compressible and incompressible bytes for codec tests;
//! - [`draft_mcap`]: a minimal MCAP file in the pre-ratification draft layout;
//! - [`interop`]: running the reference Python tools from the venv that
//!   `scripts/interop-venv.sh` creates;
//! - servers on the loopback for the remote-reading tests: [`nginx`] (HTTP), [`s3`], [`gcs`],
//!   [`azure`], and [`faulty`] (a server that fails on purpose).
//!
//! ```
//! let cuts = robolog_testkit::truncation::cut_points(10_000, 8, 1000);
//! assert_eq!(&cuts[..3], &[0, 1, 2]);
//! assert!(cuts.contains(&9_999));
//! assert!(robolog_testkit::testdata::path("msg/std_msgs_String.md5").exists());
//! ```

#![forbid(unsafe_code)]
#![allow(clippy::panic, clippy::expect_used, clippy::print_stderr)]

pub mod alloc;
pub mod azure;
pub mod draft_mcap;
pub mod faulty;
pub mod gcs;
pub mod hostile;
pub mod interop;
pub mod nginx;
pub mod s3;
pub mod sample_bytes;
mod server_log;
pub mod testdata;
pub mod truncation;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
