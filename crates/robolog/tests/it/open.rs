//! Opening every format through the facade: sniffing, the model's channels and schemas,
//! summaries and queries, against the values the test files' READMEs and generators give.

use std::collections::BTreeMap;
use std::io::Cursor;

use robolog::{Error, Format, IndexUse, Log, Order, open, open_bytes, open_reader};
use robolog_testkit::testdata;

/// Generated bags: message i of /chatter at T0 + i × 10 ms, /imu 1 ns later, /custom 2 ns later
/// (testdata/bags/generated/rosbags/make_bags.py).
const BAG_T0: u64 = 1_600_000_000_000_000_000;
/// MCAP samples: message i at T0 + i × 10 ms, round-robin over /points, /chatter, /blob
/// (testdata/samples/generate_samples.py).
const MCAP_T0: u64 = 1_700_000_000_000_000_000;

fn counts(log: &Log) -> BTreeMap<String, u64> {
    log.summary()
        .unwrap()
        .channels
        .iter()
        .map(|c| (c.channel.topic.clone(), c.message_count))
        .collect()
}

fn topic_counts(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect()
}

#[test]
fn generated_bags_summaries() {
    for (file, chunks, compression) in [
        ("ros_comm/ref_none.bag", 9, "none"),
        ("ros_comm/ref_bz2.bag", 9, "bz2"),
        ("ros_comm/ref_lz4.bag", 9, "lz4"),
        ("rosbags/rosbags_none.bag", 8, "none"),
        ("rosbags/rosbags_bz2.bag", 8, "bz2"),
        ("rosbags/rosbags_lz4.bag", 8, "lz4"),
    ] {
        let log = open(testdata::path(format!("bags/generated/{file}"))).unwrap();
        assert_eq!(log.format(), Format::Bag);
        assert!(log.problems().is_empty(), "{file}: {:?}", log.problems());
        let s = log.summary().unwrap();
        assert_eq!(s.version, "2.0");
        assert_eq!(s.message_count, 150, "{file}");
        assert_eq!(s.start_ns, Some(BAG_T0));
        assert_eq!(s.end_ns, Some(BAG_T0 + 49 * 10_000_000 + 2));
        assert_eq!(s.duration_ns(), Some(490_000_002));
        let chunk_summary = s.chunks.as_ref().unwrap();
        assert_eq!(chunk_summary.count, chunks, "{file}");
        assert_eq!(chunk_summary.compression.len(), 1);
        assert_eq!(chunk_summary.compression[0].compression, compression);
        assert_eq!(s.index, IndexUse::Index);
        assert_eq!(
            counts(&log),
            topic_counts(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
        );
        for channel in log.channels() {
            assert_eq!(channel.message_encoding, "ros1");
            let schema = channel.schema.as_ref().unwrap();
            assert_eq!(schema.encoding, "ros1msg");
            let md5 = &channel.metadata["md5sum"];
            assert_eq!(md5.len(), 32);
            assert!(!channel.metadata.contains_key("type"));
            assert!(!channel.metadata.contains_key("message_definition"));
        }
        let chatter = log
            .channels()
            .iter()
            .find(|c| c.topic == "/chatter")
            .unwrap();
        let schema = chatter.schema.as_ref().unwrap();
        assert_eq!(schema.name, "std_msgs/String");
        assert_eq!(schema.text(), Some("string data\n"));
        assert_eq!(
            chatter.metadata["md5sum"],
            "992ce8a1687cec8c8bd883ec73ca41d1"
        );
    }
}

#[test]
fn rosbags_connections_carry_callerid_and_latching() {
    let log = open(testdata::path("bags/generated/rosbags/rosbags_none.bag")).unwrap();
    for channel in log.channels() {
        assert_eq!(channel.metadata["callerid"], "/make_bags");
        assert_eq!(channel.metadata["latching"], "0");
        assert_eq!(channel.metadata["topic"], channel.topic);
    }
    // Connections of one type share a schema; different types do not.
    let ids: Vec<u32> = log
        .channels()
        .iter()
        .map(|c| c.schema.as_ref().unwrap().id)
        .collect();
    assert_eq!(ids, [1, 2, 3]);
}

#[test]
fn real_bag_with_nine_connections() {
    let log = open(testdata::path("bags/upstream/rosbag.js/example-bz2.bag")).unwrap();
    assert_eq!(
        counts(&log),
        topic_counts(&[
            ("/rosout", 10),
            ("/tf", 2688),
            ("/tf_static", 1),
            ("/turtle1/cmd_vel", 357),
            ("/turtle1/color_sensor", 1351),
            ("/turtle1/pose", 1344),
            ("/turtle2/cmd_vel", 208),
            ("/turtle2/color_sensor", 1344),
            ("/turtle2/pose", 1344),
        ])
    );
    let turtles: Vec<_> = log
        .messages()
        .topics(["/turtle*/pose"])
        .iter()
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(turtles.len(), 2688);
    assert!(
        turtles
            .windows(2)
            .all(|w| w[0].log_time_ns <= w[1].log_time_ns)
    );
    let recursive = log.messages().topics(["/turtle1/**"]).selection().unwrap();
    assert_eq!(recursive.channels.unwrap().len(), 3);
}

#[test]
fn v12_bags_read_through_the_model() {
    for file in ["v12_indexed.bag", "v12_noheader.bag", "v12_unindexed.bag"] {
        let log = open(testdata::path(format!("bags/generated/ros_comm/{file}"))).unwrap();
        let s = log.summary().unwrap();
        assert_eq!(s.version, "1.2", "{file}");
        assert_eq!(s.chunks, None);
        assert_eq!(s.message_count, 150, "{file}");
        assert_eq!(
            counts(&log),
            topic_counts(&[("/chatter", 50), ("/imu", 50), ("/custom", 50)])
        );
        let times: Vec<u64> = log
            .messages()
            .topics(["/imu"])
            .iter()
            .unwrap()
            .map(|m| m.unwrap().log_time_ns)
            .collect();
        let expected: Vec<u64> = (0..50).map(|i| BAG_T0 + i * 10_000_000 + 1).collect();
        assert_eq!(times, expected, "{file}");
    }
}

#[test]
fn mcap_samples_summaries() {
    for file in [
        "demo-zstd.mcap",
        "demo-lz4.mcap",
        "demo-uncompressed.mcap",
        "demo-unchunked.mcap",
        "demo-out-of-order-zstd.mcap",
    ] {
        let log = open(testdata::path(format!("samples/{file}"))).unwrap();
        assert_eq!(log.format(), Format::Mcap);
        let s = log.summary().unwrap();
        assert_eq!(s.version, "0");
        assert_eq!(s.properties["library"], "mcap-samples-generator");
        assert_eq!(s.message_count, 300, "{file}");
        assert_eq!(
            counts(&log),
            topic_counts(&[("/points", 100), ("/chatter", 100), ("/blob", 100)])
        );
        assert_eq!(s.attachments.len(), 1);
        assert_eq!(s.attachments[0].name, "calibration.json");
        assert_eq!(s.attachments[0].media_type, "application/json");
        assert_eq!(s.metadata.len(), 1);
        assert_eq!(s.metadata[0].name, "run_info");
        assert_eq!(
            s.metadata[0].entries,
            BTreeMap::from([
                ("robot_id".to_owned(), "r2".to_owned()),
                ("git_sha".to_owned(), "0123abcd".to_owned()),
                ("site".to_owned(), "lab".to_owned()),
            ])
        );
        let chatter = log
            .channels()
            .iter()
            .find(|c| c.topic == "/chatter")
            .unwrap();
        assert_eq!(chatter.message_encoding, "ros1");
        assert_eq!(chatter.schema.as_ref().unwrap().name, "std_msgs/String");
        assert_eq!(chatter.metadata["callerid"], "/talker");
        let blob = log.channels().iter().find(|c| c.topic == "/blob").unwrap();
        assert!(blob.schema.is_none());
        assert_eq!(blob.message_encoding, "application/octet-stream");
        let attachments = log.attachments().unwrap();
        assert_eq!(
            &attachments[0].data[..],
            br#"{"fx": 500.0, "fy": 500.0, "cx": 320, "cy": 240}"#
        );
        assert_eq!(attachments[0].create_time_ns, MCAP_T0);
        // Written after message 150, which the out-of-order file moved back 35 ms.
        let shift = if file.contains("out-of-order") {
            35_000_000
        } else {
            0
        };
        assert_eq!(
            attachments[0].log_time_ns,
            MCAP_T0 + 150 * 10_000_000 - shift
        );
    }
    let chunked = open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let s = chunked.summary().unwrap();
    assert_eq!(s.chunks.as_ref().unwrap().count, 10);
    assert_eq!(
        s.chunks.as_ref().unwrap().compression[0].compression,
        "zstd"
    );
    assert_eq!(s.start_ns, Some(MCAP_T0));
    assert_eq!(s.end_ns, Some(MCAP_T0 + 299 * 10_000_000));
}

#[test]
fn mcap_messages_in_every_order() {
    let log = open(testdata::path("samples/demo-out-of-order-zstd.mcap")).unwrap();
    let sample_time = |i: u64| {
        let t = MCAP_T0 + i * 10_000_000;
        if i % 7 == 3 { t - 35_000_000 } else { t }
    };
    let file: Vec<_> = log
        .messages()
        .order(Order::File)
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    let times: Vec<u64> = file.iter().map(|m| m.log_time_ns).collect();
    assert_eq!(times, (0..300).map(sample_time).collect::<Vec<_>>());
    let by_time: Vec<u64> = log
        .messages()
        .iter()
        .unwrap()
        .map(|m| m.unwrap().log_time_ns)
        .collect();
    let mut sorted = times.clone();
    sorted.sort_unstable();
    assert_eq!(by_time, sorted);
    // Publish time and sequence come through.
    let chatter: Vec<_> = file
        .iter()
        .filter(|m| m.channel.topic == "/chatter")
        .collect();
    for (seq, m) in chatter.iter().enumerate() {
        assert_eq!(m.sequence, Some(seq as u32));
        assert_eq!(m.publish_time_ns, Some(m.log_time_ns - 1000));
    }
    // A time range and a topic through the index.
    let window: Vec<_> = log
        .messages()
        .topics(["/chatter"])
        .time_range(MCAP_T0..MCAP_T0 + 100_000_000)
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    // /chatter has messages i ≡ 1 (mod 3); i = 10 was moved back 35 ms into the window.
    let mut expected: Vec<u64> = (0..300)
        .filter(|i| i % 3 == 1)
        .map(sample_time)
        .filter(|&t| t < MCAP_T0 + 100_000_000)
        .collect();
    expected.sort_unstable();
    assert_eq!(expected.len(), 4);
    assert_eq!(
        window.iter().map(|m| m.log_time_ns).collect::<Vec<_>>(),
        expected
    );
    for m in &window {
        let n: u64 = m.channel.id.into();
        assert_eq!(n, 2);
    }
}

#[test]
fn bddf_sample_as_channels() {
    let log = open(testdata::path("bddf/sample.bddf")).unwrap();
    assert_eq!(log.format(), Format::Bddf);
    assert!(log.problems().is_empty(), "{:?}", log.problems());
    let s = log.summary().unwrap();
    assert_eq!(s.version, "1.0.0");
    assert_eq!(s.properties["checksum"], "sha1");
    assert_eq!(s.message_count, 14);
    assert_eq!(s.start_ns, Some(1_700_000_000_000_000_000));
    assert_eq!(s.end_ns, Some(1_700_000_000_200_000_002));
    assert_eq!(
        counts(&log),
        topic_counts(&[
            ("bosdyn:channel:bosdyn:channel=robot-id-requests", 3),
            ("bosdyn:channel:example:var=battery.voltage", 1),
            ("bosdyn:channel:example:var=motor.count", 2),
            ("example:raw:example:name=text-log", 3),
            ("bosdyn:signal:example:var=accel.xyz", 3),
            (
                "bosdyn:grpc:requests:bosdyn:grpc:service=robot-id,bosdyn:message-type=bosdyn.api.RobotIdRequest",
                1
            ),
            (
                "bosdyn:grpc:responses:bosdyn:grpc:service=robot-id,bosdyn:message-type=bosdyn.api.RobotIdResponse",
                1
            ),
        ])
    );
    assert_eq!(s.metadata.len(), 1);
    assert_eq!(s.metadata[0].name, "bddf:annotations");
    assert_eq!(
        s.metadata[0].entries["bosdyn:robot-serial-number"],
        "spot-BD-0001"
    );
    assert_eq!(s.metadata[0].entries["example:purpose"], "bddf sample");

    let requests = log.channel(0).unwrap();
    assert_eq!(requests.message_encoding, "protobuf");
    let schema = requests.schema.as_ref().unwrap();
    assert_eq!(
        (schema.name.as_str(), schema.encoding.as_str()),
        ("bosdyn.api.RobotIdRequest", "protobuf")
    );
    assert_eq!(requests.metadata["bddf:series_type"], "bosdyn:channel");
    assert_eq!(
        requests.metadata["bddf:spec:bosdyn:channel"],
        "robot-id-requests"
    );
    assert_eq!(
        requests.metadata["bddf:annotation:example:note"],
        "robot id requests"
    );
    assert_eq!(
        requests.metadata["bddf:content_type"],
        "application/protobuf"
    );

    let text = log.channel(3).unwrap();
    assert_eq!(text.message_encoding, "text/plain");
    assert_eq!(
        text.metadata["bddf:additional_index_names"],
        r#"["seq","pid"]"#
    );

    let accel = log.channel(4).unwrap();
    assert_eq!(accel.message_encoding, "bddf-pod");
    assert_eq!(accel.schema.as_ref().unwrap().name, "float32[3]");
    assert_eq!(accel.metadata["bddf:pod_type"], "float32");
    assert_eq!(accel.metadata["bddf:dimensions"], "3");
    let voltage = log.channel(1).unwrap();
    assert_eq!(voltage.schema.as_ref().unwrap().name, "float64");
    assert_eq!(voltage.metadata["bddf:dimensions"], "");

    // Blocks of the sample (sample.txt): text-log blocks at T0 + k × 100 ms + 1 ns.
    let texts: Vec<_> = log
        .messages()
        .topics(["example:raw:*"])
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    assert_eq!(
        texts
            .iter()
            .map(|m| (m.log_time_ns, m.data.to_vec()))
            .collect::<Vec<_>>(),
        (0..3u64)
            .map(|k| (
                1_700_000_000_000_000_001 + k * 100_000_000,
                format!("log line {k}").into_bytes()
            ))
            .collect::<Vec<_>>()
    );
    assert!(
        texts
            .iter()
            .all(|m| m.publish_time_ns.is_none() && m.sequence.is_none())
    );
    // The voltage block: 5 float64 samples 12.0, 12.25, … 13.0.
    let voltage: Vec<_> = log
        .messages()
        .topics(["bosdyn:channel:example:var=battery.voltage"])
        .iter()
        .unwrap()
        .map(|m| m.unwrap())
        .collect();
    let values: Vec<f64> = voltage[0]
        .data
        .chunks_exact(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(values, [12.0, 12.25, 12.5, 12.75, 13.0]);
    // File order follows the offsets of sample.txt's stream listing.
    let offsets_order: Vec<u32> = log
        .messages()
        .order(Order::File)
        .iter()
        .unwrap()
        .map(|m| m.unwrap().channel.id)
        .collect();
    assert_eq!(offsets_order, [0, 3, 4, 0, 3, 4, 0, 3, 4, 2, 5, 6, 1, 2]);
}

#[test]
fn streams_give_the_file_order_of_the_indexed_reader() {
    for file in [
        "bags/generated/ros_comm/ref_lz4.bag",
        "bags/generated/ros_comm/v12_indexed.bag",
        "bags/upstream/rosbag.js/example-unsorted-chunks.bag",
        "samples/demo-lz4.mcap",
        "samples/demo-unchunked.mcap",
        "bddf/sample.bddf",
    ] {
        let bytes = testdata::read(file);
        let log = open_bytes(bytes.clone()).unwrap();
        let indexed: Vec<_> = log
            .messages()
            .order(Order::File)
            .iter()
            .unwrap()
            .map(|m| m.unwrap())
            .collect();
        let mut stream = open_reader(Cursor::new(bytes.clone())).unwrap();
        let streamed: Vec<_> = (&mut stream).map(|m| m.unwrap()).collect();
        assert_eq!(stream.bytes_read(), bytes.len() as u64, "{file}");
        assert_eq!(streamed.len(), indexed.len(), "{file}");
        for (a, b) in indexed.iter().zip(&streamed) {
            assert_eq!(
                (
                    a.log_time_ns,
                    &a.data,
                    &a.channel.topic,
                    a.publish_time_ns,
                    a.sequence
                ),
                (
                    b.log_time_ns,
                    &b.data,
                    &b.channel.topic,
                    b.publish_time_ns,
                    b.sequence
                ),
                "{file}"
            );
            assert_eq!(a.channel.schema, b.channel.schema, "{file}");
            assert_eq!(a.channel.metadata, b.channel.metadata, "{file}");
        }
    }
}

#[test]
fn unknown_formats_show_their_first_bytes() {
    let err = open_bytes(&b"PK\x03\x04 zipped stuff"[..]).unwrap_err();
    assert!(matches!(err, Error::UnknownFormat { .. }));
    assert!(
        err.to_string()
            .starts_with("unknown format: the input starts with 50 4b 03 04 20 7a 69 70 70 65 64 20 73 74 75 66 (\"PK.. zipped stuf\")"),
        "{err}"
    );
    let err = open_reader(Cursor::new(b"%PDF-1.4".to_vec())).unwrap_err();
    assert!(
        err.to_string()
            .contains("25 50 44 46 2d 31 2e 34 (\"%PDF-1.4\")"),
        "{err}"
    );
    assert!(matches!(open_bytes(Vec::new()), Err(Error::EmptyInput)));
    // An empty "bag" file from rosbag.js is empty, not unknown.
    assert!(matches!(
        open(testdata::path("bags/upstream/rosbag.js/empty-file.bag")),
        Err(Error::EmptyInput)
    ));
    // The bag reader names unsupported versions.
    let err = open_bytes(&b"#ROSBAG V1.1\n"[..]).unwrap_err();
    assert!(err.to_string().contains("1.1"), "{err}");
}

#[test]
fn errors_carry_offsets() {
    // A bag cut inside the file header.
    let bag = testdata::read("bags/generated/ros_comm/ref_none.bag");
    let err = open_bytes(bag[..100].to_vec()).unwrap_err();
    assert!(err.is_truncation(), "{err}");
    assert!(err.offset().is_some(), "{err}");
    // A stream of a cut BDDF file ends with a truncation error at a block offset.
    let bddf = testdata::read("bddf/sample-truncated.bddf");
    let results: Vec<_> = open_reader(Cursor::new(bddf)).unwrap().collect();
    let err = results.last().unwrap().as_ref().unwrap_err();
    assert!(err.is_truncation(), "{err}");
    assert!(err.offset().is_some());
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 12);
}

#[test]
fn damaged_files_open_with_their_problems() {
    let killed = open(testdata::path("bags/generated/ros_comm/v20_killed.bag")).unwrap();
    assert!(
        killed.problems()[0].message.contains("no index"),
        "{:?}",
        killed.problems()
    );
    assert_eq!(killed.messages().iter().unwrap().count(), 76);
    let cut = open(testdata::path("samples/demo-zstd-truncated.mcap")).unwrap();
    assert!(
        cut.problems()[0].message.contains("no footer"),
        "{:?}",
        cut.problems()
    );
    assert!(matches!(
        cut.summary().unwrap().index,
        IndexUse::Scan { .. }
    ));
    let cut = open(testdata::path("bddf/sample-truncated.bddf")).unwrap();
    assert!(
        cut.problems()
            .iter()
            .any(|p| p.severity == robolog::Severity::Error),
        "{:?}",
        cut.problems()
    );
    assert_eq!(cut.summary().unwrap().message_count, 12);
}

#[test]
fn a_bag_index_problem_is_reported_once() {
    let index_problems = |path: &str| {
        let log = open(testdata::path(path)).unwrap();
        log.problems()
            .iter()
            .filter(|p| p.message.contains("index"))
            .map(|p| p.message.clone())
            .collect::<Vec<_>>()
    };
    let damaged = index_problems("bags/upstream/rosbag-rs/dummy.bag");
    assert_eq!(damaged.len(), 1, "{damaged:?}");
    assert!(
        damaged[0].starts_with("the bag index is damaged"),
        "{damaged:?}"
    );
    let unindexed = index_problems("bags/generated/ros_comm/v20_unindexed.bag");
    assert_eq!(
        unindexed,
        [
            "the bag has no index (the recording was never closed): read by a linear scan; `recover` writes an indexed copy"
        ]
    );
    let v12 = index_problems("bags/generated/ros_comm/v12_unindexed.bag");
    assert_eq!(v12, ["the 1.2 bag has no index: read by a linear scan"]);
}

#[test]
fn summaries_serialize_for_scripts() {
    let log = open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let json: serde_json::Value = serde_json::to_value(log.summary().unwrap()).unwrap();
    assert_eq!(json["format"], "mcap");
    assert_eq!(json["message_count"], 300);
    assert_eq!(json["index"]["source"], "index");
    assert_eq!(json["channels"][1]["channel"]["topic"], "/chatter");
    assert_eq!(
        json["channels"][1]["channel"]["schema"]["data"],
        "string data\n"
    );
    assert_eq!(json["channels"][1]["message_count"], 100);
    assert_eq!(json["attachments"][0]["size"], 48);
    assert_eq!(json["chunks"]["compression"][0]["compression"], "zstd");
}

#[test]
fn draft_mcap_files_open_and_convert() {
    let log = open_bytes(robolog_testkit::draft_mcap::minimal()).unwrap();
    assert_eq!(log.format(), Format::Mcap);
    assert!(
        log.problems()[0].message.contains("draft layout"),
        "{:?}",
        log.problems()
    );
    let chatter = log.channel(7).unwrap();
    assert_eq!(chatter.topic, "/chatter");
    let schema = chatter.schema.as_ref().unwrap();
    assert_eq!(
        (schema.name.as_str(), schema.text()),
        ("std_msgs/String", Some("string data\n"))
    );
    let messages: Vec<_> = log.messages().iter().unwrap().map(|m| m.unwrap()).collect();
    assert_eq!(
        messages
            .iter()
            .map(|m| (m.log_time_ns, m.publish_time_ns, m.sequence, &m.data[4..]))
            .collect::<Vec<_>>(),
        [
            (100, Some(99), Some(0), &b"one"[..]),
            (200, Some(199), Some(1), &b"two"[..])
        ]
    );
    let mut decoder = robolog::Decoder::new();
    assert_eq!(
        decoder.decode(&messages[1]).unwrap().to_json(),
        r#"{"data":"two"}"#
    );
    // Converted, it becomes a ratified file.
    let mut writer = robolog::create_writer(
        robolog::Output::memory(),
        robolog::WriterOptions::default_for(Format::Mcap).unwrap(),
    )
    .unwrap();
    robolog::convert(&log, &mut *writer, robolog::ConvertOptions::new()).unwrap();
    let ratified = open_bytes(writer.finish().unwrap().data.unwrap()).unwrap();
    assert!(ratified.problems().is_empty());
    assert_eq!(ratified.summary().unwrap().properties["profile"], "ros1");
    assert_eq!(ratified.messages().iter().unwrap().count(), 2);
}

#[test]
fn logs_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Log>();
    send_sync::<robolog::Message>();
    send::<robolog::Messages>();
    send::<robolog::LogStream<std::fs::File>>();
    send::<robolog::Decoder>();
    send::<Box<dyn robolog::LogWriter + Send>>();
}

