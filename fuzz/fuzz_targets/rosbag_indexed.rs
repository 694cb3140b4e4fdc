//! robolog-rosbag: open a bag from memory (index, or the scan fallback), with chunk headers read
//! lazily or checked at open, and read every message in time order and in file order (lent and
//! iterated, which must agree), and through a topic and time filter. A query goes on after a
//! damaged chunk, so errors do not end the reads.
#![no_main]

use libfuzzer_sys::fuzz_target;
use robolog_framing::Bytes;
use robolog_fuzz::CHUNK_LIMIT;
use robolog_rosbag::{Bag, OpenOptions, Order};

fuzz_target!(|data: &[u8]| {
    for (strict, verify_chunks) in [(false, false), (false, true), (true, true)] {
        let options = OpenOptions::new()
            .max_chunk_size(CHUNK_LIMIT)
            .strict(strict)
            .verify_chunks(verify_chunks);
        let Ok(bag) = Bag::open_with(Bytes::copy_from_slice(data), options) else {
            continue;
        };
        let _ = bag.summary();
        let _ = bag.problems();
        let _ = bag.chunks().count();
        let _ = bag.compression();
        for order in [Order::LogTime, Order::File] {
            // Lending and iterating must agree, errors included (not their text: a corrupt chunk
            // can fail differently in a recycled, larger buffer).
            let query = bag.messages().order(order).threads(0);
            let iterated: Vec<_> = query
                .clone()
                .into_iter()
                .map(|m| {
                    m.map(|m| (m.conn, m.time_ns, m.data.to_vec(), m.position))
                        .map_err(|_| ())
                })
                .collect();
            let mut messages = query.iter();
            let mut lent = Vec::new();
            while let Some(m) = messages.next_ref() {
                lent.push(
                    m.map(|m| (m.conn, m.time_ns, m.data.to_vec(), m.position))
                        .map_err(|_| ()),
                );
            }
            assert_eq!(lent, iterated);
        }
        if let Some(first) = bag.connections().first() {
            let topic = first.topic.clone();
            let start = bag.summary().start_ns.unwrap_or(0);
            let query = bag
                .messages()
                .topics([topic])
                .time_range(start.saturating_add(1)..);
            query.threads(0).into_iter().for_each(drop);
        }
    }
});
