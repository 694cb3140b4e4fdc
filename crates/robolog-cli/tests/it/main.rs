//! The integration tests of robolog-cli: one module per subject, all in this one test binary
//! (one link, one process for the lot).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[cfg(feature = "columnar")]
mod columnar;
mod commands;
mod golden;
mod interop;
mod new_user;
mod parity;
mod readme;
mod remote;
mod support;
#[cfg(feature = "columnar")]
mod two_binaries;
