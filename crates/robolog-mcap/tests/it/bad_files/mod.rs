//! The generator of `testdata/bad/mcap/` (shared by `tests/hostile.rs` and
//! `tests/it/hostile_generated.rs`). Files are assembled record by record (spec §3), independently
//! of our writer.

#![allow(dead_code)]

use robolog_framing::{Compression, compress, crc32};
use robolog_testkit::hostile::HostileFile;

pub(crate) const MAGIC: &[u8] = b"\x89MCAP0\r\n";

pub(crate) fn string(s: &str) -> Vec<u8> {
    [&(s.len() as u32).to_le_bytes()[..], s.as_bytes()].concat()
}

pub(crate) fn record(opcode: u8, content: &[u8]) -> Vec<u8> {
    [
        &[opcode][..],
        &(content.len() as u64).to_le_bytes(),
        content,
    ]
    .concat()
}

pub(crate) fn header() -> Vec<u8> {
    record(0x01, &[string("ros1"), string("robolog hostile")].concat())
}

pub(crate) fn schema(id: u16) -> Vec<u8> {
    record(
        0x03,
        &[
            &id.to_le_bytes()[..],
            &string("std_msgs/String"),
            &string("ros1msg"),
            &string("string data\n"),
        ]
        .concat(),
    )
}

pub(crate) fn channel(id: u16, schema_id: u16) -> Vec<u8> {
    record(
        0x04,
        &[
            &id.to_le_bytes()[..],
            &schema_id.to_le_bytes(),
            &string("/chatter"),
            &string("ros1"),
            &0u32.to_le_bytes(),
        ]
        .concat(),
    )
}

pub(crate) fn message(channel_id: u16, sequence: u32, time: u64, data: &[u8]) -> Vec<u8> {
    record(
        0x05,
        &[
            &channel_id.to_le_bytes()[..],
            &sequence.to_le_bytes(),
            &time.to_le_bytes(),
            &time.to_le_bytes(),
            data,
        ]
        .concat(),
    )
}

/// The three messages of the model file, on channel 1.
pub(crate) const MESSAGES: [(u64, &[u8]); 3] = [
    (1_000, b"\x03\0\0\0one"),
    (2_000, b"\x03\0\0\0two"),
    (3_000, b"\x05\0\0\0three"),
];

/// What the model file is made of; each hostile variant changes one thing.
#[derive(Default)]
pub(crate) struct Spec<'a> {
    pub(crate) compression: &'a str,
    /// The chunk's uncompressed records; `None`: schema 1, channel 1, the three messages.
    pub(crate) records: Option<Vec<u8>>,
    /// Replaces the declared uncompressed size.
    pub(crate) uncompressed_size: Option<u64>,
    /// Replaces the uncompressed CRC.
    pub(crate) crc: Option<u32>,
    /// Replaces the chunk index's chunk_start_offset.
    pub(crate) chunk_index_start: Option<u64>,
    /// Replaces the offset of the first message index entry.
    pub(crate) message_index_offset: Option<u64>,
    /// Replaces the footer's summary_start.
    pub(crate) summary_start: Option<u64>,
    /// Replaces the data section CRC.
    pub(crate) data_crc: Option<u32>,
}

pub(crate) struct Model {
    pub(crate) bytes: Vec<u8>,
    pub(crate) chunk_start: u64,
    pub(crate) chunk_length: u64,
    /// Offset of the chunk's records field (its u64 length).
    pub(crate) records_field: u64,
    pub(crate) compressed_len: u64,
    pub(crate) message_index_start: u64,
    pub(crate) data_end_start: u64,
    pub(crate) summary_start: u64,
    pub(crate) footer_start: u64,
}

pub(crate) fn default_records() -> (Vec<u8>, Vec<u64>) {
    let mut records = [schema(1), channel(1, 1)].concat();
    let mut offsets = Vec::new();
    for (i, (t, data)) in MESSAGES.iter().enumerate() {
        offsets.push(records.len() as u64);
        records.extend(message(1, i as u32, *t, data));
    }
    (records, offsets)
}

