//! `testdata/bad/mcap/` holds exactly what `tests/it/bad_files/mod.rs` generates
//! (`ROBOLOG_WRITE_BAD=1 cargo test -p robolog-mcap --test it hostile_generated` rewrites it).

#[test]
fn committed_files_are_what_the_generator_writes() {
    robolog_testkit::hostile::check_generated("mcap", &crate::bad_files::generate());
}

/// Recovery of the honest decompression bomb keeps its one 64 MiB message under the default
/// chunk limit (run here, in a process without the hostile corpus's allocation bound;
/// `tests/hostile.rs` recovers it under the 16 MiB limit and loses the message).
#[test]
fn recovery_keeps_the_message_of_the_decompression_bomb() {
    let bytes = robolog_testkit::testdata::read("bad/mcap/zstd-bomb.mcap");
    let (out, report) = robolog_mcap::recover(
        bytes.clone(),
        Vec::new(),
        robolog_mcap::WriteOptions::default(),
    )
    .unwrap();
    assert_eq!(
        (
            report.messages_recovered,
            report.messages_lost,
            report.messages_unverified
        ),
        (1, 0, 0)
    );
    let reader = robolog_mcap::McapReader::open(out).unwrap();
    let messages: Vec<_> = reader
        .messages()
        .iter()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].data.len(), 64 << 20);
    assert!(messages[0].data.iter().all(|&b| b == 0));
}
