//! `testdata/bad/msg/` holds exactly what `tests/it/bad_files/mod.rs` generates
//! (`ROBOLOG_WRITE_BAD=1 cargo test -p robolog-msg --test it hostile_generated` rewrites it).

#[test]
fn committed_files_are_what_the_generator_writes() {
    robolog_testkit::hostile::check_generated("msg", &crate::bad_files::generate());
}
