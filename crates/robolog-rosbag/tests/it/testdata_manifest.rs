//! Every bag under testdata/bags/ against the expected results recorded in
//! testdata/bags/README.md (ros_comm / rosbags reader results) and the generator's description
//! (50 messages per topic at 100 Hz from t = 1 600 000 000 s, /imu 1 ns and /custom 2 ns after
//! /chatter, /chatter data = "hello {i}").

use std::collections::BTreeMap;

use robolog_rosbag::{Bag, Error, IndexStatus, Input, OpenOptions, Order, Version};
use robolog_testkit::testdata;

/// Per-topic message counts, as the README lists them.
type Counts = &'static [(&'static str, u64)];

const GENERATED: Counts = &[("/chatter", 50), ("/custom", 50), ("/imu", 50)];

const MANIFEST: &[(&str, Counts)] = &[
    ("generated/ros_comm/ref_none.bag", GENERATED),
    ("generated/ros_comm/ref_bz2.bag", GENERATED),
    ("generated/ros_comm/ref_lz4.bag", GENERATED),
    ("generated/ros_comm/v20_unindexed_reindexed.bag", GENERATED),
    ("generated/ros_comm/v12_noheader_reindexed.bag", GENERATED),
    ("generated/ros_comm/v12_indexed.bag", GENERATED),
    ("generated/ros_comm/v12_noheader.bag", GENERATED),
    (
        "generated/ros_comm/v20_killed_reindexed.bag",
        &[("/chatter", 22), ("/custom", 21), ("/imu", 22)],
    ),
    ("generated/rosbags/rosbags_none.bag", GENERATED),
    ("generated/rosbags/rosbags_bz2.bag", GENERATED),
    ("generated/rosbags/rosbags_lz4.bag", GENERATED),
    ("upstream/embag/array_test.bag", &[("/array_test", 20)]),
    ("upstream/embag/test_2.bag", &[("chatter", 2)]),
    (
        "upstream/rosbag.js/example-bz2.bag",
        &[
            ("/rosout", 10),
            ("/tf", 2688),
            ("/tf_static", 1),
            ("/turtle1/cmd_vel", 357),
            ("/turtle1/color_sensor", 1351),
            ("/turtle1/pose", 1344),
            ("/turtle2/cmd_vel", 208),
            ("/turtle2/color_sensor", 1344),
            ("/turtle2/pose", 1344),
        ],
    ),
    (
        "upstream/rosbag.js/example-unsorted-chunks.bag",
        &[("foo", 3)],
    ),
    ("upstream/rosbag.js/no-messages.bag", &[]),
    (
        "upstream/swri-bag-reader-java/Bool.bag",
        &[("/false_value", 1), ("/true_value", 1)],
    ),
    (
        "upstream/swri-bag-reader-java/PointCloud2.bag",
        &[("/pointcloud2", 1)],
    ),
];

const SWRI_ONE_MESSAGE: &[&str] = &[
    "Float32",
    "Float32MultiArray",
    "Float64",
    "Float64MultiArray",
    "Int16",
    "Int16MultiArray",
    "Int32",
    "Int32MultiArray",
    "Int64",
    "Int64MultiArray",
    "Int8",
    "Int8MultiArray",
    "UInt16",
    "UInt16MultiArray",
    "UInt32",
    "UInt32MultiArray",
    "UInt64",
    "UInt64MultiArray",
    "UInt8",
    "UInt8MultiArray",
];

fn open(path: &str) -> Bag {
    Bag::from_file(testdata::path(format!("bags/{path}"))).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn topic_counts(bag: &Bag) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for message in bag.messages() {
        let message = message.unwrap();
        let topic = bag.connection(message.conn).unwrap().topic.clone();
        *counts.entry(topic).or_insert(0) += 1;
    }
    counts
}

fn expected(counts: Counts) -> BTreeMap<String, u64> {
    counts.iter().map(|&(t, n)| (t.to_owned(), n)).collect()
}