pub(crate) fn model(spec: Spec<'_>) -> Model {
    let (default, offsets) = default_records();
    let records = spec.records.unwrap_or(default);
    let stored = match spec.compression {
        "lz4" => {
            let mut out = Vec::new();
            compress(Compression::Lz4, &records, &mut out).unwrap();
            out
        }
        "zstd" => {
            let mut out = Vec::new();
            compress(Compression::Zstd, &records, &mut out).unwrap();
            out
        }
        _ => records.clone(),
    };
    let uncompressed_size = spec.uncompressed_size.unwrap_or(records.len() as u64);
    let chunk_content_head = [
        &MESSAGES[0].0.to_le_bytes()[..],
        &MESSAGES[2].0.to_le_bytes(),
        &uncompressed_size.to_le_bytes(),
        &spec.crc.unwrap_or_else(|| crc32(&records)).to_le_bytes(),
        &string(spec.compression),
    ]
    .concat();
    let chunk = record(
        0x06,
        &[
            &chunk_content_head[..],
            &(stored.len() as u64).to_le_bytes(),
            &stored,
        ]
        .concat(),
    );
    let mut out = [MAGIC.to_vec(), header()].concat();
    let chunk_start = out.len() as u64;
    let records_field = chunk_start + 9 + chunk_content_head.len() as u64;
    out.extend(&chunk);
    let message_index_start = out.len() as u64;
    let entries: Vec<u8> = MESSAGES
        .iter()
        .zip(&offsets)
        .enumerate()
        .flat_map(|(i, ((t, _), o))| {
            let o = match (i, spec.message_index_offset) {
                (0, Some(lie)) => lie,
                _ => *o,
            };
            [t.to_le_bytes(), o.to_le_bytes()].concat()
        })
        .collect();
    let message_index = record(
        0x07,
        &[
            &1u16.to_le_bytes()[..],
            &(entries.len() as u32).to_le_bytes(),
            &entries,
        ]
        .concat(),
    );
    out.extend(&message_index);
    let data_end_start = out.len() as u64;
    let data_crc = spec.data_crc.unwrap_or_else(|| crc32(&out));
    out.extend(record(0x0f, &data_crc.to_le_bytes()));
    let summary_start = out.len() as u64;
    out.extend(schema(1));
    out.extend(channel(1, 1));
    let index_map = [&1u16.to_le_bytes()[..], &message_index_start.to_le_bytes()].concat();
    out.extend(record(
        0x08,
        &[
            &MESSAGES[0].0.to_le_bytes()[..],
            &MESSAGES[2].0.to_le_bytes(),
            &spec.chunk_index_start.unwrap_or(chunk_start).to_le_bytes(),
            &(chunk.len() as u64).to_le_bytes(),
            &(index_map.len() as u32).to_le_bytes(),
            &index_map,
            &(message_index.len() as u64).to_le_bytes(),
            &string(spec.compression),
            &(stored.len() as u64).to_le_bytes(),
            &uncompressed_size.to_le_bytes(),
        ]
        .concat(),
    ));
    let footer_start = out.len() as u64;
    out.push(0x02);
    out.extend(20u64.to_le_bytes());
    out.extend(spec.summary_start.unwrap_or(summary_start).to_le_bytes());
    out.extend(0u64.to_le_bytes());
    let summary_crc = crc32(&out[summary_start as usize..]);
    out.extend(summary_crc.to_le_bytes());
    out.extend(MAGIC);
    Model {
        bytes: out,
        chunk_start,
        chunk_length: chunk.len() as u64,
        records_field,
        compressed_len: stored.len() as u64,
        message_index_start,
        data_end_start,
        summary_start,
        footer_start,
    }
}

