//! Which chunks a query reads: a chunk whose time range overlaps the query but whose message
//! indexes rule out every wanted message is never read. Shown by damaging such a chunk: the
//! query that does not need it succeeds, the one that does fails on the damage.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, McapError, McapReader, Message, Order, ReadOptions, WriteOptions, Writer,
};

/// Two chunks: the first holds `/a` at 100 and 110 and `/b` at 200, the second `/a` at 300.
/// Returns the file with the first chunk's CRC damaged.
fn file(compression: Compression) -> Bytes {
    let opts = WriteOptions::default()
        .with_compression(compression)
        .with_chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let a = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
    let b = w.register_channel("/b", "raw", 0, BTreeMap::new()).unwrap();
    let write = |w: &mut Writer<Vec<u8>>, channel_id: u16, t: u64| {
        w.write_message(&Message {
            channel_id,
            sequence: 0,
            log_time: t,
            publish_time: t,
            data: &t.to_le_bytes(),
        })
        .unwrap();
    };
    write(&mut w, a, 100);
    write(&mut w, a, 110);
    write(&mut w, b, 200);
    w.flush_chunk().unwrap();
    write(&mut w, a, 300);
    let mut bytes = w.finish().unwrap();
    let reader = McapReader::open(Bytes::from(bytes.clone())).unwrap();
    let chunks = &reader.summary().chunk_indexes;
    assert_eq!(chunks.len(), 2);
    // Opcode, record length, start and end times, uncompressed size: then the CRC.
    let crc_at = chunks[0].chunk_start_offset as usize + 1 + 8 + 8 + 8 + 8;
    bytes[crc_at] ^= 0x01;
    Bytes::from(bytes)
}

fn query(file: &Bytes, threads: usize, order: Order, start: u64) -> Result<Vec<u64>, McapError> {
    let reader =
        McapReader::with_options(file.clone(), ReadOptions::default().with_threads(threads))
            .unwrap();
    reader
        .messages()
        .topics(["/a"])
        .time_range(start, 1_000)
        .order(order)
        .iter()?
        .map(|m| m.map(|m| m.log_time))
        .collect()
}

#[test]
fn a_chunk_without_wanted_messages_in_the_range_is_not_read() {
    let mut compressions = vec![Compression::None];
    for c in [Compression::Lz4, Compression::Zstd] {
        if c.is_enabled() {
            compressions.push(c);
        }
    }
    for compression in compressions {
        let file = file(compression);
        for threads in [0, 2] {
            for order in [Order::File, Order::LogTime, Order::ReverseLogTime] {
                let case = format!("{compression:?}, {threads} threads, {order:?}");
                // From 150 on: the first chunk (100..=200) overlaps, but its /a messages do not.
                assert_eq!(query(&file, threads, order, 150).unwrap(), [300], "{case}");
                // From 105 on, its /a message at 110 is wanted: the damage is found.
                let err = query(&file, threads, order, 105).unwrap_err();
                assert!(
                    matches!(err, McapError::CrcMismatch { .. }),
                    "{case}: {err:?}"
                );
            }
        }
    }
}
