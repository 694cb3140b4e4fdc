//! Regression: a chunk index pointing into the middle of a record made the indexed reader say
//! the file was truncated (`McapError::Truncated`, `is_truncation()`), although the file is
//! complete and only its index is wrong. Found with the hostile corpus
//! (`testdata/bad/mcap/chunk-index-mid-record.mcap`).

use crate::bad_files::{Spec, model};
use robolog_mcap::{Bytes, McapError, McapReader, ReadOptions};

#[test]
fn a_chunk_index_into_the_middle_of_a_record_is_damage_not_truncation() {
    let plain = model(Spec::default());
    let lying = model(Spec {
        chunk_index_start: Some(plain.chunk_start + 5),
        ..Spec::default()
    });
    let reader =
        McapReader::open_with(Bytes::from(lying.bytes), ReadOptions::default().threads(0)).unwrap();
    let error = reader
        .messages()
        .iter()
        .unwrap()
        .find_map(Result::err)
        .expect("an error for the lying chunk index");
    assert!(!error.is_truncation(), "{error:?}");
    assert!(
        matches!(&error, McapError::Invalid { offset, record: "ChunkIndex", .. } if *offset == plain.chunk_start + 5),
        "{error:?}"
    );
}