#[test]
fn per_topic_counts_match_the_reference_readers() {
    let mut files: Vec<(String, Counts)> =
        MANIFEST.iter().map(|&(p, c)| (p.to_owned(), c)).collect();
    for name in SWRI_ONE_MESSAGE {
        files.push((
            format!("upstream/swri-bag-reader-java/{name}.bag"),
            &[("/data", 1)],
        ));
    }
    for (path, counts) in files {
        let bag = open(&path);
        assert_eq!(topic_counts(&bag), expected(counts), "{path}");
        // The summary agrees with what the messages say.
        let total: u64 = counts.iter().map(|c| c.1).sum();
        assert_eq!(bag.summary().message_count, total, "{path}");
        assert!(bag.problems().is_empty(), "{path}: {:?}", bag.problems());
    }
}

/// Expected (topic, time, chatter data) of message `j` of the generated bags in time order.
fn generated_message(j: usize) -> (&'static str, u64, Option<Vec<u8>>) {
    let (i, k) = (j / 3, j % 3);
    let time = 1_600_000_000_000_000_000 + i as u64 * 10_000_000 + k as u64;
    match k {
        0 => {
            let text = format!("hello {i}");
            let mut data = (text.len() as u32).to_le_bytes().to_vec();
            data.extend_from_slice(text.as_bytes());
            ("/chatter", time, Some(data))
        }
        1 => ("/imu", time, None),
        _ => ("/custom", time, None),
    }
}

fn messages(bag: &Bag, order: Order) -> Vec<(String, u64, Vec<u8>)> {
    bag.messages()
        .order(order)
        .into_iter()
        .map(|m| {
            let m = m.unwrap();
            let topic = bag.connection(m.conn).unwrap().topic.clone();
            (topic, m.time_ns, m.data.to_vec())
        })
        .collect()
}

fn check_generated(path: &str, bag: &Bag, count: usize) {
    let got = messages(bag, Order::LogTime);
    assert_eq!(got.len(), count, "{path}");
    for (j, (topic, time, data)) in got.iter().enumerate() {
        let (want_topic, want_time, want_data) = generated_message(j);
        assert_eq!(
            (topic.as_str(), *time),
            (want_topic, want_time),
            "{path} message {j}"
        );
        if let Some(want) = want_data {
            assert_eq!(data, &want, "{path} message {j}");
        }
    }
}

#[test]
fn generated_bags_hold_the_same_messages_byte_for_byte() {
    let reference = messages(&open("generated/ros_comm/ref_none.bag"), Order::LogTime);
    check_generated("ref_none", &open("generated/ros_comm/ref_none.bag"), 150);
    for path in [
        "generated/ros_comm/ref_bz2.bag",
        "generated/ros_comm/ref_lz4.bag",
        "generated/ros_comm/v20_unindexed.bag",
        "generated/ros_comm/v20_unindexed_reindexed.bag",
        "generated/ros_comm/v12_indexed.bag",
        "generated/ros_comm/v12_unindexed.bag",
        "generated/ros_comm/v12_noheader.bag",
        "generated/ros_comm/v12_noheader_reindexed.bag",
        "generated/rosbags/rosbags_none.bag",
        "generated/rosbags/rosbags_bz2.bag",
        "generated/rosbags/rosbags_lz4.bag",
    ] {
        let bag = open(path);
        check_generated(path, &bag, 150);
        assert_eq!(messages(&bag, Order::LogTime), reference, "{path}");
        // These bags were written in time order, so file order is the same.
        assert_eq!(messages(&bag, Order::File), reference, "{path}");
    }
}

#[test]
fn killed_bag_gives_its_closed_chunks_and_the_complete_messages_of_the_open_one() {
    // 4 closed chunks with 65 messages, then an unterminated chunk holding 11 complete
    // messages (spec §9.1): the first 76 messages of the sequence.
    let bag = open("generated/ros_comm/v20_killed.bag");
    assert_eq!(bag.index_status(), &IndexStatus::Missing);
    check_generated("v20_killed", &bag, 76);
    assert!(
        bag.problems().iter().any(|p| p.offset == Some(22805)
            && p.kind == robolog_rosbag::ProblemKind::Truncated
            && p.message.contains("unterminated")),
        "{:?}",
        bag.problems()
    );
    let reindexed = open("generated/ros_comm/v20_killed_reindexed.bag");
    check_generated("v20_killed_reindexed", &reindexed, 65);
    assert_eq!(reindexed.index_status(), &IndexStatus::Used);
}

