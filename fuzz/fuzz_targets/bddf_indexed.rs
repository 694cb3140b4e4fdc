//! robolog-bddf: open a file from memory (index, or the walk fallback), read every series'
//! blocks through the index, decode POD blocks, and iterate in file and time order.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_bddf::{BddfReader, ReadOptions};
use robolog_framing::Bytes;

fuzz_target!(|data: &[u8]| {
    let input = Bytes::copy_from_slice(data);
    for scan_fallback in [true, false] {
        let options = ReadOptions::new()
            .verify_checksum(true)
            .strict(!scan_fallback);
        let Ok(reader) = BddfReader::open_with(input.clone(), options) else {
            continue;
        };
        let _ = reader.index_source();
        for series in reader.series() {
            let index = series.index();
            let _ = series.stats();
            let _ = series.time_span();
            let _ = series.sample_shape();
            let count = reader.block_entries(index).map(|e| e.len()).unwrap_or(0);
            for position in 0..count {
                if let Ok(block) = reader.read_block(index, position) {
                    let _ = series.decode_pod(&block);
                }
            }
            if let Ok(blocks) = reader.series_blocks(index, -1_000_000_000..) {
                blocks.for_each(drop);
            }
        }
        reader.blocks().for_each(drop);
        reader.blocks_by_time().for_each(drop);
        let _ = reader.verify_checksum();
    }
});