/// One message of `len` zero bytes in a chunk compressed with `compression`, sizes honest.
pub(crate) fn bomb(compression: &str, len: usize) -> Model {
    let records = [
        schema(1),
        channel(1, 1),
        message(1, 0, 1_000, &vec![0; len]),
    ]
    .concat();
    model(Spec {
        compression,
        records: Some(records),
        ..Spec::default()
    })
}

pub(crate) fn generate() -> Vec<HostileFile> {
    let plain = model(Spec::default());
    let mut files = Vec::new();
    let mut add = |name: &str, bytes: Vec<u8>| files.push(HostileFile::new(name, bytes));
    add("empty.mcap", Vec::new());
    add("magic-only.mcap", MAGIC.to_vec());
    // A header record claiming 2^64 − 1 bytes.
    add(
        "record-length-huge.mcap",
        [MAGIC, &[0x01], &u64::MAX.to_le_bytes(), &[0; 8]].concat(),
    );
    // A header whose profile string claims 4 GiB − 1 bytes, inside an 8-byte record.
    add(
        "string-length-huge.mcap",
        [
            MAGIC.to_vec(),
            record(
                0x01,
                &[&u32::MAX.to_le_bytes()[..], &0u32.to_le_bytes()].concat(),
            ),
        ]
        .concat(),
    );
    // Chunks whose declared uncompressed size lies: 1 TiB from a few bytes of zstd, 1 GiB from
    // LZ4, 2^64 − 1 uncompressed.
    add(
        "zstd-size-lies-huge.mcap",
        model(Spec {
            compression: "zstd",
            uncompressed_size: Some(1 << 40),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "lz4-size-lies-huge.mcap",
        model(Spec {
            compression: "lz4",
            uncompressed_size: Some(1 << 30),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "zstd-size-lies-small.mcap",
        model(Spec {
            compression: "zstd",
            uncompressed_size: Some(10),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "none-size-lies-huge.mcap",
        model(Spec {
            uncompressed_size: Some(u64::MAX),
            ..Spec::default()
        })
        .bytes,
    );
    // Honest decompression bombs: 64 MiB of zeros in ~2 KiB of zstd (over the 16 MiB limit),
    // 8 MiB in ~32 KiB of LZ4 (under it: must read).
    add("zstd-bomb.mcap", bomb("zstd", 64 << 20).bytes);
    add("lz4-bomb.mcap", bomb("lz4", 8 << 20).bytes);
    add(
        "chunk-crc-mismatch.mcap",
        model(Spec {
            crc: Some(0xdead_beef),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "data-crc-mismatch.mcap",
        model(Spec {
            data_crc: Some(0xdead_beef),
            ..Spec::default()
        })
        .bytes,
    );
    // Index offsets that lie: summary past the end, chunk index into the middle of the chunk,
    // a message index entry past the chunk's records.
    add(
        "summary-start-past-eof.mcap",
        model(Spec {
            summary_start: Some(1 << 40),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "chunk-index-mid-record.mcap",
        model(Spec {
            chunk_index_start: Some(plain.chunk_start + 5),
            ..Spec::default()
        })
        .bytes,
    );
    add(
        "message-index-offset-past-chunk.mcap",
        model(Spec {
            message_index_offset: Some(1 << 32),
            ..Spec::default()
        })
        .bytes,
    );
    // A message on channel 9, which no channel record declares.
    let mut records = [schema(1), channel(1, 1)].concat();
    records.extend(message(9, 0, MESSAGES[0].0, MESSAGES[0].1));
    add(
        "message-on-undeclared-channel.mcap",
        model(Spec {
            records: Some(records),
            ..Spec::default()
        })
        .bytes,
    );
    // Cut in the middle of the chunk.
    add(
        "cut-mid-chunk.mcap",
        plain.bytes[..(plain.chunk_start + plain.chunk_length / 2) as usize].to_vec(),
    );
    files
}
