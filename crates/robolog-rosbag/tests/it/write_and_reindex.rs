//! The writer and reindex against the ros_comm golden files: byte-identical where ros_comm's
//! output is deterministic, more messages than ros_comm where salvage can do better.

use std::io::Cursor;

use robolog_rosbag::{
    Bag, ChunkCompression, IndexStatus, Input, Order, ProblemKind, ReindexMode, ReindexOptions,
    ReindexReport, WriteOptions, Writer, reindex_input, reindex_stream,
};
use robolog_testkit::testdata;

fn read(path: &str) -> Vec<u8> {
    testdata::read(format!("bags/generated/{path}"))
}

fn open(bytes: Vec<u8>) -> Bag {
    Bag::open(bytes).unwrap()
}

/// (conn, time, data) in file order.
fn contents(bag: &Bag) -> Vec<(u32, u64, Vec<u8>)> {
    bag.messages()
        .order(Order::File)
        .into_iter()
        .map(|m| {
            let m = m.unwrap();
            (m.conn, m.time_ns, m.data.to_vec())
        })
        .collect()
}

/// Reindexes `bag` three ways, which must agree byte for byte and report alike: in memory
/// ([`robolog_rosbag::reindex`]), read by position from a file that is not in memory
/// ([`reindex_input`]), and streamed from a reader that gives a few bytes at a time
/// ([`reindex_stream`]).
fn reindex(
    bag: &robolog_rosbag::Bytes,
    out: &mut Cursor<Vec<u8>>,
    options: &ReindexOptions,
) -> robolog_rosbag::Result<ReindexReport> {
    let report = robolog_rosbag::reindex(bag, &mut *out, options)?;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.bag");
    std::fs::write(&path, bag).unwrap();
    let input = Input::open(&path).unwrap();
    assert!(input.in_memory().is_none());
    let mut by_position = Cursor::new(Vec::new());
    let positional = reindex_input(&input, &mut by_position, options).unwrap();
    assert_eq!(positional, report, "read by position");
    assert!(by_position.get_ref() == out.get_ref(), "read by position");
    let mut streamed = Cursor::new(Vec::new());
    let trickle = Trickle(&bag[..]);
    let stream = reindex_stream(trickle, &mut streamed, options).unwrap();
    assert_eq!(stream, report, "streamed");
    assert!(streamed.get_ref() == out.get_ref(), "streamed");
    Ok(report)
}

