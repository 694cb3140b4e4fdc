//! robolog-bddf: read a file from a stream block by block, decoding POD blocks, checking the
//! SHA-1 at the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_bddf::{StreamOptions, StreamReader};
use robolog_fuzz::CHUNK_LIMIT;

fuzz_target!(|data: &[u8]| {
    let options = StreamOptions::new()
        .max_block_size(CHUNK_LIMIT as u64)
        .verify_checksum(true);
    let Ok(mut reader) = StreamReader::with_options(data, options) else {
        return;
    };
    loop {
        match reader.next_block() {
            Ok(Some(block)) => {
                if let Some(series) = reader.series_by_index(block.series_index) {
                    let _ = series.decode_pod(&block);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.trailer();
    let _ = reader.complete_data_blocks();
});