#[test]
fn unindexed_bags_are_scanned_and_say_so_or_refused_in_strict_mode() {
    let strict = |path: std::path::PathBuf| {
        Bag::open_with(Input::open(path).unwrap(), OpenOptions::new().strict(true))
    };
    for path in [
        "generated/ros_comm/v20_unindexed.bag",
        "generated/ros_comm/v20_killed.bag",
        "generated/ros_comm/v12_unindexed.bag",
    ] {
        let err = strict(testdata::path(format!("bags/{path}"))).unwrap_err();
        assert!(matches!(err, Error::Unindexed), "{path}: {err}");
        assert!(err.to_string().contains("unindexed"), "{err}");
        assert_eq!(open(path).index_status(), &IndexStatus::Missing, "{path}");
    }
    // Pre-0.11 1.2 bags never had an index: not an error.
    let bag = strict(testdata::path("bags/generated/ros_comm/v12_noheader.bag")).unwrap();
    assert_eq!(bag.version(), Version::V1_2);
    let indexed = strict(testdata::path("bags/generated/ros_comm/v12_indexed.bag")).unwrap();
    assert_eq!(indexed.index_status(), &IndexStatus::Used);
}

#[test]
fn error_files_give_clear_errors() {
    let err = Bag::from_file(testdata::path("bags/upstream/rosbag.js/empty-file.bag")).unwrap_err();
    assert!(matches!(err, Error::EmptyFile));
    assert!(err.to_string().contains("empty file"));

    // dummy.bag: index_pos = 90 = EOF, chunk_count = 600, no chunk infos.
    let path = testdata::path("bags/upstream/rosbag-rs/dummy.bag");
    let err =
        Bag::open_with(Input::open(&path).unwrap(), OpenOptions::new().strict(true)).unwrap_err();
    match &err {
        Error::IndexDamaged { offset, message } => {
            assert_eq!(*offset, 90);
            assert!(message.contains("600"), "{message}");
        }
        other => panic!("expected IndexDamaged, got {other}"),
    }
    let bag = Bag::from_file(&path).unwrap();
    assert!(matches!(
        bag.index_status(),
        IndexStatus::Damaged { offset: 90, .. }
    ));
    assert_eq!(bag.summary().message_count, 0);
    assert_eq!(bag.messages().into_iter().count(), 0);
}

#[test]
fn connections_carry_every_field() {
    let bag = open("generated/rosbags/rosbags_none.bag");
    let imu = bag
        .connections()
        .iter()
        .find(|c| c.topic == "/imu")
        .unwrap();
    assert_eq!(imu.message_type, "sensor_msgs/Imu");
    assert_eq!(imu.md5sum, "6a62c6daae103f4ff57a132d6f95cec2");
    assert!(
        imu.message_definition
            .starts_with("std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n")
    );
    assert_eq!(imu.callerid.as_deref(), Some("/make_bags"));
    assert!(!imu.latching);
    let names: Vec<&str> = imu.fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "topic",
            "type",
            "md5sum",
            "message_definition",
            "callerid",
            "latching"
        ]
    );

    // C++-written connections (swri): latching=1, no topic field in the connection data.
    let bag = open("upstream/swri-bag-reader-java/Bool.bag");
    for c in bag.connections() {
        assert!(c.latching, "{}", c.topic);
        assert_eq!(c.message_type, "std_msgs/Bool");
        assert_eq!(c.md5sum, "8b94c1b53db61fb6aed406028ad6332a");
    }

    // Two connections on one topic.
    let bag = open("upstream/embag/test_2.bag");
    assert_eq!(bag.connections().len(), 2);
    assert!(bag.connections().iter().all(|c| c.topic == "chatter"));
    assert_eq!(bag.messages().connections([1]).into_iter().count(), 1);
    assert_eq!(bag.messages().topics(["chatter"]).into_iter().count(), 2);
}

