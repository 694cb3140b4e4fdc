//! The integration tests of robolog-remote: one module per subject, in this one test binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod faults;
mod nginx;
