//! `testdata/bad/cdr/` holds exactly what `bad_files.rs` generates
//! (`ROBOLOG_WRITE_BAD=1 cargo test -p robolog-cdr --test it hostile_generated` rewrites it).

use crate::bad_files;

#[test]
fn committed_files_are_what_the_generator_writes() {
    robolog_testkit::hostile::check_generated("cdr", &bad_files::generate());
}
