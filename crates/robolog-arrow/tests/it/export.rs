//! Export: file names, key-value metadata, formats, merged inputs, refusals and atomicity.

use std::collections::BTreeMap;
use std::path::Path;

use arrow::ipc::reader::FileReader;
use parquet::file::reader::{FileReader as _, SerializedFileReader};
use robolog::mcap::{WriteOptions, Writer};
use robolog_arrow::{Error, ExportFormat, ExportOptions};
use robolog_testkit::testdata;

use crate::support::{read_parquet, rows};

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn parquet_files_carry_the_topic_and_its_definition() {
    let log = robolog::open(testdata::path("bags/generated/ros_comm/ref_bz2.bag")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = robolog_arrow::export(&[&log], dir.path(), ExportOptions::new()).unwrap();
    assert_eq!(
        files_in(dir.path()),
        ["chatter.parquet", "custom.parquet", "imu.parquet"]
    );
    assert_eq!(report.messages, 150);
    let reader =
        SerializedFileReader::new(std::fs::File::open(dir.path().join("imu.parquet")).unwrap())
            .unwrap();
    let metadata = reader.metadata().file_metadata();
    let kv: BTreeMap<String, String> = metadata
        .key_value_metadata()
        .unwrap()
        .iter()
        .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(kv["robolog:topic"], "/imu");
    assert_eq!(kv["robolog:schema_name"], "sensor_msgs/Imu");
    assert_eq!(kv["robolog:schema_encoding"], "ros1msg");
    assert_eq!(kv["robolog:message_encoding"], "ros1");
    let imu = log.channels().iter().find(|c| c.topic == "/imu").unwrap();
    assert_eq!(
        kv["robolog:schema"],
        imu.schema.as_ref().unwrap().text().unwrap()
    );
    assert_eq!(metadata.num_rows(), 50);
    // Readers of the stored Arrow schema (pyarrow, arrow-rs) see the same keys.
    let arrow = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(dir.path().join("imu.parquet")).unwrap(),
    )
    .unwrap();
    let mut stored: BTreeMap<String, String> = kv.clone();
    stored.remove("ARROW:schema");
    assert_eq!(
        arrow
            .schema()
            .metadata()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
        stored
    );
    let column = reader.metadata().row_group(0).column(3);
    assert_eq!(
        column.compression(),
        parquet::basic::Compression::ZSTD(Default::default())
    );
    // Numbers are written plain (readings, stamps and counters rarely repeat: a dictionary
    // is work thrown away); strings keep their dictionary (the frame id).
    use parquet::basic::{Encoding, Type};
    let dictionary = |c: &parquet::file::metadata::ColumnChunkMetaData| {
        c.encodings()
            .any(|e| matches!(e, Encoding::RLE_DICTIONARY | Encoding::PLAIN_DICTIONARY))
    };
    let columns = reader.metadata().row_group(0).columns();
    let (strings, numbers): (Vec<_>, Vec<_>) = columns
        .iter()
        .partition(|c| c.column_type() == Type::BYTE_ARRAY);
    let doubles = numbers
        .iter()
        .filter(|c| c.column_type() == Type::DOUBLE)
        .count();
    assert!(doubles >= 10, "{doubles} double columns");
    assert!(numbers.iter().any(|c| c.column_type() == Type::INT64));
    assert!(numbers.iter().all(|c| !dictionary(c)));
    assert!(!strings.is_empty() && strings.iter().all(|c| dictionary(c)));
}

