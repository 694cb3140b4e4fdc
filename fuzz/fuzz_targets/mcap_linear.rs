//! robolog-mcap: the linear reader (over bytes) and the streaming reader (over `Read`), records
//! and messages (lent and iterated, which must agree), with every CRC check on.
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
    // Lending and iterating must agree, up to and including the first error (whose text can
    // differ: a corrupt zstd frame fails differently in a recycled, larger buffer).
    let mut want = Vec::new();
    for m in LinearReader::with_options(input.clone(), options.clone()).into_messages() {
        let stop = m.is_err();
        want.push(
            m.map(|m| (m.channel_id, m.sequence, m.log_time, m.data.to_vec()))
                .map_err(|_| ()),
        );
        if stop {
            break;
        }
    }
    let mut got = Vec::new();
    let mut lending = LinearReader::with_options(input, options.clone()).into_messages();
    while let Some(m) = lending.next_ref() {
        let stop = m.is_err();
        got.push(
            m.map(|m| (m.channel_id, m.sequence, m.log_time, m.data.to_vec()))
                .map_err(|_| ()),
        );
        if stop {
            break;
        }
    }
    assert_eq!(got, want);
    let mut stream = StreamReader::with_options(data, options);
    while let Some(record) = stream.next_record() {
        if record.is_err() {
            break;
        }
    }
});