#[test]
fn mcap_uncompressed_chunks_are_checked_when_turned_on() {
    // One uncompressed chunk of three messages, its CRC wrong (testdata/bad/README.md).
    let path = testdata::path("bad/mcap/chunk-crc-mismatch.mcap");
    let log = robolog::OpenOptions::new()
        .check_uncompressed_chunks(true)
        .open(&path)
        .unwrap();
    let got: Vec<_> = log.messages().iter().unwrap().collect();
    assert_eq!(got.len(), 1);
    let error = got[0].as_ref().unwrap_err();
    assert!(matches!(error, Error::Mcap(_)), "{error:?}");
    assert!(
        error.to_string().starts_with("chunk CRC mismatch"),
        "{error}"
    );
    assert_eq!(error.offset(), Some(44));
    // By default, as robolog-mcap: served unchecked.
    let unchecked = open(&path).unwrap();
    let times: Vec<u64> = unchecked
        .messages()
        .iter()
        .unwrap()
        .map(|m| m.unwrap().log_time_ns)
        .collect();
    assert_eq!(times.len(), 3);
}

#[test]
fn a_message_on_an_undefined_channel_is_a_typed_data_error() {
    use robolog_mcap::records::{Header, MAGIC, Message, Record};
    use robolog_mcap::serialize::write_record;
    // A stream whose first message names channel 7 before any Channel record defines it.
    let mut bytes = MAGIC.to_vec();
    let header = Header {
        profile: "".into(),
        library: "test".into(),
    };
    write_record(&Record::Header(header), &mut bytes).unwrap();
    let message = Message {
        channel_id: 7,
        sequence: 0,
        log_time: 1,
        publish_time: 1,
        data: b"x",
    };
    write_record(&Record::Message(message), &mut bytes).unwrap();
    let mut stream = open_reader(Cursor::new(bytes)).unwrap();
    let err = stream.next().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            Error::UndefinedChannel {
                format: Format::Mcap,
                channel: 7,
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "MCAP: a message on channel 7, which the input does not define"
    );
}

