//! robolog-bddf: recover a damaged file. What `recover` writes must be a valid file that the
//! indexed reader opens through its index, with every block it says it recovered.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_bddf::{BddfReader, ReadOptions, recover};
use robolog_framing::Bytes;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let Ok(report) = recover(data, &mut out) else {
        return;
    };
    assert_eq!(
        report.output_len,
        out.len() as u64,
        "report and output disagree on the length"
    );
    let options = ReadOptions::new().verify_checksum(true).strict(true);
    let reader = match BddfReader::open_with(Bytes::from(out), options) {
        Ok(reader) => reader,
        Err(e) => panic!("recover wrote a file the reader refuses: {e}"),
    };
    let mut blocks = 0u64;
    for block in reader.blocks() {
        if let Err(e) = block {
            panic!("recover wrote a file with a bad block: {e}");
        }
        blocks += 1;
    }
    assert_eq!(
        blocks, report.data_blocks_recovered,
        "recovered block count"
    );
});