#[test]
fn several_inputs_are_merged_by_topic_in_log_time_order() {
    let a = robolog::open(testdata::path("bags/generated/ros_comm/ref_lz4.bag")).unwrap();
    let b = robolog::open(testdata::path("samples/demo-lz4.mcap")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = robolog_arrow::export(
        &[&b, &a],
        dir.path(),
        ExportOptions::new()
            .topics(["/chatter"])
            .time_range(..1_700_000_001_000_000_000),
    )
    .unwrap();
    // 50 from the bag (2020) and the MCAP's first 33 (before 22:13:21).
    assert_eq!(report.messages, 50 + 33);
    let got = rows(&read_parquet(&dir.path().join("chatter.parquet")));
    assert_eq!(got.len(), 83);
    let times: Vec<u64> = got
        .iter()
        .map(|r| r["log_time"].as_u64().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert_eq!(got[0]["data"], "hello 0");
    assert_eq!(got[82]["data"], "hello world 97");
}

#[test]
fn arrow_ipc_files_hold_the_same_rows_and_metadata() {
    let log = robolog::open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = robolog_arrow::export(
        &[&log],
        dir.path(),
        ExportOptions::new()
            .format(ExportFormat::ArrowIpc)
            .topics(["/points", "/chatter"]),
    )
    .unwrap();
    assert_eq!(files_in(dir.path()), ["chatter.arrow", "points.arrow"]);
    let reader = FileReader::try_new(
        std::fs::File::open(dir.path().join("points.arrow")).unwrap(),
        None,
    )
    .unwrap();
    assert_eq!(
        reader.schema().metadata()["robolog:schema_encoding"],
        "jsonschema"
    );
    let batches: Vec<_> = reader.map(Result::unwrap).collect();
    let got = rows(&batches);
    assert_eq!(got.len(), 100);
    assert_eq!(got[0]["seq"], 0);
    assert_eq!(got[0]["label"], "p0");
    assert_eq!(report.files.iter().map(|f| f.rows).sum::<u64>(), 200);
}

#[test]
fn undecodable_channels_are_refused_before_anything_is_written() {
    let log = robolog::open(testdata::path("samples/demo-zstd.mcap")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let error = robolog_arrow::export(&[&log], &out, ExportOptions::new()).unwrap_err();
    assert!(matches!(error, Error::NotDecodable { .. }), "{error}");
    assert!(
        error
            .to_string()
            .starts_with("/blob: messages encoded as \"application/octet-stream\""),
        "{error}"
    );
    assert!(!out.exists());
    let report =
        robolog_arrow::export(&[&log], &out, ExportOptions::new().raw_undecodable(true)).unwrap();
    assert_eq!(report.raw_topics, ["/blob"]);
    assert_eq!(
        files_in(&out),
        ["blob.parquet", "chatter.parquet", "points.parquet"]
    );
}

/// An MCAP file whose `/chatter` holds `good` valid messages and then one cut short.
fn mcap_with_a_bad_message(good: u64) -> Vec<u8> {
    let mut writer = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
    let schema = writer
        .register_schema("std_msgs/String", "ros1msg", b"string data\n")
        .unwrap();
    let channel = writer
        .register_channel("/chatter", "ros1", schema, Default::default())
        .unwrap();
    let other = writer
        .register_channel("/fine", "ros1", schema, Default::default())
        .unwrap();
    for i in 0..good {
        for id in [channel, other] {
            writer
                .write_message(&robolog::mcap::Message {
                    channel_id: id,
                    sequence: 0,
                    log_time: 1_000 + i,
                    publish_time: 1_000 + i,
                    data: b"\x02\0\0\0hi",
                })
                .unwrap();
        }
    }
    writer
        .write_message(&robolog::mcap::Message {
            channel_id: channel,
            sequence: 0,
            log_time: 1_000 + good,
            publish_time: 0,
            data: b"\x09\0\0\0cut",
        })
        .unwrap();
    writer.finish().unwrap()
}

#[test]
fn a_failed_export_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.mcap");
    std::fs::write(&input, mcap_with_a_bad_message(100_000)).unwrap();
    let log = robolog::open(&input).unwrap();
    // Into a folder that exists: it stays, empty.
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let error = robolog_arrow::export(&[&log], &out, ExportOptions::new()).unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("/chatter: the message at log time 101000 cannot be decoded"),
        "{error}"
    );
    assert_eq!(files_in(&out), Vec::<String>::new());
    // Into folders the export creates: they go away again.
    let nested = dir.path().join("new/out");
    robolog_arrow::export(&[&log], &nested, ExportOptions::new()).unwrap_err();
    assert!(!dir.path().join("new").exists());
    assert!(out.exists());
}
