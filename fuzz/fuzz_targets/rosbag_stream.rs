//! robolog-rosbag: read a bag from a stream, with recovery on and off.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_fuzz::CHUNK_LIMIT;
use robolog_rosbag::{StreamOptions, StreamReader};

fuzz_target!(|data: &[u8]| {
    // Recovery off on odd lengths: both modes get half the inputs, each input one pass.
    let recover = data.len() % 2 == 0;
    {
        let options = StreamOptions::new()
            .max_record_size(CHUNK_LIMIT as u64)
            .recover(recover);
        let Ok(mut reader) = StreamReader::with_options(data, options) else {
            return;
        };
        let _ = reader.version();
        loop {
            match reader.next_message() {
                Ok(Some(message)) => {
                    let _ = reader.connection(message.conn);
                }
                Ok(None) | Err(_) => break,
            }
        }
        let _ = reader.report();
        let _ = reader.connections().count();
    }
});
