//! The two readers of the record stream follow one set of rules: fed the same damaged 2.0 bag,
//! the in-memory scan (opening a bag without its index, and reindexing it) and the stream
//! reader return the same messages at the same positions, and report the same problems at the
//! same offsets and the same counts of what was lost. A 1.2 bag is walked by the stream reader
//! whichever way it is read; the last test checks that through its zero runs.

use std::io::Cursor;

use robolog_rosbag::{
    Bag, Bytes, ChunkCompression, Input, OpenOptions, Order, Position, Problem, ProblemKind,
    ReindexMode, ReindexOptions, Severity, StreamOptions, StreamReader, WriteOptions, Writer,
    reindex, reindex_stream,
};

/// The record and chunk limit both readers are given.
const LIMIT: usize = 1 << 24;

/// What a reader gave: messages in file order, problems, and the counts of the salvaged and
/// dropped messages, the incomplete records and the bytes dropped.
#[derive(Debug, PartialEq)]
struct Read {
    messages: Vec<(u32, u64, Vec<u8>, Position)>,
    problems: Vec<Problem>,
    counts: [u64; 4],
}

/// A bag of several chunks, its index section cut off and `index_pos` zeroed (what a recorder
/// that was killed leaves), with where its chunks are: record offset, data offset, data length.
struct Unindexed {
    bytes: Vec<u8>,
    chunks: Vec<(usize, usize, usize)>,
    messages: usize,
}

fn unindexed(compression: ChunkCompression) -> Unindexed {
    let options = WriteOptions::new()
        .compression(compression)
        .chunk_threshold(3000);
    let mut writer = Writer::with_options(Cursor::new(Vec::new()), options).unwrap();
    let a = writer
        .add_connection(
            "/a",
            "std_msgs/Bytes",
            "0123456789abcdef0123456789abcdef",
            "",
        )
        .unwrap();
    let b = writer
        .add_connection(
            "/b",
            "std_msgs/Bytes",
            "fedcba9876543210fedcba9876543210",
            "",
        )
        .unwrap();
    let messages = 40;
    for i in 0..messages {
        let data: Vec<u8> = (0..100 + 7 * i).map(|j| (i * 31 + j) as u8).collect();
        writer
            .write(if i % 3 == 0 { b } else { a }, 1_000 + i as u64, &data)
            .unwrap();
    }
    let mut bytes = writer.finish().unwrap().into_inner();
    let bag = Bag::open(bytes.clone()).unwrap();
    let chunks: Vec<(usize, usize, usize)> = bag
        .chunks()
        .zip(bag.chunk_headers())
        .map(|(info, header)| {
            let header = header.unwrap();
            (
                info.position as usize,
                header.data_offset as usize,
                header.compressed_size as usize,
            )
        })
        .collect();
    assert!(chunks.len() >= 4, "{compression}: {} chunks", chunks.len());
    let field = b"index_pos=";
    let at = bytes.windows(field.len()).position(|w| w == field).unwrap() + field.len();
    let index_pos = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()) as usize;
    bytes[at..at + 8].fill(0);
    bytes.truncate(index_pos);
    Unindexed {
        bytes,
        chunks,
        messages: messages as usize,
    }
}

/// What the in-memory reader gives (opening the bag, and reindexing it in salvage mode). Opening
/// reports `leading` problems before the reindex's: a 2.0 bag without its index says so first; a
/// 1.2 bag without a file header has no index to miss.
fn by_scan(bytes: &[u8], leading: usize) -> Read {
    let options = OpenOptions::new().max_chunk_size(LIMIT);
    let in_file_order = |bag: &Bag| -> Vec<_> {
        bag.messages()
            .order(Order::File)
            .threads(0)
            .into_iter()
            .map(|m| {
                let m = m.unwrap();
                (m.conn, m.time_ns, m.data.to_vec(), m.position)
            })
            .collect()
    };
    let bag = Bag::open_with(Bytes::copy_from_slice(bytes), options.clone()).unwrap();
    let messages = in_file_order(&bag);
    // Opened from a file read by position, the scan streams through a window: the same.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bag.bag");
    std::fs::write(&path, bytes).unwrap();
    let by_position = Bag::open_with(Input::open(&path).unwrap(), options).unwrap();
    assert_eq!(by_position.problems(), bag.problems());
    assert_eq!(in_file_order(&by_position), messages);
    let reindex_options = ReindexOptions::new()
        .mode(ReindexMode::Salvage)
        .max_chunk_size(LIMIT);
    let mut out = Cursor::new(Vec::new());
    let report = reindex(&Bytes::copy_from_slice(bytes), &mut out, &reindex_options).unwrap();
    assert_eq!(bag.problems()[leading..], report.problems[..]);
    // Reindexed from a stream, through a window: the same bag and the same report.
    let mut streamed = Cursor::new(Vec::new());
    let stream_report = reindex_stream(bytes, &mut streamed, &reindex_options).unwrap();
    assert_eq!(stream_report, report);
    assert!(streamed.get_ref() == out.get_ref());
    Read {
        messages,
        problems: report.problems,
        counts: [
            report.salvaged_messages,
            report.dropped_messages,
            report.incomplete_records,
            report.bytes_dropped,
        ],
    }
}

