//! An indexed read on two or more worker threads decodes a large LZ4 chunk in two halves at once
//! (`Decompressor::decompress_shared`); it gives the same messages, and the same errors, as a
//! read on one worker, which decodes each chunk on one thread, and as one without workers.

use std::collections::BTreeMap;

use robolog_mcap::{Bytes, Compression, McapReader, Message, ReadOptions, WriteOptions, Writer};

const MESSAGES: u64 = 40;

/// Forty 100 kB camera-like messages (a gradient with noise) in LZ4 chunks of about 512 KiB.
fn file() -> Vec<u8> {
    let opts = WriteOptions::new()
        .compression(Compression::Lz4)
        .chunk_size(Some(512 << 10));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let cam = w
        .register_channel("/cam", "raw", 0, BTreeMap::new())
        .unwrap();
    let mut noise = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..MESSAGES {
        let data: Vec<u8> = (0..100_000u64)
            .map(|j| {
                noise ^= noise << 13;
                noise ^= noise >> 7;
                noise ^= noise << 17;
                (j / 400 + i) as u8 ^ (noise as u8 & 0x07)
            })
            .collect();
        w.write_message(&Message {
            channel_id: cam,
            sequence: i as u32,
            log_time: 1_000 + i * 50,
            publish_time: 1_000 + i * 50,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// (log time, payload) of every message a read gives, or its error as text.
fn read(
    bytes: &[u8],
    threads: usize,
    range: Option<(u64, u64)>,
) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let opts = ReadOptions::default().threads(threads);
    let reader =
        McapReader::open_with(Bytes::copy_from_slice(bytes), opts).map_err(|e| e.to_string())?;
    let mut query = reader.messages().topics(["/cam"]);
    if let Some((start, end)) = range {
        query = query.time_range(start..end);
    }
    query
        .iter()
        .map_err(|e| e.to_string())?
        .map(|m| {
            m.map(|m| (m.log_time, m.data.to_vec()))
                .map_err(|e| e.to_string())
        })
        .collect()
}

fn every_way(bytes: &[u8], range: Option<(u64, u64)>) -> Result<Vec<(u64, Vec<u8>)>, String> {
    let halves = read(bytes, 2, range);
    assert_eq!(read(bytes, 1, range), halves, "halves against whole chunks");
    assert_eq!(read(bytes, 0, range), halves, "workers against none");
    halves
}

#[test]
fn halves_give_every_message() {
    let bytes = file();
    let reader = McapReader::open(Bytes::copy_from_slice(&bytes)).unwrap();
    let chunks = &reader.summary().chunk_indexes;
    assert!(chunks.len() >= 6, "{} chunks", chunks.len());
    assert!(chunks.iter().all(|c| c.compression == "lz4"));
    assert!(
        chunks
            .iter()
            .filter(|c| c.uncompressed_size >= 256 << 10)
            .count()
            >= 6,
        "chunks large enough to split"
    );

    let all = every_way(&bytes, None).unwrap();
    assert_eq!(all.len() as u64, MESSAGES);
    assert!(
        all.iter()
            .enumerate()
            .all(|(i, (t, data))| *t == 1_000 + i as u64 * 50 && data.len() == 100_000)
    );
    // A query over a few chunks, as the benchmark's W2 LZ4 query.
    let some = every_way(&bytes, Some((1_500, 2_000))).unwrap();
    assert_eq!(some, all[10..20]);
}

#[test]
fn damage_in_the_second_half_of_a_chunk_is_the_same_error() {
    let bytes = file();
    let reader = McapReader::open(Bytes::copy_from_slice(&bytes)).unwrap();
    let chunk = reader.summary().chunk_indexes[2].clone();
    let end = (chunk.chunk_start_offset + chunk.chunk_length) as usize;
    // Three quarters into the chunk's compressed records: in its second half of blocks.
    for at in [end - chunk.compressed_size as usize / 4, end - 100] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5A;
        let error = every_way(&damaged, None).expect_err("a damaged chunk fails the read");
        assert!(
            error.contains(&chunk.chunk_start_offset.to_string()),
            "{error}"
        );
    }
}