/// A file held in memory that the reader reads by position only, recording every read.
#[derive(Debug)]
struct ReadsRecorded {
    data: robolog::Bytes,
    reads: std::sync::Arc<std::sync::Mutex<Vec<std::ops::Range<u64>>>>,
}

impl robolog::ReadAt for ReadsRecorded {
    fn len(&self) -> u64 {
        self.data.len() as u64
    }
    fn read_at(&self, range: std::ops::Range<u64>) -> std::io::Result<robolog::Bytes> {
        self.reads.lock().unwrap().push(range.clone());
        Ok(self.data.slice(range.start as usize..range.end as usize))
    }
}

#[test]
fn a_cut_mcap_read_by_position_is_read_once_a_window_at_a_time() {
    use robolog::mcap::{Compression, Message, WriteOptions, Writer};
    // Eleven chunks of 1 MB of noise, cut inside the last one: a remote recording whose
    // recorder was killed.
    let opts = WriteOptions::new()
        .compression(Compression::Zstd)
        .chunk_size(Some(1 << 20));
    let mut w = Writer::new(Vec::new(), opts).unwrap();
    let channel = w
        .register_channel("/noise", "raw", 0, BTreeMap::new())
        .unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut payload = vec![0u8; 100_000];
    for i in 0..120u64 {
        for byte in &mut payload {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = state as u8;
        }
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time: i,
            publish_time: i,
            data: &payload,
        })
        .unwrap();
    }
    let whole = w.finish().unwrap();
    let whole = robolog::Bytes::from(whole);
    let reader = robolog::mcap::McapReader::open(whole.clone()).unwrap();
    let chunks = &reader.summary().chunk_indexes;
    assert_eq!(chunks.len(), 11);
    let last_chunk = chunks[10].chunk_start_offset as usize;
    let cut = whole.slice(..last_chunk + 600_000);

    let in_memory = open_bytes(cut.clone()).unwrap();
    let reads = std::sync::Arc::default();
    let input = robolog::Input::new(ReadsRecorded {
        data: cut.clone(),
        reads: std::sync::Arc::clone(&reads),
    });
    let by_position = robolog::OpenOptions::default().open_input(input).unwrap();
    let messages = |log: &Log| -> Vec<(u64, usize)> {
        log.messages()
            .iter()
            .unwrap()
            .map(|m| {
                let m = m.unwrap();
                (m.log_time_ns, m.data.len())
            })
            .collect()
    };
    let expected = messages(&in_memory);
    // Ten intact chunks of eleven messages, and the complete messages of the cut one.
    assert!((111..120).contains(&expected.len()), "{}", expected.len());
    assert_eq!(messages(&by_position), expected);
    assert_eq!(by_position.problems(), in_memory.problems());
    let reads = reads.lock().unwrap();
    let largest = reads.iter().map(|r| r.end - r.start).max().unwrap();
    assert!(largest <= 4 << 20, "a read of {largest} bytes");
    // Opening scans the file once and reads the cut chunk again; the query reads the chunks.
    let total: u64 = reads.iter().map(|r| r.end - r.start).sum();
    assert!(total < 3 * cut.len() as u64, "{total} bytes read");
}

#[test]
fn a_draft_mcap_file_checks_and_recovers_alike_by_position_and_in_memory() {
    let data = robolog::Bytes::from(robolog_testkit::draft_mcap::minimal());
    let by_position = || {
        robolog::Input::new(ReadsRecorded {
            data: data.clone(),
            reads: std::sync::Arc::default(),
        })
    };
    let in_memory = robolog::check_bytes(data.clone()).unwrap();
    assert_eq!(in_memory.messages, 2);
    assert!(
        in_memory
            .problems
            .iter()
            .any(|p| p.message.contains("draft layout")),
        "{:?}",
        in_memory.problems
    );
    let checked = robolog::check_input(by_position()).unwrap();
    assert_eq!(checked.messages, in_memory.messages);
    assert_eq!(checked.problems, in_memory.problems);

    let (report, finished) = robolog::recover(&data, robolog::Output::memory()).unwrap();
    let (by_position_report, by_position_finished) =
        robolog::recover_input(&by_position(), robolog::Output::memory()).unwrap();
    assert_eq!(report.messages_recovered, 2);
    assert_eq!(by_position_report, report);
    assert!(by_position_finished.data == finished.data);
}
