//! robolog-mcap: the sans-io record parser (framing and every record type, inside and outside
//! chunks) and the `doctor`-style checks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_mcap::parse::RecordSplitter;
use robolog_mcap::{Record, check};

fuzz_target!(|data: &[u8]| {
    // The input as a file's records (after the magic, as a seeking reader would hand them).
    for raw in RecordSplitter::new(data, 8) {
        let Ok(raw) = raw else {
            break;
        };
        let _ = raw.len();
        if let Ok(Record::Chunk(chunk)) = raw.parse() {
            if chunk.compression.is_empty() {
                for inner in RecordSplitter::chunk_records(chunk.records) {
                    let Ok(inner) = inner else {
                        break;
                    };
                    let _ = inner.parse();
                }
            }
        }
    }
    // The input as a chunk's uncompressed records.
    for raw in RecordSplitter::chunk_records(data) {
        let Ok(raw) = raw else {
            break;
        };
        let _ = raw.parse();
    }
    let _ = check(data);
});
