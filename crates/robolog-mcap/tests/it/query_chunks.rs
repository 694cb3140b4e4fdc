//! Which chunks a query reads: a chunk whose time range overlaps the query but whose message
//! indexes rule out every wanted message is never read. Shown by damaging such a chunk's CRC:
//! the query that does not need it succeeds, the ones that decode it whole fail on the damage.
//! (A query that needs only the start of a chunk decodes only that, which the CRC cannot cover:
//! `query_prefix.rs`.) Uncompressed chunks are checked only with
//! `ReadOptions::verify_uncompressed_chunks`, which is off by default.

use std::collections::BTreeMap;

use robolog_mcap::{
    Bytes, Compression, McapError, McapReader, Message, Order, ReadOptions, WriteOptions, Writer,
};

use crate::support::codecs;
use codecs::compressions;

/// A file of channels `/a` (id order 0) and `/b` (1) holding `messages` (channel, log time,
/// payload length), a chunk closed after each index in `breaks`. Returns it with the first
/// chunk's CRC damaged.
fn damaged_file(
    compression: Compression,
    messages: &[(usize, u64, usize)],
    breaks: &[usize],
) -> Bytes {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let ids = [
        w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap(),
        w.register_channel("/b", "raw", 0, BTreeMap::new()).unwrap(),
    ];
    for (i, &(channel, t, len)) in messages.iter().enumerate() {
        w.write_message(&Message {
            channel_id: ids[channel],
            sequence: 0,
            log_time: t,
            publish_time: t,
            data: &vec![t as u8; len],
        })
        .unwrap();
        if breaks.contains(&i) {
            w.flush_chunk().unwrap();
        }
    }
    let mut bytes = w.finish().unwrap();
    let reader = McapReader::open(Bytes::from(bytes.clone())).unwrap();
    let chunks = &reader.summary().chunk_indexes;
    assert_eq!(chunks.len(), breaks.len() + 1);
    // Opcode, record length, start and end times, uncompressed size: then the CRC.
    let crc_at = chunks[0].chunk_start_offset as usize + 1 + 8 + 8 + 8 + 8;
    bytes[crc_at] ^= 0x01;
    Bytes::from(bytes)
}

/// Two chunks: the first holds `/a` at 100 and 110 and `/b` at 200, the second `/a` at 300.
/// The first chunk's CRC is damaged.
fn file(compression: Compression) -> Bytes {
    damaged_file(
        compression,
        &[(0, 100, 8), (0, 110, 8), (1, 200, 8), (0, 300, 8)],
        &[2],
    )
}

/// The log times of `topic`'s messages from `start` to 1,000 (exclusive).
fn query(
    file: &Bytes,
    opts: ReadOptions,
    topic: &str,
    order: Order,
    start: u64,
) -> Result<Vec<u64>, McapError> {
    query_to(file, opts, topic, order, start, 1_000)
}

/// The log times of `topic`'s messages from `start` to `end` (exclusive).
fn query_to(
    file: &Bytes,
    opts: ReadOptions,
    topic: &str,
    order: Order,
    start: u64,
    end: u64,
) -> Result<Vec<u64>, McapError> {
    let reader = McapReader::open_with(file.clone(), opts).unwrap();
    reader
        .messages()
        .topics([topic])
        .time_range(start..end)
        .order(order)
        .iter()?
        .map(|m| m.map(|m| m.log_time))
        .collect()
}

