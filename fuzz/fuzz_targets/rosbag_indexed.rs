//! robolog-rosbag: open a bag from memory (index, or the scan fallback) and read every message
//! in time order and in file order, and through a topic and time filter.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::CHUNK_LIMIT;
use robolog_rosbag::{OpenOptions, Order};

fuzz_target!(|data: &[u8]| {
    for strict in [false, true] {
        let options = OpenOptions::new()
            .max_chunk_size(CHUNK_LIMIT)
            .strict(strict);
        let Ok(bag) = options.open(Bytes::copy_from_slice(data)) else {
            continue;
        };
        let _ = bag.summary();
        let _ = bag.problems();
        let _ = bag.chunks().count();
        for order in [Order::Time, Order::File] {
            for message in bag.messages().order(order).threads(0) {
                if message.is_err() {
                    break;
                }
            }
        }
        if let Some(first) = bag.connections().first() {
            let topic = first.topic.clone();
            let start = bag.summary().start_ns.unwrap_or(0);
            let query = bag
                .messages()
                .topics([topic])
                .time_range(start.saturating_add(1)..);
            for message in query.threads(0) {
                if message.is_err() {
                    break;
                }
            }
        }
    }
});