#[test]
fn unsorted_chunks_are_merged_by_time() {
    let bag = open("upstream/rosbag.js/example-unsorted-chunks.bag");
    let times: Vec<u64> = bag
        .messages()
        .into_iter()
        .map(|m| m.unwrap().time_ns)
        .collect();
    assert_eq!(times, [1_000_000_000, 2_000_000_000, 3_000_000_000]);
    let file: Vec<u64> = bag
        .messages()
        .order(Order::File)
        .into_iter()
        .map(|m| m.unwrap().time_ns)
        .collect();
    assert_eq!(file, [2_000_000_000, 3_000_000_000, 1_000_000_000]);
    assert_eq!(bag.summary().start_ns, Some(1_000_000_000));
    assert_eq!(bag.summary().end_ns, Some(3_000_000_000));
}

#[test]
fn summaries_report_chunks_and_compression() {
    let bag = open("generated/ros_comm/ref_bz2.bag");
    let s = bag.summary();
    assert_eq!(s.chunk_count, 9);
    let compression = bag.compression().unwrap();
    assert_eq!(compression.len(), 1);
    assert_eq!(
        compression[0].compression,
        robolog_rosbag::ChunkCompression::Bz2
    );
    assert_eq!(compression[0].chunks, 9);
    // Uncompressed sizes of the chunks equal those of the uncompressed twin.
    let none = open("generated/ros_comm/ref_none.bag");
    assert_eq!(
        compression[0].uncompressed_bytes,
        none.compression().unwrap()[0].uncompressed_bytes
    );
    assert_eq!(s.start_ns, Some(1_600_000_000_000_000_000));
    assert_eq!(s.end_ns, Some(1_600_000_000_490_000_002));
    assert_eq!(s.message_counts.values().sum::<u64>(), 150);
    let empty = open("upstream/rosbag.js/no-messages.bag");
    assert_eq!(empty.summary().chunk_count, 0);
    assert_eq!(empty.summary().start_ns, None);
    assert!(empty.connections().is_empty());
}

#[test]
fn streaming_reader_agrees_with_the_indexed_reader_on_every_file() {
    let mut files = testdata::files_with_extension("bags", ".bag");
    files.retain(|p| !p.ends_with("empty-file.bag"));
    assert!(files.len() > 40);
    for path in files {
        let bag = Bag::from_file(&path).unwrap();
        let indexed: Vec<_> = bag
            .messages()
            .order(Order::File)
            .into_iter()
            .map(|m| m.unwrap())
            .collect();
        let file = std::fs::File::open(&path).unwrap();
        let mut reader = robolog_rosbag::StreamReader::new(std::io::BufReader::new(file)).unwrap();
        let streamed: Vec<_> = reader.by_ref().map(|m| m.unwrap()).collect();
        assert_eq!(streamed.len(), indexed.len(), "{}", path.display());
        for (s, i) in streamed.iter().zip(&indexed) {
            assert_eq!(
                (s.conn, s.time_ns, &s.data, s.position),
                (i.conn, i.time_ns, &i.data, i.position)
            );
            let (a, b) = (
                reader.connection(s.conn).unwrap(),
                bag.connection(i.conn).unwrap(),
            );
            assert_eq!(a, b, "{}", path.display());
        }
        let killed = path.ends_with("v20_killed.bag");
        assert_eq!(
            reader.report().clean_end,
            !killed,
            "{}: {:?}",
            path.display(),
            reader.report()
        );
    }
}

