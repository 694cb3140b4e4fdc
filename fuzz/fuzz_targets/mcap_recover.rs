//! robolog-mcap: recovery. What `recover` writes must be a file that the indexed reader opens
//! through its summary and reads completely, with as many messages as the report says.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_mcap::{McapReader, Order, ReadOptions, SummarySource, WriteOptions, recover};

fuzz_target!(|data: &[u8]| {
    // Chunks are compressed on the calling thread: the default pipeline starts a pool of
    // threads per writer, which is writer plumbing rather than input handling, and spawning it
    // for every input held this target to about 1,100 executions a second.
    let write = WriteOptions::new().threads(0);
    let Ok((out, report)) = recover(Bytes::copy_from_slice(data), Vec::new(), write) else {
        return;
    };
    let options = ReadOptions::default().threads(0);
    let reader = match McapReader::open_with(Bytes::from(out), options) {
        Ok(reader) => reader,
        Err(e) => panic!("recover wrote a file the indexed reader refuses: {e}"),
    };
    if report.messages_recovered > 0 {
        assert_eq!(
            reader.summary().source,
            SummarySource::SummarySection,
            "recover wrote a file without a usable summary"
        );
    }
    let mut count = 0u64;
    match reader.messages().order(Order::File).iter() {
        Ok(messages) => {
            for message in messages {
                if let Err(e) = message {
                    panic!("recover wrote a file with an unreadable message: {e}");
                }
                count += 1;
            }
        }
        Err(e) => panic!("recover wrote a file that cannot be queried: {e}"),
    }
    assert_eq!(
        count, report.messages_recovered,
        "messages in the recovered file"
    );
});
