//! `Writer::copy_chunk`: a Chunk record of another file copied byte for byte, with the
//! statistics, message indexes and chunk index of the new file correct, and the file read back
//! the same by our readers, our checker and the official Python `mcap` package.

use std::collections::BTreeMap;
use std::ffi::OsStr;

use robolog_mcap::{
    Bytes, ChunkIndex, Compression, McapReader, Message, Order, Record, WriteOptions, Writer, check,
};

/// A file of 600 messages on two channels (one schemaless), in small `compression` chunks.
fn source(compression: Compression) -> Vec<u8> {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(4 * 1024))
        .profile("ros1");
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let schema = w
        .register_schema("pkg/Msg", "ros1msg", b"int32 x\n")
        .unwrap();
    let a = w
        .register_channel("/a", "ros1", schema, BTreeMap::new())
        .unwrap();
    let b = w
        .register_channel("/b", "json", 0, BTreeMap::new())
        .unwrap();
    for i in 0..600u64 {
        let data: Vec<u8> = (0..(i % 90)).map(|j| (i * 7 + j) as u8).collect();
        w.write_message(&Message {
            channel_id: if i % 3 == 0 { b } else { a },
            sequence: i as u32,
            log_time: 1_000 + i * 10,
            publish_time: 2_000 + i,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

/// (channel, sequence, log time, publish time, data) of every message, in `order`.
type Row = (u16, u32, u64, u64, Vec<u8>);

fn messages(file: &[u8], order: Order) -> Vec<Row> {
    let reader = McapReader::open(Bytes::from(file.to_vec())).unwrap();
    reader
        .messages()
        .order(order)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                m.channel_id,
                m.sequence,
                m.log_time,
                m.publish_time,
                m.data.to_vec(),
            )
        })
        .collect()
}

/// The chunk indexes of a file, in file order.
fn chunks(reader: &McapReader) -> Vec<ChunkIndex<'static>> {
    let mut chunks = reader.summary().chunk_indexes.clone();
    chunks.sort_by_key(|c| c.chunk_start_offset);
    chunks
}

/// The Chunk record `index` points at, and the MessageIndex records after it.
fn raw_chunk<'f>(file: &'f [u8], index: &ChunkIndex<'_>) -> (&'f [u8], &'f [u8]) {
    let start = index.chunk_start_offset as usize;
    let end = start + index.chunk_length as usize;
    let indexes = end..end + index.message_index_length as usize;
    (&file[start..end], &file[indexes])
}

/// A writer with the schemas and channels of `reader` under their own ids.
fn writer_like(reader: &McapReader, compression: Compression) -> Writer<Vec<u8>> {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(4 * 1024))
        .profile("ros1");
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    for schema in reader.summary().schemas.values() {
        w.add_schema(schema).unwrap();
    }
    for channel in reader.summary().channels.values() {
        w.add_channel(channel).unwrap();
    }
    w
}

