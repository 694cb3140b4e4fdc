//! SQL over logs, checked against values computed without robolog-arrow: counts from the
//! logs' summaries, averages from the decoder, and a time range that must not touch the chunks
//! outside it.

use std::collections::BTreeMap;

use arrow::array::RecordBatch;
use base64::Engine as _;
use robolog::Decoder;
use robolog::mcap::{McapReader, WriteOptions, Writer};
use robolog_arrow::LogTables;
use robolog_testkit::testdata;
use serde_json::{Value, json};

use crate::support::rows;

fn query(tables: &LogTables, sql: &str) -> Vec<Value> {
    let batches: Vec<RecordBatch> = tables
        .sql_blocking(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    rows(&batches)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn counts_and_averages_of_nested_fields_match_the_decoder() {
    let path = testdata::path("bags/upstream/rosbag.js/example-bz2.bag");
    let tables = LogTables::open([&path]).unwrap();
    let got = query(
        &tables,
        r#"SELECT count(*) AS n, avg(x) AS x, max(theta) AS theta FROM "/turtle1/pose""#,
    );
    let log = robolog::open(&path).unwrap();
    let mut decoder = Decoder::new();
    let (mut n, mut sum, mut theta) = (0u64, 0.0f64, f64::MIN);
    for message in log.messages().topics(["/turtle1/pose"]).iter().unwrap() {
        let message = message.unwrap();
        let robolog::Decoded::Ros1(m) = decoder.decode(&message).unwrap() else {
            panic!()
        };
        n += 1;
        sum += m.get("x").unwrap().as_f64().unwrap();
        theta = theta.max(m.get("theta").unwrap().as_f64().unwrap());
    }
    assert_eq!(n, 1344);
    assert_eq!(got[0]["n"], n);
    assert!(
        close(got[0]["x"].as_f64().unwrap(), sum / n as f64),
        "{got:?}: the decoder's average is {}",
        sum / n as f64
    );
    // theta is a float32 column: its maximum is one of the values, exactly.
    assert_eq!(
        got[0]["theta"].as_f64().unwrap() as f32,
        theta as f32,
        "{got:?}: the decoder's maximum is {theta}"
    );

    // A field of a struct inside a list of structs: tf transforms' translations.
    let got = query(
        &tables,
        r#"SELECT count(*) AS n, avg(t['transform']['translation']['x']) AS x
           FROM (SELECT unnest(transforms) AS t FROM "/tf")"#,
    );
    let (mut n, mut sum) = (0u64, 0.0);
    for message in log.messages().topics(["/tf"]).iter().unwrap() {
        let message = message.unwrap();
        let robolog::Decoded::Ros1(m) = decoder.decode(&message).unwrap() else {
            panic!()
        };
        let root = m.root();
        for t in root.field("transforms").unwrap().messages().unwrap() {
            let translation = t
                .field("transform")
                .unwrap()
                .as_message()
                .unwrap()
                .field("translation")
                .unwrap();
            sum += translation
                .as_message()
                .unwrap()
                .field("x")
                .unwrap()
                .value()
                .as_f64()
                .unwrap();
            n += 1;
        }
    }
    assert_eq!(got[0]["n"], n);
    assert!(
        close(got[0]["x"].as_f64().unwrap(), sum / n as f64),
        "{got:?} {sum} {n}"
    );
}

#[test]
fn messages_and_channels_tables_cover_every_input() {
    let paths = [
        testdata::path("bags/generated/ros_comm/ref_lz4.bag"),
        testdata::path("samples/demo-zstd.mcap"),
        testdata::path("bddf/sample.bddf"),
    ];
    let tables = LogTables::open(&paths).unwrap();
    let got = query(
        &tables,
        "SELECT topic, count(*) AS n, sum(size) AS bytes FROM messages GROUP BY topic ORDER BY topic",
    );
    let mut expected: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for path in &paths {
        for message in robolog::open(path).unwrap().messages().iter().unwrap() {
            let message = message.unwrap();
            let entry = expected.entry(message.channel.topic.clone()).or_default();
            entry.0 += 1;
            entry.1 += message.data.len() as u64;
        }
    }
    let got: BTreeMap<String, (u64, u64)> = got
        .iter()
        .map(|r| {
            (
                r["topic"].as_str().unwrap().to_owned(),
                (r["n"].as_u64().unwrap(), r["bytes"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, expected);
    // The chatter topic of two files is one table.
    let chatter = query(&tables, r#"SELECT count(*) AS n FROM "/chatter""#);
    assert_eq!(chatter[0]["n"], 150);
    let channels = query(
        &tables,
        "SELECT count(*) AS n, sum(message_count) AS m FROM channels",
    );
    assert_eq!(
        channels[0]["m"],
        expected.values().map(|v| v.0).sum::<u64>()
    );
    // A topic filter on `messages` and a raw table (BDDF protobuf series carry no descriptor).
    let filtered = query(
        &tables,
        "SELECT count(*) AS n FROM messages WHERE topic = '/imu'",
    );
    assert_eq!(filtered[0]["n"], 50);
    let topic = "bosdyn:channel:bosdyn:channel=robot-id-requests";
    let raw = query(
        &tables,
        &format!(r#"SELECT data FROM "{topic}" ORDER BY log_time"#),
    );
    let bddf = robolog::open(&paths[2]).unwrap();
    let stored: Vec<Vec<u8>> = bddf
        .messages()
        .topics([topic])
        .iter()
        .unwrap()
        .map(|m| m.unwrap().data.to_vec())
        .collect();
    assert_eq!(
        stored.iter().map(Vec::len).collect::<Vec<_>>(),
        [20, 25, 25]
    );
    let got: Vec<Vec<u8>> = raw
        .iter()
        .map(|r| {
            base64::engine::general_purpose::STANDARD
                .decode(r["data"].as_str().unwrap())
                .unwrap()
        })
        .collect();
    assert_eq!(got, stored);
}

#[test]
fn json_columns_and_time_literals() {
    let tables = LogTables::open([testdata::path("samples/demo-zstd.mcap")]).unwrap();
    let got = query(
        &tables,
        r#"SELECT count(*) AS n, sum(seq) AS s, min(label) AS l FROM "/points"
           WHERE log_time >= '2023-11-14T22:13:21Z' AND log_time < '2023-11-14T22:13:22Z'"#,
    );
    // Messages i = 102, 105, …, 198 (every third, 100 Hz, from 22:13:20).
    let seqs: Vec<u64> = (100..200).filter(|i| i % 3 == 0).collect();
    assert_eq!(got[0]["n"], seqs.len());
    assert_eq!(got[0]["s"], seqs.iter().sum::<u64>());
    assert_eq!(got[0]["l"], "p102");
}

/// An MCAP file of `count` float64 samples at 100 Hz in small zstd chunks, and the times.
fn long_log(count: u64) -> (Vec<u8>, u64) {
    let start = 1_700_000_000_000_000_000u64;
    let options = WriteOptions::new()
        .compression(robolog::mcap::Compression::Zstd)
        .chunk_size(Some(4096));
    let mut writer = Writer::new(Vec::new(), options).unwrap();
    let schema = writer
        .register_schema("p/Sample", "ros1msg", b"float64 x\nuint32 i\n")
        .unwrap();
    let channel = writer
        .register_channel("/sample", "ros1", schema, Default::default())
        .unwrap();
    for i in 0..count {
        let mut data = (i as f64 * 0.5).to_le_bytes().to_vec();
        data.extend_from_slice(&(i as u32).to_le_bytes());
        writer
            .write_message(&robolog::mcap::Message {
                channel_id: channel,
                sequence: i as u32,
                log_time: start + i * 10_000_000,
                publish_time: start + i * 10_000_000,
                data: &data,
            })
            .unwrap();
    }
    (writer.finish().unwrap(), start)
}

#[test]
fn a_time_range_never_decompresses_the_chunks_outside_it() {
    let count = 20_000u64;
    let (mut data, start) = long_log(count);
    // 1% of the log: messages 10000..10200.
    let (lo, hi) = (start + 10_000 * 10_000_000, start + 10_200 * 10_000_000);
    let reader = McapReader::open(data.clone()).unwrap();
    let chunks = reader.summary().chunk_indexes.clone();
    assert!(chunks.len() > 100, "{}", chunks.len());
    // Ruin the compressed records of every chunk outside the range: reading one fails.
    let mut kept = 0;
    for chunk in &chunks {
        if chunk.message_end_time >= lo && chunk.message_start_time < hi {
            kept += 1;
            continue;
        }
        // Opcode, length, start, end, uncompressed size and CRC, "zstd", records length.
        let records = (chunk.chunk_start_offset + 1 + 8 + 8 + 8 + 8 + 4 + 4 + 4 + 8) as usize;
        data[records..records + 8].copy_from_slice(b"RUINED!!");
    }
    assert!(kept <= 3, "{kept} chunks hold the range");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.mcap");
    std::fs::write(&path, &data).unwrap();
    let tables = LogTables::open([&path]).unwrap();
    let sql = format!(
        r#"SELECT count(*) AS n, avg(x) AS x FROM "/sample" WHERE log_time >= {lo} AND log_time < {hi}"#
    );
    let sql = sql
        .replace(&lo.to_string(), &format!("to_timestamp_nanos({lo})"))
        .replace(&hi.to_string(), &format!("to_timestamp_nanos({hi})"));
    let got = query(&tables, &sql);
    assert_eq!(got[0]["n"], 200);
    let expected = (10_000..10_200).map(|i| i as f64 * 0.5).sum::<f64>() / 200.0;
    assert!(close(got[0]["x"].as_f64().unwrap(), expected), "{got:?}");
    // The same on `messages`, and the whole log: which does read the ruined chunks.
    let got = query(
        &tables,
        &format!(
            "SELECT count(*) AS n FROM messages WHERE log_time >= to_timestamp_nanos({lo}) AND log_time < to_timestamp_nanos({hi})"
        ),
    );
    assert_eq!(got[0]["n"], 200);
    assert!(
        tables
            .sql_blocking(r#"SELECT avg(x) FROM "/sample""#)
            .is_err()
    );
}

/// ROS 2 messages: a bag directory is one log, each topic a table, `builtin_interfaces/Time`
/// stamps `{sec, nanosec}` structs; counts and values from the decoder.
#[test]
fn ros2_bag_directories_are_tables_of_their_topics() {
    let path = testdata::path("rosbag2/mcap-talker");
    let tables = LogTables::open([&path]).unwrap();
    assert_eq!(
        tables.topics().collect::<Vec<_>>(),
        ["/parameter_events", "/rosout", "/topic"]
    );
    let got = query(
        &tables,
        r#"SELECT count(*) AS n, max(stamp.sec) AS sec, sum(stamp.nanosec) AS ns, max(msg) AS msg FROM "/rosout""#,
    );
    let log = robolog::open(&path).unwrap();
    let mut decoder = Decoder::new();
    let (mut n, mut sec, mut ns, mut msg) = (0u64, i64::MIN, 0u64, String::new());
    for message in log.messages().topics(["/rosout"]).iter().unwrap() {
        let message = message.unwrap();
        let robolog::Decoded::Cdr(m) = decoder.decode(&message).unwrap() else {
            panic!()
        };
        n += 1;
        sec = sec.max(m.get("stamp.sec").unwrap().as_i64().unwrap());
        ns += m.get("stamp.nanosec").unwrap().as_u64().unwrap();
        msg = msg.max(m.get("msg").unwrap().as_str().unwrap().to_owned());
    }
    assert_eq!(n, 10);
    assert_eq!(got, [json!({"n": n, "sec": sec, "ns": ns, "msg": msg})]);
    assert_eq!(msg, "Publishing: 'Hello, world! 9'");
    let topic = query(
        &tables,
        r#"SELECT count(*) AS n, min(data) AS first FROM "/topic""#,
    );
    assert_eq!(topic, [json!({"n": 10, "first": "Hello, world! 0"})]);
    // A topic without messages is an empty table with its columns.
    let empty = query(
        &tables,
        r#"SELECT count(*) AS n, count(node) AS nodes FROM "/parameter_events""#,
    );
    assert_eq!(empty, [json!({"n": 0, "nodes": 0})]);
}

/// A directory of logs: its files and its ROS 2 bag sub-directories, topics merged.
#[test]
fn a_directory_of_logs_is_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        testdata::path("bags/generated/ros_comm/ref_lz4.bag"),
        dir.path().join("a.bag"),
    )
    .unwrap();
    std::fs::copy(
        testdata::path("samples/demo-zstd.mcap"),
        dir.path().join("b.mcap"),
    )
    .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a log").unwrap();
    let bag = dir.path().join("talker");
    std::fs::create_dir(&bag).unwrap();
    for name in ["metadata.yaml", "talker.mcap"] {
        std::fs::copy(
            testdata::path(format!("rosbag2/mcap-talker/{name}")),
            bag.join(name),
        )
        .unwrap();
    }
    let tables = LogTables::open([dir.path()]).unwrap();
    let got = query(
        &tables,
        "SELECT count(*) AS n, count(DISTINCT file) AS files FROM channels",
    );
    assert_eq!(got, [json!({"n": 3 + 3 + 3, "files": 3})]);
    let chatter = query(&tables, r#"SELECT count(*) AS n FROM "/chatter""#);
    assert_eq!(chatter, [json!({"n": 150})]);
    let topic = query(&tables, r#"SELECT count(*) AS n FROM "/topic""#);
    assert_eq!(topic, [json!({"n": 10})]);
}