/// A reader that gives at most 1,000 bytes a call, so that records straddle reads.
struct Trickle<'a>(&'a [u8]);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1000).min(self.0.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

/// Rewrites `bag` with our writer: same connections (all fields, in order), same messages in
/// file order.
fn rewrite(bag: &Bag, options: WriteOptions) -> Vec<u8> {
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    for c in bag.connections() {
        writer.insert_connection(c.clone()).unwrap();
    }
    for (conn, time, data) in contents(bag) {
        writer.write(conn, time, &data).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

#[test]
fn writer_output_is_byte_identical_to_ros_comm_python() {
    let reference = read("ros_comm/ref_none.bag");
    let bag = open(reference.clone());
    let ours = rewrite(&bag, WriteOptions::new().chunk_threshold(4096));
    assert_eq!(ours.len(), reference.len());
    assert!(
        ours == reference,
        "uncompressed output differs from ref_none.bag"
    );

    let reference = read("ros_comm/ref_bz2.bag");
    let ours = rewrite(
        &bag,
        WriteOptions::new()
            .chunk_threshold(4096)
            .compression(ChunkCompression::Bz2),
    );
    assert!(ours == reference, "bz2 output differs from ref_bz2.bag");
}

#[test]
fn lz4_chunks_use_the_roslz4_frame_profile() {
    let bag = open(read("ros_comm/ref_none.bag"));
    let ours = rewrite(
        &bag,
        WriteOptions::new()
            .chunk_threshold(4096)
            .compression(ChunkCompression::Lz4),
    );
    let back = open(ours.clone());
    assert_eq!(contents(&back), contents(&bag));
    // Same layout as ros_comm's lz4 bag, chunk for chunk.
    let reference = open(read("ros_comm/ref_lz4.bag"));
    let sizes = |b: &Bag| {
        b.chunk_headers()
            .map(|h| h.unwrap().uncompressed_size)
            .collect::<Vec<_>>()
    };
    assert_eq!(sizes(&back), sizes(&reference));
    for (chunk, header) in back.chunks().zip(back.chunk_headers()) {
        let header = header.unwrap();
        assert_eq!(header.compression, ChunkCompression::Lz4);
        // CHUNK header (41 bytes + 4 + 4 for lz4 is 40) then the frame.
        let data_start = chunk.position as usize + 4 + 40 + 4;
        assert_eq!(header.data_offset, data_start as u64);
        // The data length field just before the data.
        assert_eq!(
            &ours[data_start - 4..data_start],
            &(header.compressed_size as u32).to_le_bytes()
        );
        assert_eq!(
            &ours[data_start..data_start + 6],
            &[0x04, 0x22, 0x4D, 0x18, 0x64, 0x60]
        );
    }
}

#[test]
fn reindex_of_an_unindexed_bag_reproduces_ros_comm_byte_for_byte() {
    let mut out = Cursor::new(Vec::new());
    let report = reindex(
        &read("ros_comm/v20_unindexed.bag").into(),
        &mut out,
        &ReindexOptions::new(),
    )
    .unwrap();
    assert!(out.get_ref() == &read("ros_comm/v20_unindexed_reindexed.bag"));
    assert!(out.get_ref() == &read("ros_comm/ref_none.bag"));
    assert_eq!((report.chunks, report.messages), (9, 150));
    assert!(!report.lost_data(), "{report:?}");
}

#[test]
fn reindex_of_a_killed_bag_matches_ros_comm_or_salvages_more() {
    let killed = read("ros_comm/v20_killed.bag");
    let mut out = Cursor::new(Vec::new());
    let report = reindex(&killed.clone().into(), &mut out, &ReindexOptions::new()).unwrap();
    assert!(out.get_ref() == &read("ros_comm/v20_killed_reindexed.bag"));
    assert_eq!((report.chunks, report.messages), (4, 65));
    // The 11 complete messages of the unterminated chunk, and the one cut in half.
    assert_eq!(
        (report.dropped_messages, report.incomplete_records),
        (11, 1)
    );
    assert!(report.lost_data());

    let mut out = Cursor::new(Vec::new());
    let salvage = ReindexOptions::new().mode(ReindexMode::Salvage);
    let report = reindex(&killed.into(), &mut out, &salvage).unwrap();
    assert_eq!((report.chunks, report.messages), (5, 76));
    assert_eq!((report.salvaged_messages, report.dropped_messages), (11, 0));
    assert_eq!(report.incomplete_records, 1);
    // 2138 bytes of chunk data were present, 2032 of them complete records.
    assert_eq!(report.bytes_dropped, 2138 - 2032);
    let recovered = open(out.into_inner());
    assert_eq!(recovered.index_status(), &IndexStatus::Used);
    assert!(recovered.problems().is_empty());
    // The first 76 messages of the complete bag, in the same order.
    let full = contents(&open(read("ros_comm/ref_none.bag")));
    assert_eq!(contents(&recovered), full[..76]);
    // The salvaged chunk is a proper one: ros_comm's own first four chunks are kept verbatim.
    let ros = read("ros_comm/v20_killed_reindexed.bag");
    let first_chunk_end = 22805;
    assert_eq!(
        recovered.input().read_all().unwrap()[13 + 4104..first_chunk_end],
        ros[13 + 4104..first_chunk_end]
    );
}

#[test]
fn reindex_of_v12_bags_converts_them_like_ros_comm() {
    let expected = read("ros_comm/v12_noheader_reindexed.bag");
    for path in ["v12_noheader.bag", "v12_indexed.bag", "v12_unindexed.bag"] {
        let mut out = Cursor::new(Vec::new());
        let report = reindex(
            &read(&format!("ros_comm/{path}")).into(),
            &mut out,
            &ReindexOptions::new(),
        )
        .unwrap();
        assert!(out.get_ref() == &expected, "{path}");
        assert_eq!((report.chunks, report.messages), (1, 150), "{path}");
        assert!(!report.lost_data(), "{path}: {report:?}");
    }
}

/// A bag with a few large chunks, so that their LZ4 frames and bzip2 streams span several
/// blocks.
fn big_bag(compression: ChunkCompression, level: u32) -> Vec<u8> {
    let options = WriteOptions::new()
        .compression(compression)
        .bz2_level(level)
        .chunk_threshold(3 << 20);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let conn = writer
        .add_connection(
            "/blob",
            "std_msgs/UInt8MultiArray",
            "82373f1612381bb6ee473b5cd6f5d89c",
            "",
        )
        .unwrap();
    let mut state = 0x1234_5678u32;
    for i in 0..1200u64 {
        // Pseudo-random bytes that do not compress well, so blocks stay full.
        let data: Vec<u8> = (0..4000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                (state % 61) as u8
            })
            .collect();
        writer.write(conn, 1_000_000_000 + i, &data).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// Turns a finished bag into what a killed recorder leaves: the file header zeroed, the last
/// chunk's header a placeholder, and its data cut at `keep` bytes.
fn kill(bag: &[u8], keep: usize) -> (Vec<u8>, u64) {
    let parsed = open(bag.to_vec());
    let last = parsed.chunks().last().unwrap().clone();
    let earlier: u64 = parsed
        .chunks()
        .take(parsed.chunks().len() - 1)
        .flat_map(|c| c.message_counts.iter().map(|&(_, n)| u64::from(n)))
        .sum();
    let pos = last.position as usize;
    let header_len = u32::from_le_bytes(bag[pos..pos + 4].try_into().unwrap()) as usize;
    let data_start = pos + 4 + header_len + 4;
    let mut killed = bag[..data_start + keep].to_vec();
    // size = 0 in the chunk header (the field's value is the last 4 bytes of the header).
    killed[pos + 4 + header_len - 4..pos + 4 + header_len].fill(0);
    killed[pos + 4 + header_len..data_start].fill(0);
    // index_pos, conn_count, chunk_count = 0
    let fresh = Writer::new(Cursor::new(Vec::new()))
        .unwrap()
        .finish()
        .unwrap()
        .into_inner();
    killed[13..13 + 4104].copy_from_slice(&fresh[13..13 + 4104]);
    (killed, earlier)
}

#[test]
fn salvage_recovers_complete_blocks_of_killed_lz4_and_bz2_chunks() {
    for (compression, level) in [(ChunkCompression::Lz4, 9), (ChunkCompression::Bz2, 1)] {
        let bag = big_bag(compression, level);
        let full = contents(&open(bag.clone()));
        let last = open(bag.clone()).chunk_headers().last().unwrap().unwrap();
        // Keep about two thirds of the last chunk's compressed data.
        let (killed, earlier) = kill(&bag, (last.compressed_size * 2 / 3) as usize);

        let mut ros = Cursor::new(Vec::new());
        let report = reindex(&killed.clone().into(), &mut ros, &ReindexOptions::new()).unwrap();
        assert_eq!(report.messages, earlier, "{compression}");

        let mut out = Cursor::new(Vec::new());
        let salvage = ReindexOptions::new().mode(ReindexMode::Salvage);
        let report = reindex(&killed.clone().into(), &mut out, &salvage).unwrap();
        assert!(report.salvaged_messages > 0, "{compression}: {report:?}");
        assert_eq!(report.messages, earlier + report.salvaged_messages);
        let recovered = contents(&open(out.into_inner()));
        assert_eq!(recovered, full[..recovered.len()], "{compression}");
        // Opening the killed file directly gives the same messages.
        assert_eq!(contents(&open(killed)), recovered, "{compression}");
    }
}

#[test]
fn writer_rejects_bad_input() {
    let mut writer = Writer::new(Cursor::new(Vec::new())).unwrap();
    assert!(writer.write(7, 0, b"").is_err());
    let conn = writer.add_connection("/a", "t/T", "0", "").unwrap();
    assert!(writer.write(conn, u64::MAX, b"").is_err());
    let duplicate = robolog_rosbag::Connection::new(conn, "/b", "t/T", "0", "");
    assert!(writer.insert_connection(duplicate).is_err());
}

#[test]
fn v12_writer_reproduces_the_v12_test_file() {
    let reference = read("ros_comm/v12_indexed.bag");
    let bag = open(reference.clone());
    let mut writer = robolog_rosbag::V12Writer::new(Cursor::new(Vec::new())).unwrap();
    for c in bag.connections() {
        let id = writer
            .add_topic(&c.topic, &c.message_type, &c.md5sum, &c.message_definition)
            .unwrap();
        assert_eq!(id, c.id);
    }
    for (conn, time, data) in contents(&bag) {
        writer.write(conn, time, &data).unwrap();
    }
    let ours = writer.finish().unwrap().into_inner();
    assert!(ours == reference, "1.2 output differs from v12_indexed.bag");
}

/// A one-message-per-chunk, unindexed bag on two connections, and where each chunk (with its
/// index records) starts and ends.
fn chunk_per_message() -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let options = WriteOptions::new().chunk_threshold(1);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let md5 = "0123456789abcdef0123456789abcdef";
    let a = writer
        .add_connection("/a", "std_msgs/Bytes", md5, "")
        .unwrap();
    let b = writer
        .add_connection("/b", "std_msgs/Bytes", md5, "")
        .unwrap();
    for (i, conn) in [a, b, b, a].into_iter().enumerate() {
        writer.write(conn, 10 + i as u64, &[i as u8; 50]).unwrap();
    }
    let bag = writer.finish().unwrap().into_inner();
    let parsed = open(bag.clone());
    let mut starts: Vec<usize> = parsed.chunks().map(|c| c.position as usize).collect();
    assert_eq!(starts.len(), 4);
    let field = b"index_pos=";
    let at = bag.windows(field.len()).position(|w| w == field).unwrap() + field.len();
    let index_pos = u64::from_le_bytes(bag[at..at + 8].try_into().unwrap()) as usize;
    starts.push(index_pos);
    let chunks = starts.windows(2).map(|w| w[0]..w[1]).collect();
    let mut bytes = bag;
    bytes[at..at + 8].fill(0);
    bytes.truncate(index_pos);
    (bytes, chunks)
}

#[test]
fn a_connection_defined_after_its_messages_keeps_them_and_one_never_defined_drops_them() {
    let (bag, chunks) = chunk_per_message();
    let salvage = ReindexOptions::new().mode(ReindexMode::Salvage);
    // The third chunk (a message on /b, no definition) moved before the second (which
    // defines /b): a bag is read in file order, so /b's first message comes before /b.
    let mut swapped = bag[..chunks[1].start].to_vec();
    swapped.extend_from_slice(&bag[chunks[2].clone()]);
    swapped.extend_from_slice(&bag[chunks[1].clone()]);
    swapped.extend_from_slice(&bag[chunks[3].clone()]);
    let mut out = Cursor::new(Vec::new());
    let report = reindex(&swapped.into(), &mut out, &salvage).unwrap();
    assert_eq!((report.chunks, report.messages), (4, 4));
    assert!(!report.lost_data(), "{report:?}");
    let times: Vec<u64> = contents(&open(out.into_inner()))
        .into_iter()
        .map(|(_, t, _)| t)
        .collect();
    assert_eq!(times, [10, 12, 11, 13]);

    // Without the chunk that defines /b, its other message is dropped, and said so.
    let mut cut = bag[..chunks[1].start].to_vec();
    cut.extend_from_slice(&bag[chunks[2].start..chunks[3].end]);
    let mut out = Cursor::new(Vec::new());
    let report = reindex(&cut.into(), &mut out, &salvage).unwrap();
    assert_eq!((report.chunks, report.messages), (3, 2));
    assert_eq!(report.dropped_messages, 1);
    assert_eq!(report.problems.len(), 1, "{:?}", report.problems);
    assert_eq!(report.problems[0].kind, ProblemKind::Schema);
    assert_eq!(report.problems[0].offset, Some(chunks[1].start as u64));
    assert_eq!(open(out.into_inner()).summary().message_count, 2);
}
