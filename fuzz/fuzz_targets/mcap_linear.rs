//! robolog-mcap: the linear reader (over bytes) and the streaming reader (over `Read`), records
//! and messages, with every CRC check on.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::CHUNK_LIMIT;
use robolog_mcap::{LinearReader, ReadOptions, StreamReader};

fuzz_target!(|data: &[u8]| {
    let options = ReadOptions {
        record_limit: CHUNK_LIMIT as u64,
        ..ReadOptions::default()
    }
    .with_threads(0);
    let input = Bytes::copy_from_slice(data);

    let mut linear = LinearReader::with_options(input.clone(), options.clone());
    while let Some(record) = linear.next_record() {
        if record.is_err() {
            break;
        }
    }
    for message in LinearReader::with_options(input, options.clone()).into_messages() {
        if message.is_err() {
            break;
        }
    }
    let mut stream = StreamReader::with_options(data, options);
    while let Some(record) = stream.next_record() {
        if record.is_err() {
            break;
        }
    }
});
