//! MCAP to MCAP conversions copy the chunks the output keeps whole, byte for byte, and rewrite
//! the others: the same messages, statistics and indexes as a conversion that decodes every
//! chunk.

use std::collections::BTreeMap;

use robolog::{
    Bytes, ConvertOptions, Filter, Format, Log, Order, Output, WriterOptions, convert,
    create_writer, merge, open_bytes,
};
use robolog_mcap::{ChunkIndex, Compression, McapReader, Message, WriteOptions, Writer};

/// 900 messages on three channels, chunks of about 4 KiB (`compression`); with `overlap`, every
/// tenth message goes back in time by more than a chunk's span.
fn source(compression: Compression, overlap: bool) -> Vec<u8> {
    source_on(compression, overlap, 3, 1_000_000)
}

/// Like [`source`], with messages on the first `busy` of the three channels only, from `t0`.
fn source_on(compression: Compression, overlap: bool, busy: u64, t0: u64) -> Vec<u8> {
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(4 * 1024))
        .profile("ros1");
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let schema = w
        .register_schema("pkg/Msg", "ros1msg", b"int32 x\n")
        .unwrap();
    let mut ids = Vec::new();
    for topic in ["/a", "/b", "/c"] {
        ids.push(
            w.register_channel(topic, "ros1", schema, BTreeMap::new())
                .unwrap(),
        );
    }
    for i in 0..900u64 {
        let data: Vec<u8> = (0..(i % 70)).map(|j| (i * 3 + j) as u8).collect();
        let back = if overlap && i % 10 == 9 { 5_000 } else { 0 };
        w.write_message(&Message {
            channel_id: ids[(i % busy) as usize],
            sequence: i as u32,
            log_time: t0 + i * 100 - back,
            publish_time: i,
            data: &data,
        })
        .unwrap();
    }
    w.finish().unwrap()
}

fn convert_to(
    input: &[u8],
    compression: Compression,
    options: ConvertOptions<'_>,
) -> (Vec<u8>, robolog::ConvertReport) {
    let log = open_bytes(input.to_vec()).unwrap();
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(4 * 1024));
    let mut out = create_writer(Output::memory(), WriterOptions::Mcap(opts)).unwrap();
    let report = convert(&log, &mut *out, options).unwrap();
    (out.finish().unwrap().data.unwrap(), report)
}

/// (topic, sequence, log time, data) of every message, in `order`.
fn messages(file: &[u8], order: Order) -> Vec<(String, Option<u32>, u64, Vec<u8>)> {
    let log: Log = open_bytes(file.to_vec()).unwrap();
    log.messages()
        .order(order)
        .iter()
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                m.channel.topic.clone(),
                m.sequence,
                m.log_time_ns,
                m.data.to_vec(),
            )
        })
        .collect()
}

fn chunk_records(file: &[u8]) -> Vec<Vec<u8>> {
    let reader = McapReader::open(Bytes::from(file.to_vec())).unwrap();
    let mut chunks: Vec<ChunkIndex<'static>> = reader.summary().chunk_indexes.clone();
    chunks.sort_by_key(|c| c.chunk_start_offset);
    chunks
        .iter()
        .map(|c| {
            let start = c.chunk_start_offset as usize;
            file[start..start + c.chunk_length as usize].to_vec()
        })
        .collect()
}

fn statistics(file: &[u8]) -> robolog_mcap::Statistics {
    let reader = McapReader::open(Bytes::from(file.to_vec())).unwrap();
    reader.summary().statistics.clone().unwrap()
}

