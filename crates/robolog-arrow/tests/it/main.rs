//! The integration tests of robolog-arrow: one module per subject, all in this one test binary.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod export;
mod interop;
mod layout;
#[cfg(feature = "sql")]
mod sql;
mod support;
mod values;