#[test]
fn encrypted_bags_are_refused_clearly() {
    // A file header with the fields `rosbag encrypt` adds (spec §13).
    let mut header = Vec::new();
    for (name, value) in [
        (&b"op"[..], &[3u8][..]),
        (b"index_pos", &[0; 8]),
        (b"conn_count", &[0; 4]),
        (b"chunk_count", &[0; 4]),
        (b"encryptor", b"rosbag/AesCbcEncryptor"),
        (b"gpg_user", b"someone"),
    ] {
        header.extend_from_slice(&((name.len() + 1 + value.len()) as u32).to_le_bytes());
        header.extend_from_slice(name);
        header.push(b'=');
        header.extend_from_slice(value);
    }
    let mut bag = b"#ROSBAG V2.0\n".to_vec();
    bag.extend_from_slice(&(header.len() as u32).to_le_bytes());
    bag.extend_from_slice(&header);
    bag.extend_from_slice(&0u32.to_le_bytes());
    let err = Bag::open(bag.clone()).unwrap_err();
    assert!(
        matches!(&err, Error::Encrypted { encryptor } if encryptor == "rosbag/AesCbcEncryptor")
    );
    assert!(err.to_string().contains("encrypted bag"), "{err}");
    let err = robolog_rosbag::StreamReader::new(&bag[..]).unwrap_err();
    assert!(matches!(err, Error::Encrypted { .. }));
}

/// `Bag::problems` documents that its first entry states a missing (2.0) or damaged index; the
/// facade, which opens with every chunk header checked, relies on it to report that fact once.
#[test]
fn the_first_problem_states_an_unusable_index() {
    let mut seen = 0;
    for dir in ["bags", "bad/rosbag"] {
        for path in testdata::files_with_extension(dir, ".bag") {
            let opened = Bag::open_with(
                Input::open(&path).unwrap(),
                OpenOptions::new().verify_chunks(true),
            );
            let Ok(bag) = opened else {
                continue;
            };
            let expected = match (bag.index_status(), bag.version()) {
                (IndexStatus::Damaged { .. }, _) => "index damaged (",
                (IndexStatus::Missing, Version::V2_0) => "unindexed bag",
                _ => continue,
            };
            let first = bag.problems().first();
            assert!(
                first.is_some_and(|p| p.message.starts_with(expected)
                    && p.kind == robolog_rosbag::ProblemKind::Index),
                "{}: first problem {first:?}, expected one starting with {expected:?}",
                path.display()
            );
            seen += 1;
        }
    }
    // dummy.bag, v20_unindexed, v20_killed and the hostile bags whose index is damaged.
    assert_eq!(seen, 9, "bags with an unusable index");
}

/// The default open reads the file header and the index section only: with every chunk record
/// overwritten, the summary is still the index's, and the damage shows when a chunk is needed.
/// Checking the chunk headers at open finds it at once and falls back to a scan.
#[test]
fn opening_reads_no_chunk_until_one_is_needed() {
    let intact = open("generated/ros_comm/ref_none.bag");
    let mut bytes = intact.input().read_all().unwrap().to_vec();
    let positions: Vec<usize> = intact.chunks().map(|c| c.position as usize).collect();
    assert_eq!(positions.len(), 9);
    // Every chunk but the last one becomes garbage.
    let first = positions[0];
    bytes[first..positions[8]].fill(0xAB);
    let damaged = Bag::open(bytes.clone()).unwrap();
    assert_eq!(damaged.index_status(), &IndexStatus::Used);
    assert_eq!(damaged.summary(), intact.summary());
    assert_eq!(damaged.chunks().count(), intact.chunks().count());
    match damaged.compression() {
        Err(Error::IndexDamaged { offset, .. }) => assert_eq!(offset, first as u64),
        other => panic!("expected IndexDamaged at {first}, got {other:?}"),
    }
    let first_read = damaged.messages().into_iter().next().unwrap();
    assert!(
        matches!(first_read, Err(Error::IndexDamaged { offset, .. }) if offset == first as u64)
    );

    let verified = Bag::open_with(bytes, OpenOptions::new().verify_chunks(true)).unwrap();
    assert!(
        matches!(verified.index_status(), IndexStatus::Damaged { offset, .. } if *offset == first as u64),
        "{:?}",
        verified.index_status()
    );
}
