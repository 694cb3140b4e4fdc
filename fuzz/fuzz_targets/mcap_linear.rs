//! robolog-mcap: the linear reader (over bytes) and the streaming reader (over `Read`), records
//! and messages (lent and iterated, which must agree), with every CRC check on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::{CHUNK_LIMIT, mcap_fields, up_to_first_error};
use robolog_mcap::{LinearReader, ReadOptions, StreamReader};

fuzz_target!(|data: &[u8]| {
    let options = ReadOptions::default().max_record_size(CHUNK_LIMIT as u64)
    .threads(0);
    let input = Bytes::copy_from_slice(data);

    let mut linear = LinearReader::with_options(input.clone(), options.clone());
    while let Some(record) = linear.next_record() {
        if record.is_err() {
            break;
        }
    }
    // Lending and iterating must agree, up to and including the first error.
    let want = up_to_first_error(
        LinearReader::with_options(input.clone(), options.clone())
            .into_messages()
            .map(|m| m.map(|m| mcap_fields(&m.as_record()))),
    );
    let mut lending = LinearReader::with_options(input, options.clone()).into_messages();
    let got = up_to_first_error(std::iter::from_fn(|| {
        lending.next_ref().map(|m| m.map(|m| mcap_fields(&m)))
    }));
    assert_eq!(got, want);
    let mut stream = StreamReader::with_options(data, options);
    while let Some(record) = stream.next_record() {
        if record.is_err() {
            break;
        }
    }
});