fn assert_no_errors(file: &[u8]) {
    let problems = check(file);
    let errors: Vec<_> = problems
        .iter()
        .filter(|p| p.severity == robolog_framing::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn copied_chunks_are_the_input_chunk_records_byte_for_byte() {
    for compression in [Compression::Zstd, Compression::Lz4, Compression::None] {
        let input = source(compression);
        let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
        let in_chunks = chunks(&reader);
        assert!(in_chunks.len() > 5, "several chunks");
        let mut w = writer_like(&reader, compression);
        let mut copied = 0;
        for index in &in_chunks {
            let (chunk, indexes) = raw_chunk(&input, index);
            copied += w.copy_chunk(chunk, indexes).unwrap();
        }
        assert_eq!(copied, 600);
        let output = w.finish().unwrap();

        let out_reader = McapReader::open(Bytes::from(output.clone())).unwrap();
        let out_chunks = chunks(&out_reader);
        assert_eq!(out_chunks.len(), in_chunks.len(), "{compression:?}");
        for (a, b) in in_chunks.iter().zip(&out_chunks) {
            assert_eq!(raw_chunk(&input, a).0, raw_chunk(&output, b).0);
            assert_eq!(
                (a.message_start_time, a.message_end_time, a.compressed_size),
                (b.message_start_time, b.message_end_time, b.compressed_size)
            );
            assert_eq!(
                a.message_index_offsets.keys().collect::<Vec<_>>(),
                b.message_index_offsets.keys().collect::<Vec<_>>()
            );
        }
        let (si, so) = (
            reader.summary().statistics.clone().unwrap(),
            out_reader.summary().statistics.clone().unwrap(),
        );
        assert_eq!(so.message_count, 600);
        assert_eq!(so.channel_message_counts, si.channel_message_counts);
        assert_eq!(
            (so.message_start_time, so.message_end_time),
            (1_000, 1_000 + 599 * 10)
        );
        assert_eq!(so.chunk_count, si.chunk_count);
        // The message indexes are right: an indexed log-time read gives every message.
        assert_eq!(
            messages(&output, Order::LogTime),
            messages(&input, Order::LogTime)
        );
        assert_eq!(
            messages(&output, Order::File),
            messages(&input, Order::File)
        );
        assert_no_errors(&output);
    }
}

#[test]
fn copied_chunks_mix_with_messages_written_one_by_one() {
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let in_chunks = chunks(&reader);
    let all = messages(&input, Order::File);
    let mut w = writer_like(&reader, Compression::Zstd);
    let mut expected = Vec::new();
    for (i, index) in in_chunks.iter().enumerate() {
        let (chunk, indexes) = raw_chunk(&input, index);
        let in_chunk: Vec<Row> = all
            .iter()
            .filter(|m| (index.message_start_time..=index.message_end_time).contains(&m.2))
            .cloned()
            .collect();
        if i % 2 == 0 {
            assert_eq!(w.copy_chunk(chunk, indexes).unwrap(), in_chunk.len() as u64);
        } else {
            for (channel_id, sequence, log_time, publish_time, data) in &in_chunk {
                w.write_message(&Message {
                    channel_id: *channel_id,
                    sequence: *sequence,
                    log_time: *log_time,
                    publish_time: *publish_time,
                    data,
                })
                .unwrap();
            }
        }
        expected.extend(in_chunk);
    }
    let output = w.finish().unwrap();
    assert_eq!(messages(&output, Order::File), expected);
    assert_eq!(messages(&output, Order::File), all);
    let out_reader = McapReader::open(Bytes::from(output.clone())).unwrap();
    let stats = out_reader.summary().statistics.clone().unwrap();
    assert_eq!(stats.message_count, 600);
    assert_eq!(
        stats.channel_message_counts,
        reader
            .summary()
            .statistics
            .clone()
            .unwrap()
            .channel_message_counts
    );
    // Each copied chunk is still the input's record.
    let out_chunks = chunks(&out_reader);
    for index in in_chunks.iter().step_by(2) {
        let record = raw_chunk(&input, index).0;
        assert!(
            out_chunks.iter().any(|c| raw_chunk(&output, c).0 == record),
            "chunk at {} copied",
            index.chunk_start_offset
        );
    }
    assert_no_errors(&output);
}

#[test]
fn a_copied_chunk_gets_its_channels_written_before_it() {
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let in_chunks = chunks(&reader);
    // The last chunk alone: its channels were declared in the input's first chunk.
    let last = in_chunks.last().unwrap();
    let mut w = writer_like(&reader, Compression::Zstd);
    let (chunk, indexes) = raw_chunk(&input, last);
    let copied = w.copy_chunk(chunk, indexes).unwrap();
    let output = w.finish().unwrap();
    // A reader that sees only the data section, in order, knows every channel in time.
    let mut linear = robolog_mcap::LinearReader::new(Bytes::from(output.clone()));
    let mut known = std::collections::BTreeSet::new();
    let mut streamed = 0;
    while let Some(record) = linear.next_record() {
        match record.unwrap() {
            Record::Channel(c) => {
                known.insert(c.id);
            }
            Record::Message(m) => {
                assert!(known.contains(&m.channel_id), "channel {}", m.channel_id);
                streamed += 1;
            }
            _ => {}
        }
    }
    assert_eq!(streamed, copied);
    let out_reader = McapReader::open(Bytes::from(output.clone())).unwrap();
    let out_chunks = chunks(&out_reader);
    assert_eq!(out_chunks.len(), 1, "no chunk without messages before it");
    assert_eq!(raw_chunk(&output, &out_chunks[0]).0, chunk);
    assert_no_errors(&output);
}

#[test]
fn a_copied_chunk_takes_the_time_span_of_its_messages() {
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let index = chunks(&reader)[2].clone();
    let (chunk, indexes) = raw_chunk(&input, &index);
    let (first, last) = (index.message_start_time, index.message_end_time);
    assert!(first < last);
    // A header that declares another span (outside the CRC, so nothing else notices): here
    // one that misses the chunk's messages altogether.
    let mut lying = chunk.to_vec();
    lying[9..17].copy_from_slice(&7u64.to_le_bytes());
    lying[17..25].copy_from_slice(&8u64.to_le_bytes());
    let mut w = writer_like(&reader, Compression::Zstd);
    assert!(w.copy_chunk(&lying, indexes).unwrap() > 0);
    let output = w.finish().unwrap();
    assert_no_errors(&output);

    let copied = McapReader::open(Bytes::from(output.clone())).unwrap();
    let out_index = chunks(&copied)[0].clone();
    assert_eq!(
        (out_index.message_start_time, out_index.message_end_time),
        (first, last)
    );
    let (out_chunk, _) = raw_chunk(&output, &out_index);
    assert_eq!(out_chunk[9..17], first.to_le_bytes());
    assert_eq!(out_chunk[17..25], last.to_le_bytes());
    // The rest of the record is the input's, byte for byte.
    assert_eq!(out_chunk[25..], chunk[25..]);
    // So a query of the chunk's time range finds its messages.
    let found = copied
        .messages()
        .time_range(first..=last)
        .iter()
        .unwrap()
        .count();
    let expected = messages(&input, Order::File)
        .iter()
        .filter(|m| (first..=last).contains(&m.2))
        .count();
    assert!(expected > 0);
    assert_eq!(found, expected);
}

#[test]
fn copy_chunk_refuses_what_it_cannot_copy() {
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let first = chunks(&reader)[0].clone();
    let (chunk, indexes) = raw_chunk(&input, &first);
    // Channels not added.
    let mut w = Writer::new(Vec::new(), WriteOptions::new()).unwrap();
    let e = w.copy_chunk(chunk, indexes).unwrap_err().to_string();
    assert!(e.contains("not added"), "{e}");
    // Not one whole Chunk record.
    let mut w = writer_like(&reader, Compression::Zstd);
    assert!(w.copy_chunk(&chunk[..chunk.len() - 1], indexes).is_err());
    assert!(w.copy_chunk(indexes, indexes).is_err());
    // Indexes that are not MessageIndex records.
    assert!(w.copy_chunk(chunk, chunk).is_err());
    // An unchunked output.
    let mut w = Writer::new(Vec::new(), WriteOptions::new().chunk_size(None)).unwrap();
    assert!(w.copy_chunk(chunk, indexes).is_err());
}

#[test]
fn python_mcap_reads_copied_chunks() {
    let Some(python) = robolog_testkit::interop::python() else {
        return;
    };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/read_mcap.py");
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let mut w = writer_like(&reader, Compression::Zstd);
    let all = messages(&input, Order::File);
    for (i, index) in chunks(&reader).iter().enumerate() {
        if i == 1 {
            // One chunk rewritten, the others copied.
            for (channel_id, sequence, log_time, publish_time, data) in all
                .iter()
                .filter(|m| (index.message_start_time..=index.message_end_time).contains(&m.2))
            {
                w.write_message(&Message {
                    channel_id: *channel_id,
                    sequence: *sequence,
                    log_time: *log_time,
                    publish_time: *publish_time,
                    data,
                })
                .unwrap();
            }
            continue;
        }
        let (chunk, indexes) = raw_chunk(&input, index);
        w.copy_chunk(chunk, indexes).unwrap();
    }
    let output = w.finish().unwrap();
    let dir = std::env::temp_dir().join(format!("robolog-mcap-copy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("copied.mcap");
    std::fs::write(&path, &output).unwrap();
    let out = robolog_testkit::interop::run(&python, &script, &[OsStr::new(&path)]).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["message_count"], 600);
    for key in ["streamed", "indexed"] {
        let read = got[key].as_array().unwrap();
        assert_eq!(read.len(), all.len(), "{key}");
        for (g, (channel_id, sequence, log_time, publish_time, data)) in read.iter().zip(&all) {
            assert_eq!(g["channel_id"], *channel_id, "{key}");
            assert_eq!(g["sequence"], *sequence, "{key}");
            assert_eq!(g["log_time"], *log_time, "{key}");
            assert_eq!(g["publish_time"], *publish_time, "{key}");
            let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
            assert_eq!(g["data"], hex, "{key}");
        }
    }
}

#[test]
fn recover_copies_intact_chunks_and_decodes_the_damaged_ones() {
    let input = source(Compression::Zstd);
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let in_chunks = chunks(&reader);
    let n = in_chunks.len();
    let all = messages(&input, Order::File);
    // A flipped byte in the stored CRC of the third chunk (opcode, length, start, end and
    // uncompressed size come before it), and the file cut in the middle of the last chunk.
    let mut damaged = input.clone();
    let flip = in_chunks[2].chunk_start_offset as usize + 1 + 8 + 8 + 8 + 8;
    damaged[flip] ^= 0x55;
    let last = &in_chunks[n - 1];
    damaged.truncate((last.chunk_start_offset + last.chunk_length / 2) as usize);

    // Chunks of another size: a rewritten chunk cannot come out identical to its input.
    let opts = WriteOptions::new()
        .compression(Compression::Zstd)
        .chunk_size(Some(3 * 1024));
    let (output, report) =
        robolog_mcap::recover(damaged.clone(), Vec::new(), opts.clone()).unwrap();
    // Every chunk but the damaged and the cut one is copied.
    assert_eq!(report.chunks_copied, n as u64 - 2, "{report:?}");
    let out_reader = McapReader::open(Bytes::from(output.clone())).unwrap();
    let out_chunks = chunks(&out_reader);
    let out_records: Vec<&[u8]> = out_chunks.iter().map(|c| raw_chunk(&output, c).0).collect();
    for (i, index) in in_chunks.iter().enumerate() {
        let copied = out_records.contains(&raw_chunk(&input, index).0);
        assert_eq!(copied, i != 2 && i != n - 1, "chunk {i}");
    }
    // The same messages as a recovery that decodes every chunk (into LZ4, so none is copied).
    let (decoded, decoded_report) = robolog_mcap::recover(
        damaged.clone(),
        Vec::new(),
        opts.compression(Compression::Lz4),
    )
    .unwrap();
    assert_eq!(decoded_report.chunks_copied, 0);
    assert_eq!(report.messages_recovered, decoded_report.messages_recovered);
    assert_eq!(
        report.messages_unverified,
        decoded_report.messages_unverified
    );
    assert!(
        report.messages_unverified > 0,
        "the damaged chunk's messages are kept"
    );
    assert_eq!(
        messages(&output, Order::File),
        messages(&decoded, Order::File)
    );
    // Nothing from before the cut chunk is missing (a zstd chunk cut in half may give none of
    // its own: its one block is incomplete).
    let got = messages(&output, Order::File);
    let before_cut: Vec<Row> = all
        .iter()
        .filter(|m| m.2 < last.message_start_time)
        .cloned()
        .collect();
    assert!(got.len() >= before_cut.len());
    assert_eq!(got[..before_cut.len()], before_cut[..]);
    let stats = out_reader.summary().statistics.clone().unwrap();
    assert_eq!(stats.message_count, report.messages_recovered);
    assert_no_errors(&output);
}