#[test]
fn a_chunk_without_wanted_messages_in_the_range_is_not_read() {
    for compression in compressions() {
        let file = file(compression);
        for threads in [0, 2] {
            for order in [Order::File, Order::LogTime, Order::ReverseLogTime] {
                let case = format!("{compression:?}, {threads} threads, {order:?}");
                // Uncompressed chunks are checked only when asked (see the test below).
                let opts = ReadOptions::default()
                    .verify_uncompressed_chunks(true)
                    .threads(threads);
                let whole = opts.clone().decode_whole_chunks(true);
                // From 150 on: the first chunk (100..=200) overlaps, but its /a messages do not.
                for opts in [&opts, &whole] {
                    let got = query(&file, opts.clone(), "/a", order, 150).unwrap();
                    assert_eq!(got, [300], "{case}");
                }
                // From 105 on, its /a message at 110 is wanted. Decoded whole, the chunk fails
                // its CRC check; by default only the records up to that message are decoded,
                // and the CRC over all of them cannot be checked.
                let err = query(&file, whole.clone(), "/a", order, 105).unwrap_err();
                assert!(
                    matches!(err, McapError::CrcMismatch { .. }),
                    "{case}: {err:?}"
                );
                let mut expected = vec![110, 300];
                if order == Order::ReverseLogTime {
                    expected.reverse();
                }
                let got = query(&file, opts.clone(), "/a", order, 105).unwrap();
                assert_eq!(got, expected, "{case}");
                // /b's message is the chunk's last record: that query needs the whole chunk,
                // and checks it.
                let err = query(&file, opts.clone(), "/b", order, 0).unwrap_err();
                assert!(
                    matches!(err, McapError::CrcMismatch { .. }),
                    "{case}: {err:?}"
                );
            }
        }
    }
}

#[test]
fn by_default_queries_check_compressed_chunks_but_not_uncompressed_ones() {
    for compression in compressions() {
        let file = file(compression);
        for threads in [0, 2] {
            let case = format!("{compression:?}, {threads} threads");
            let opts = ReadOptions::default().threads(threads);
            // /b's message is the first chunk's last record, so the chunk is read whole.
            let got = query(&file, opts.clone(), "/b", Order::LogTime, 0);
            if compression == Compression::None {
                // Served from the file's bytes unchecked, as the official readers do.
                assert_eq!(got.unwrap(), [200], "{case}");
            } else {
                assert!(
                    matches!(got, Err(McapError::CrcMismatch { .. })),
                    "{case}: {got:?}"
                );
            }
            let strict = opts.clone().verify_uncompressed_chunks(true);
            let got = query(&file, strict, "/b", Order::LogTime, 0);
            assert!(
                matches!(got, Err(McapError::CrcMismatch { .. })),
                "{case}: {got:?}"
            );
            // Without the chunk CRC check, nothing is checked, whatever the other option says.
            let off = opts
                .verify_chunk_crcs(false)
                .verify_uncompressed_chunks(true);
            assert_eq!(
                query(&file, off, "/b", Order::LogTime, 0).unwrap(),
                [200],
                "{case}"
            );
        }
    }
}

/// One chunk: twenty 1000-byte `/a` messages (times 0..20), then one 8-byte `/b` message (time
/// 20), its CRC damaged.
fn mostly_a(compression: Compression) -> Bytes {
    let mut messages: Vec<_> = (0..20).map(|t| (0, t, 1000)).collect();
    messages.push((1, 20, 8));
    damaged_file(compression, &messages, &[])
}

#[test]
fn a_zstd_chunk_is_decoded_whole_when_the_wanted_part_is_most_of_it() {
    for compression in compressions() {
        let file = mostly_a(compression);
        for threads in [0, 2] {
            let case = format!("{compression:?}, {threads} threads");
            let opts = ReadOptions::default()
                .verify_uncompressed_chunks(true)
                .threads(threads);
            // The last /a message starts in the chunk's last eighth but is not its last record.
            // A zstd frame is then decoded whole (one pass beats stopping near its end), which
            // checks the CRC; the other codecs stop after it, where the CRC cannot be checked.
            let got = query(&file, opts.clone(), "/a", Order::LogTime, 0);
            if compression == Compression::Zstd {
                assert!(
                    matches!(got, Err(McapError::CrcMismatch { .. })),
                    "{case}: {got:?}"
                );
            } else {
                assert_eq!(got.unwrap(), (0..20).collect::<Vec<u64>>(), "{case}");
            }
            // Up to the tenth /a message is about half the chunk: a prefix for every codec.
            let early = query_to(&file, opts.clone(), "/a", Order::LogTime, 0, 10).unwrap();
            assert_eq!(early, (0..10).collect::<Vec<u64>>(), "{case}");
        }
    }
}