fn by_stream(bytes: &[u8]) -> Read {
    let options = StreamOptions::new().max_record_size(LIMIT as u64);
    let mut reader = StreamReader::with_options(bytes, options).unwrap();
    let mut messages = Vec::new();
    while let Some(m) = reader.next_message().unwrap() {
        messages.push((m.conn, m.time_ns, m.data.to_vec(), m.position));
    }
    let report = reader.report();
    Read {
        messages,
        problems: report.problems.clone(),
        counts: [
            report.salvaged_messages,
            report.dropped_messages,
            report.incomplete_records,
            report.bytes_dropped,
        ],
    }
}

/// Reads `bytes` both ways, checks that the readers agree, and returns what they read.
fn agree(case: &str, bytes: &[u8]) -> Read {
    let scanned = by_scan(bytes, 1);
    let streamed = by_stream(bytes);
    assert_eq!(
        scanned, streamed,
        "{case}: the scan and the stream disagree"
    );
    scanned
}

/// The one problem of a read, as (severity, kind, offset, message).
fn only_problem(case: &str, read: &Read) -> (Severity, ProblemKind, u64, String) {
    assert_eq!(read.problems.len(), 1, "{case}: {:?}", read.problems);
    let p = &read.problems[0];
    (p.severity, p.kind, p.offset.unwrap(), p.message.clone())
}

const COMPRESSIONS: [ChunkCompression; 2] = [ChunkCompression::None, ChunkCompression::Lz4];

#[test]
fn an_undamaged_unindexed_bag_reads_alike_without_problems() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let read = agree("intact", &bag.bytes);
        assert_eq!(read.messages.len(), bag.messages, "{compression}");
        assert_eq!(
            (read.problems.len(), read.counts),
            (0, [0; 4]),
            "{compression}"
        );
    }
}

#[test]
fn zeros_between_records_are_skipped_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let at = bag.chunks[1].0;
        let mut bytes = bag.bytes.clone();
        bytes.splice(at..at, [0; 100]);
        let read = agree("zeros in the middle", &bytes);
        assert_eq!(read.messages.len(), bag.messages, "{compression}");
        assert_eq!(
            only_problem("zeros in the middle", &read),
            (
                Severity::Warning,
                ProblemKind::Malformed,
                at as u64,
                "skipped 100 zero bytes between records".to_owned()
            )
        );
    }
}

#[test]
fn zeros_at_the_end_are_reported_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let mut bytes = bag.bytes.clone();
        bytes.extend([0; 64]);
        let read = agree("zeros at the end", &bytes);
        assert_eq!(read.messages.len(), bag.messages, "{compression}");
        assert_eq!(
            only_problem("zeros at the end", &read),
            (
                Severity::Warning,
                ProblemKind::Malformed,
                bag.bytes.len() as u64,
                "the bag ends with 64 zero bytes".to_owned()
            )
        );
    }
}

#[test]
fn a_record_cut_by_the_end_stops_both_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        // Inside the first index record after chunk 1.
        let (_, data, len) = bag.chunks[1];
        let cut = data + len + 10;
        let read = agree("cut record", &bag.bytes[..cut]);
        let kinds: Vec<_> = read.problems.iter().map(|p| (p.severity, p.kind)).collect();
        // The chunk's index records are missing, then the cut one ends the reading.
        assert_eq!(
            kinds,
            [
                (Severity::Warning, ProblemKind::Index),
                (Severity::Error, ProblemKind::Truncated)
            ],
            "{compression}: {:?}",
            read.problems
        );
        assert_eq!(read.problems[1].offset, Some((data + len) as u64));
        assert_eq!(read.counts, [0, 0, 1, 10], "{compression}");
        assert!(read.messages.len() < bag.messages, "{compression}");
    }
}

#[test]
fn a_bad_header_length_stops_both_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let at = bag.chunks[2].0;
        let mut bytes = bag.bytes.clone();
        bytes[at..at + 4].copy_from_slice(&0x7fff_0000u32.to_le_bytes());
        let read = agree("bad header length", &bytes);
        let (severity, kind, offset, message) = only_problem("bad header length", &read);
        assert_eq!(
            (severity, kind, offset),
            (Severity::Error, ProblemKind::Malformed, at as u64)
        );
        assert!(message.contains("limit"), "{message}");
        assert!(
            message.ends_with(&format!(
                "the remaining {} bytes were not read",
                bytes.len() - at
            )),
            "{message}"
        );
        assert_eq!(read.counts[3], (bytes.len() - at) as u64);
    }
}

