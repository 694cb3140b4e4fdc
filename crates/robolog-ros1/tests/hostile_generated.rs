//! `testdata/bad/ros1/` holds exactly what `tests/bad_files/mod.rs` generates
//! (`ROBOLOG_WRITE_BAD=1 cargo test -p robolog-ros1 --test hostile_generated` rewrites it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;

#[test]
fn committed_files_are_what_the_generator_writes() {
    robolog_testkit::hostile::check_generated("ros1", &bad_files::generate());
}
