//! Files we write are read by the official Python `mcap` package with identical messages,
//! attachments and metadata (venv from scripts/interop-venv.sh).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ffi::OsStr;

use robolog_mcap::{Attachment, Compression, Message, Metadata, WriteOptions, Writer};
use serde_json::Value;

/// A file with two schemas, a schemaless channel, out-of-order times, several chunks, an
/// attachment (streamed from a reader) and a metadata record.
/// (topic, sequence, log time, data) of each message written.
type Written = Vec<(String, u32, u64, Vec<u8>)>;

fn write(opts: WriteOptions) -> (Vec<u8>, Written) {
    let mut w = Writer::new(Vec::new(), opts.profile("ros1")).unwrap();
    let s1 = w
        .register_schema("std_msgs/String", "ros1msg", b"string data\n")
        .unwrap();
    let s2 = w
        .register_schema("demo.Point", "jsonschema", b"{\"type\":\"object\"}")
        .unwrap();
    let mut md = BTreeMap::new();
    md.insert(Cow::Borrowed("callerid"), Cow::Borrowed("/talker"));
    md.insert(Cow::Borrowed("latching"), Cow::Borrowed("0"));
    let c1 = w.register_channel("/chatter", "ros1", s1, md).unwrap();
    let c2 = w
        .register_channel("/points", "json", s2, BTreeMap::new())
        .unwrap();
    let c3 = w
        .register_channel("/blob", "application/octet-stream", 0, BTreeMap::new())
        .unwrap();
    let mut written = Vec::new();
    for i in 0..2000u64 {
        let (channel, topic) = match i % 3 {
            0 => (c1, "/chatter"),
            1 => (c2, "/points"),
            _ => (c3, "/blob"),
        };
        let data: Vec<u8> = match i % 3 {
            0 => {
                let text = format!("hello {i}");
                let mut d = (text.len() as u32).to_le_bytes().to_vec();
                d.extend_from_slice(text.as_bytes());
                d
            }
            1 => format!("{{\"x\":{i}}}").into_bytes(),
            _ => (0..(i % 700)).map(|j| (j * 31 + i) as u8).collect(),
        };
        // Every 5th message goes back in time.
        let log_time = 1_000_000 + i * 1000 - if i % 5 == 2 { 3500 } else { 0 };
        w.write_message(&Message {
            channel_id: channel,
            sequence: i as u32,
            log_time,
            publish_time: log_time + 1,
            data: &data,
        })
        .unwrap();
        written.push((topic.to_owned(), i as u32, log_time, data));
        if i == 1000 {
            let payload: Vec<u8> = (0..100_000u32).map(|j| (j % 251) as u8).collect();
            w.write_attachment_from(
                5,
                6,
                "calib.bin",
                "application/octet-stream",
                payload.len() as u64,
                &mut &payload[..],
            )
            .unwrap();
            w.write_attachment(&Attachment {
                log_time: 7,
                create_time: 8,
                name: Cow::Borrowed("notes.txt"),
                media_type: Cow::Borrowed("text/plain"),
                data: Cow::Borrowed(b"hello"),
                crc: 0,
            })
            .unwrap();
            let mut m = BTreeMap::new();
            m.insert(Cow::Borrowed("robot"), Cow::Borrowed("r2"));
            w.write_metadata(&Metadata {
                name: Cow::Borrowed("run"),
                metadata: m,
            })
            .unwrap();
        }
    }
    (w.finish().unwrap(), written)
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn python_mcap_reads_what_we_write() {
    let Some(python) = robolog_testkit::interop::python() else {
        return;
    };
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/interop/read_mcap.py");
    let dir = std::env::temp_dir().join(format!("robolog-mcap-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let variants = [
        (
            "zstd",
            WriteOptions::new()
                .compression(Compression::Zstd)
                .chunk_size(Some(16 * 1024)),
        ),
        (
            "lz4",
            WriteOptions::new()
                .compression(Compression::Lz4)
                .chunk_size(Some(16 * 1024)),
        ),
        (
            "none",
            WriteOptions::new()
                .compression(Compression::None)
                .chunk_size(Some(16 * 1024)),
        ),
        ("unchunked", WriteOptions::new().chunk_size(None)),
    ];
    for (name, opts) in variants {
        let (bytes, written) = write(opts);
        let path = dir.join(format!("{name}.mcap"));
        std::fs::write(&path, &bytes).unwrap();
        let out = robolog_testkit::interop::run(&python, &script, &[OsStr::new(&path)])
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let got: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(got["profile"], "ros1");
        assert_eq!(got["message_count"], 2000, "{name}");
        if name != "unchunked" {
            assert!(
                got["chunk_count"].as_u64().unwrap() > 10,
                "{name}: several chunks"
            );
        }
        // Streamed: file order, identical fields and bytes.
        let streamed = got["streamed"].as_array().unwrap();
        assert_eq!(streamed.len(), written.len(), "{name}");
        for (g, (topic, seq, log_time, data)) in streamed.iter().zip(&written) {
            assert_eq!(g["topic"], *topic);
            assert_eq!(g["sequence"], *seq);
            assert_eq!(g["log_time"], *log_time);
            assert_eq!(g["publish_time"], log_time + 1);
            assert_eq!(g["data"], hex(data), "{name} message {seq}");
        }
        assert_eq!(streamed[0]["schema"], "std_msgs/String");
        assert_eq!(streamed[2]["schema"], Value::Null, "schemaless channel");
        // Indexed (unchunked files have no chunk index, so the Python reader falls back): log
        // time order, ties in file order.
        let mut by_time = written.clone();
        by_time.sort_by_key(|m| m.2);
        let indexed = got["indexed"].as_array().unwrap();
        assert_eq!(indexed.len(), by_time.len(), "{name}");
        for (g, (_, seq, log_time, _)) in indexed.iter().zip(&by_time) {
            assert_eq!(
                (
                    g["log_time"].as_u64().unwrap(),
                    g["sequence"].as_u64().unwrap()
                ),
                (*log_time, u64::from(*seq)),
                "{name}"
            );
        }
        let attachments = got["attachments"].as_array().unwrap();
        assert_eq!(attachments.len(), 2, "{name}");
        assert_eq!(attachments[0]["name"], "calib.bin");
        let payload: Vec<u8> = (0..100_000u32).map(|j| (j % 251) as u8).collect();
        assert_eq!(attachments[0]["data"], hex(&payload));
        assert_eq!(
            (
                attachments[0]["log_time"].as_u64(),
                attachments[0]["create_time"].as_u64()
            ),
            (Some(5), Some(6))
        );
        assert_eq!(attachments[1]["data"], hex(b"hello"));
        assert_eq!(got["metadata"][0]["name"], "run");
        assert_eq!(got["metadata"][0]["metadata"]["robot"], "r2");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