fn assert_checks_clean(file: &[u8]) {
    let errors: Vec<_> = robolog_mcap::check(file)
        .into_iter()
        .filter(|p| p.severity == robolog::framing::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_whole_copy_in_file_order_copies_every_chunk_byte_for_byte() {
    let input = source(Compression::Zstd, true);
    let (copied, report) = convert_to(
        &input,
        Compression::Zstd,
        ConvertOptions::new().order(Order::File),
    );
    let in_chunks = chunk_records(&input);
    assert_eq!(report.chunks_copied, in_chunks.len() as u64);
    assert_eq!(report.messages, 900);
    assert_eq!(chunk_records(&copied), in_chunks);
    // The same as decoding every chunk (another compression cannot copy any).
    let (rewritten, report) = convert_to(
        &input,
        Compression::Lz4,
        ConvertOptions::new().order(Order::File),
    );
    assert_eq!(report.chunks_copied, 0);
    assert_eq!(report.messages, 900);
    for order in [Order::File, Order::LogTime] {
        assert_eq!(messages(&copied, order), messages(&rewritten, order));
        assert_eq!(messages(&copied, order), messages(&input, order));
    }
    let (a, b) = (statistics(&copied), statistics(&rewritten));
    assert_eq!(a.message_count, 900);
    assert_eq!(a.channel_message_counts, b.channel_message_counts);
    assert_eq!(
        (a.message_start_time, a.message_end_time),
        (b.message_start_time, b.message_end_time)
    );
    assert_eq!(a.channel_count, 3);
    assert_eq!(a.schema_count, 1);
    assert_checks_clean(&copied);
    let log = open_bytes(copied).unwrap();
    assert_eq!(log.format(), Format::Mcap);
    assert_eq!(log.summary().unwrap().properties["profile"], "ros1");
}

#[test]
fn log_time_order_copies_chunks_that_do_not_overlap_only() {
    let sorted = source(Compression::Zstd, false);
    let (copied, report) = convert_to(&sorted, Compression::Zstd, ConvertOptions::new());
    assert_eq!(report.chunks_copied, chunk_records(&sorted).len() as u64);
    assert_eq!(chunk_records(&copied), chunk_records(&sorted));
    assert_eq!(
        messages(&copied, Order::File),
        messages(&sorted, Order::LogTime)
    );
    // Overlapping chunks: log-time order needs every message decoded.
    let overlapping = source(Compression::Zstd, true);
    let (sorted_out, report) = convert_to(&overlapping, Compression::Zstd, ConvertOptions::new());
    assert_eq!(report.chunks_copied, 0);
    assert_eq!(
        messages(&sorted_out, Order::File),
        messages(&overlapping, Order::LogTime)
    );
}

#[test]
fn a_filter_that_selects_part_of_a_chunk_rewrites_that_chunk() {
    let input = source(Compression::Zstd, false);
    let in_chunks = chunk_records(&input);
    // Every chunk holds all three topics: none is kept whole.
    let (out, report) = convert_to(
        &input,
        Compression::Zstd,
        ConvertOptions::new()
            .order(Order::File)
            .filter(Filter::new().topics(["/a", "/b"])),
    );
    assert_eq!(report.chunks_copied, 0);
    assert_eq!(report.messages, 600);
    let expected: Vec<_> = messages(&input, Order::File)
        .into_iter()
        .filter(|m| m.0 != "/c")
        .collect();
    assert_eq!(messages(&out, Order::File), expected);
    assert!(chunk_records(&out).iter().all(|c| !in_chunks.contains(c)));
    assert_eq!(statistics(&out).message_count, 600);
    assert_checks_clean(&out);
}

#[test]
fn a_time_range_copies_the_chunks_inside_it_and_rewrites_those_it_cuts() {
    let input = source(Compression::Zstd, false);
    let in_chunks = chunk_records(&input);
    let all = messages(&input, Order::File);
    // From the middle of the second chunk to the middle of the second-to-last.
    let reader = McapReader::open(Bytes::from(input.clone())).unwrap();
    let mut indexes = reader.summary().chunk_indexes.clone();
    indexes.sort_by_key(|c| c.chunk_start_offset);
    let n = indexes.len();
    assert!(n >= 6, "{n} chunks");
    let mid = |c: &ChunkIndex<'_>| (c.message_start_time + c.message_end_time) / 2;
    let (start, end) = (mid(&indexes[1]), mid(&indexes[n - 2]));
    for order in [Order::File, Order::LogTime] {
        let (out, report) = convert_to(
            &input,
            Compression::Zstd,
            ConvertOptions::new()
                .order(order)
                .filter(Filter::new().time_range(start..=end)),
        );
        // The chunks strictly inside the range are copied, the two it cuts rewritten.
        assert_eq!(report.chunks_copied, (n - 4) as u64, "{order:?}");
        let expected: Vec<_> = all
            .iter()
            .filter(|m| (start..=end).contains(&m.2))
            .cloned()
            .collect();
        assert_eq!(report.messages, expected.len() as u64);
        assert_eq!(messages(&out, Order::File), expected);
        let out_chunks = chunk_records(&out);
        for chunk in &in_chunks[2..n - 2] {
            assert!(out_chunks.contains(chunk));
        }
        assert!(!out_chunks.contains(&in_chunks[1]));
        assert!(!out_chunks.contains(&in_chunks[n - 2]));
        let stats = statistics(&out);
        assert_eq!(stats.message_count, expected.len() as u64);
        assert_eq!(
            (stats.message_start_time, stats.message_end_time),
            (expected[0].2, expected.last().unwrap().2)
        );
        let mut counts = BTreeMap::new();
        for m in &expected {
            *counts.entry(m.0.clone()).or_insert(0u64) += 1;
        }
        let log = open_bytes(out.clone()).unwrap();
        for entry in &log.summary().unwrap().channels {
            assert_eq!(
                entry.message_count, counts[&entry.channel.topic],
                "{}",
                entry.channel.topic
            );
        }
        assert_checks_clean(&out);
    }
}

#[test]
fn a_chunk_that_declares_a_channel_the_filter_leaves_out_is_rewritten() {
    // /c has no messages, but the first chunk declares it (with /a and /b, which have their
    // messages there too): without /c, the first chunk's messages are all kept, yet copying it
    // would bring /c's channel record into the output.
    let input = source_on(Compression::Zstd, false, 2, 1_000_000);
    let in_chunks = chunk_records(&input);
    let (out, report) = convert_to(
        &input,
        Compression::Zstd,
        ConvertOptions::new()
            .order(Order::File)
            .filter(Filter::new().exclude_topics(["/c"])),
    );
    assert_eq!(report.chunks_copied, in_chunks.len() as u64 - 1);
    assert_eq!(report.messages, 900);
    let out_chunks = chunk_records(&out);
    assert!(!out_chunks.contains(&in_chunks[0]));
    assert_eq!(
        out_chunks[out_chunks.len() - (in_chunks.len() - 1)..],
        in_chunks[1..]
    );
    let mut linear = robolog_mcap::LinearReader::new(Bytes::from(out.clone()));
    while let Some(record) = linear.next_record() {
        if let robolog_mcap::Record::Channel(c) = record.unwrap() {
            assert_ne!(c.topic, "/c");
        }
    }
    assert_eq!(messages(&out, Order::File), messages(&input, Order::File));
    assert_checks_clean(&out);
}

fn merge_to(inputs: &[&[u8]], compression: Compression) -> (Vec<u8>, robolog::ConvertReport) {
    let logs: Vec<Log> = inputs
        .iter()
        .map(|i| open_bytes(i.to_vec()).unwrap())
        .collect();
    let refs: Vec<&Log> = logs.iter().collect();
    let opts = WriteOptions::new()
        .compression(compression)
        .chunk_size(Some(4 * 1024));
    let mut out = create_writer(Output::memory(), WriterOptions::Mcap(opts)).unwrap();
    let report = merge(&refs, &mut *out, ConvertOptions::new()).unwrap();
    (out.finish().unwrap().data.unwrap(), report)
}

#[test]
fn a_merge_of_files_that_follow_each_other_in_time_copies_their_chunks() {
    // The later file first: the merge puts its chunks after the other's.
    let later = source_on(Compression::Zstd, false, 3, 5_000_000);
    let earlier = source_on(Compression::Zstd, false, 3, 1_000_000);
    let (merged, report) = merge_to(&[&later, &earlier], Compression::Zstd);
    let mut expected_chunks = chunk_records(&earlier);
    expected_chunks.extend(chunk_records(&later));
    assert_eq!(report.chunks_copied, expected_chunks.len() as u64);
    assert_eq!(report.messages, 1800);
    assert_eq!(chunk_records(&merged), expected_chunks);
    let (decoded, report) = merge_to(&[&later, &earlier], Compression::Lz4);
    assert_eq!(report.chunks_copied, 0);
    assert_eq!(
        messages(&merged, Order::File),
        messages(&decoded, Order::File)
    );
    let mut expected = messages(&earlier, Order::LogTime);
    expected.extend(messages(&later, Order::LogTime));
    assert_eq!(messages(&merged, Order::File), expected);
    let stats = statistics(&merged);
    assert_eq!(stats.message_count, 1800);
    assert_eq!(stats.channel_count, 3, "the same channels are shared");
    assert_checks_clean(&merged);
    // Files that overlap in time are merged message by message.
    let overlapping = source_on(Compression::Zstd, false, 3, 1_050_000);
    let (merged, report) = merge_to(&[&earlier, &overlapping], Compression::Zstd);
    assert_eq!(report.chunks_copied, 0);
    let (decoded, _) = merge_to(&[&earlier, &overlapping], Compression::Lz4);
    assert_eq!(
        messages(&merged, Order::File),
        messages(&decoded, Order::File)
    );
}
