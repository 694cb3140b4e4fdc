//! `testdata/bad/msg/` holds exactly what `tests/bad_files/mod.rs` generates
//! (`ROBOLOG_WRITE_BAD=1 cargo test -p robolog-msg --test hostile_generated` rewrites it).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod bad_files;

#[test]
fn committed_files_are_what_the_generator_writes() {
    robolog_testkit::hostile::check_generated("msg", &bad_files::generate());
}