#[test]
fn a_bad_op_stops_both_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let (at, data, _) = bag.chunks[2];
        let mut bytes = bag.bytes.clone();
        let op = at
            + bytes[at..data]
                .windows(4)
                .position(|w| w == b"op=\x05")
                .unwrap()
            + 3;
        bytes[op] = 0x09;
        let read = agree("bad op", &bytes);
        let (_, kind, offset, message) = only_problem("bad op", &read);
        assert_eq!((kind, offset), (ProblemKind::Malformed, at as u64));
        assert!(message.starts_with("unknown record op 0x09"), "{message}");
    }
}

#[test]
fn a_chunk_cut_short_is_salvaged_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let (at, data, len) = bag.chunks[2];
        let read = agree("chunk cut short", &bag.bytes[..data + len / 2]);
        let (severity, kind, offset, message) = only_problem("chunk cut short", &read);
        assert_eq!(
            (severity, kind, offset),
            (Severity::Error, ProblemKind::Truncated, at as u64)
        );
        assert!(
            message.starts_with("chunk cut short by the end of the bag"),
            "{message}"
        );
        let before: usize = read
            .messages
            .iter()
            .filter(|m| match m.3 {
                Position::File(p) => (p as usize) < at,
                Position::Chunk { chunk, .. } => (chunk as usize) < at,
            })
            .count();
        assert_eq!(read.counts[0] as usize, read.messages.len() - before);
    }
}

#[test]
fn an_unterminated_chunk_is_salvaged_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let (at, data, _) = bag.chunks[bag.chunks.len() - 1];
        let mut bytes = bag.bytes.clone();
        bytes[data - 4..data].fill(0);
        let read = agree("unterminated chunk", &bytes);
        let (_, kind, offset, message) = only_problem("unterminated chunk", &read);
        assert_eq!((kind, offset), (ProblemKind::Truncated, at as u64));
        assert!(
            message.starts_with("unterminated chunk (size 0)"),
            "{message}"
        );
        assert!(read.counts[0] > 0, "{compression}: {:?}", read.counts);
    }
}

#[test]
fn a_corrupt_chunk_is_salvaged_and_reading_goes_on_alike() {
    for compression in COMPRESSIONS {
        let bag = unindexed(compression);
        let (at, data, len) = bag.chunks[1];
        let mut bytes = bag.bytes.clone();
        // Uncompressed: the length of the chunk's first record; LZ4: compressed bytes.
        let from = match compression {
            ChunkCompression::None => data,
            _ => data + len / 2,
        };
        bytes[from..from + 16].fill(0xff);
        let read = agree("corrupt chunk", &bytes);
        assert!(
            read.problems
                .iter()
                .any(|p| p.offset == Some(at as u64) && p.severity == Severity::Error),
            "{compression}: {:?}",
            read.problems
        );
        // Every message of the chunks after the corrupt one is there.
        let last = bag.chunks[bag.chunks.len() - 1].0;
        assert!(
            read.messages.iter().any(|m| match m.3 {
                Position::File(p) => p as usize > last,
                Position::Chunk { chunk, .. } => chunk as usize == last,
            }),
            "{compression}"
        );
    }
}

#[test]
fn zeros_in_a_v12_bag_are_skipped_by_both_of_its_readers() {
    let original = robolog_testkit::testdata::read("bags/generated/ros_comm/v12_noheader.bag");
    let intact = by_stream(&original);
    assert!(intact.messages.len() >= 3 && intact.problems.is_empty());
    // Before the record of the second message, and after the last record.
    let Position::File(second) = intact.messages[1].3 else {
        panic!("1.2 messages are at file positions");
    };
    let second = second as usize;
    let mut bytes = original.clone();
    bytes.splice(second..second, [0; 100]);
    bytes.extend([0; 64]);

    let read = by_scan(&bytes, 0);
    assert_eq!(read, by_stream(&bytes), "the scan and the stream disagree");
    let shifted = |p: Position| match p {
        Position::File(at) if at as usize >= second => Position::File(at + 100),
        other => other,
    };
    let expected: Vec<_> = intact
        .messages
        .iter()
        .map(|(conn, time, data, at)| (*conn, *time, data.clone(), shifted(*at)))
        .collect();
    assert_eq!(read.messages, expected);
    let found: Vec<_> = read
        .problems
        .iter()
        .map(|p| (p.severity, p.offset, p.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                Severity::Warning,
                Some(second as u64),
                "skipped 100 zero bytes between records"
            ),
            (
                Severity::Warning,
                Some(original.len() as u64 + 100),
                "the bag ends with 64 zero bytes"
            ),
        ]
    );
    assert_eq!(read.counts, [0; 4]);
}
