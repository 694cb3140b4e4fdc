//! Cut and corrupted inputs through every facade entry point: errors, never panics or hangs.

use std::io::Cursor;

use proptest::prelude::*;
use robolog::{Bytes, Decoder, Output, check_bytes, open_bytes, open_reader, recover};
use robolog_testkit::{testdata, truncation};

/// Everything the facade does with an input, ignoring the outcome: the point is that it ends.
fn exercise(data: &[u8]) -> Result<(), String> {
    let bytes = Bytes::copy_from_slice(data);
    let mut decoder = Decoder::new();
    if let Ok(log) = open_bytes(bytes.clone()) {
        let _ = log.summary();
        let _ = log.attachments();
        let _ = log.metadata();
        if let Ok(messages) = log.messages().iter() {
            for message in messages.take(10_000).flatten() {
                let _ = decoder.decode(&message);
            }
        }
    }
    if let Ok(stream) = open_reader(Cursor::new(data.to_vec())) {
        let _ = stream.take(10_000).count();
    }
    let _ = check_bytes(bytes.clone());
    let _ = recover(&bytes, Output::memory());
    Ok(())
}

#[test]
fn truncated_inputs_of_every_format() {
    for (file, stride) in [
        ("bags/generated/ros_comm/ref_lz4.bag", 409),
        ("bags/generated/ros_comm/v12_indexed.bag", 1021),
        ("samples/demo-lz4.mcap", 401),
        ("bddf/sample.bddf", 7),
    ] {
        let data = testdata::read(file);
        truncation::sweep(&data, 32, stride, |_, prefix| exercise(prefix));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn corrupted_inputs_of_every_format(
        file in prop::sample::select(vec![
            "bags/generated/ros_comm/ref_bz2.bag",
            "samples/demo-zstd.mcap",
            "bddf/sample.bddf",
        ]),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
    ) {
        let mut data = testdata::read(file);
        for (at, value) in flips {
            let i = at.index(data.len());
            data[i] = value;
        }
        exercise(&data).unwrap();
    }
}
