//! Every sample exported to Parquet and read back: one row per message, in log-time order,
//! with the values robolog's decoder gives for the same message.

use base64::Engine as _;
use robolog::{Decoder, Message};
use robolog_arrow::{ExportOptions, topic_file_stem};
use serde_json::{Value, json};

use crate::support::{read_parquet, rows, samples};

/// What a row must hold (without its time columns) for `message`, computed without
/// robolog-arrow: the bytes for topics exported raw, the decoder's JSON for ROS 1, ROS 2 and
/// JSON messages, the little-endian samples for BDDF POD blocks.
fn expected(decoder: &mut Decoder, message: &Message, raw: bool) -> Value {
    let channel = &message.channel;
    if raw {
        return json!({ "data": base64::engine::general_purpose::STANDARD.encode(&message.data) });
    }
    match channel.message_encoding.as_str() {
        "ros1" | "cdr" | "json" => {
            let decoded = decoder.decode(message).unwrap();
            let mut value: Value = serde_json::from_str(&decoded.to_json()).unwrap();
            drop_empty_messages(&mut value);
            value
        }
        "bddf-pod" => {
            let dims: Vec<usize> = channel.metadata["bddf:dimensions"]
                .split(',')
                .filter(|d| !d.is_empty())
                .map(|d| d.parse().unwrap())
                .collect();
            let numbers: Vec<Value> = match channel.metadata["bddf:pod_type"].as_str() {
                "float64" => message
                    .data
                    .chunks_exact(8)
                    .map(|c| json!(f64::from_le_bytes(c.try_into().unwrap())))
                    .collect(),
                "float32" => message
                    .data
                    .chunks_exact(4)
                    .map(|c| json!(f32::from_le_bytes(c.try_into().unwrap())))
                    .collect(),
                "int32" => message
                    .data
                    .chunks_exact(4)
                    .map(|c| json!(i32::from_le_bytes(c.try_into().unwrap())))
                    .collect(),
                other => panic!("no test for POD type {other}"),
            };
            let per_sample: usize = dims.iter().product();
            let samples: Vec<Value> = if dims.is_empty() {
                numbers
            } else {
                numbers
                    .chunks(per_sample)
                    .map(|s| Value::Array(s.to_vec()))
                    .collect()
            };
            json!({ "samples": samples })
        }
        other => panic!("{}: {other} messages were not exported raw", channel.topic),
    }
}

/// Messages without fields have no column (Parquet has no empty groups).
fn drop_empty_messages(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !matches!(v, Value::Object(m) if m.is_empty()));
            map.values_mut().for_each(drop_empty_messages);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_empty_messages),
        _ => {}
    }
}

#[test]
fn every_sample_exports_one_row_per_message_with_the_decoders_values() {
    let mut decoder = Decoder::new();
    let mut checked_rows = 0;
    let mut ros2_rows = 0;
    for path in samples() {
        let log = robolog::open(&path).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let report = robolog_arrow::export(
            &[&log],
            dir.path(),
            ExportOptions::new().raw_undecodable(true),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let summary = log.summary().unwrap();
        assert_eq!(report.messages, summary.message_count, "{}", path.display());
        let mut rows_in_files = 0;
        for file in &report.files {
            assert_eq!(
                file.path.file_name().unwrap().to_string_lossy(),
                format!("{}.parquet", topic_file_stem(&file.topic))
            );
            let batches = read_parquet(&file.path);
            let got = rows(&batches);
            assert_eq!(got.len() as u64, file.rows);
            let messages: Vec<Message> = log
                .messages()
                .topics([file.topic.as_str()])
                .iter()
                .unwrap()
                .map(Result::unwrap)
                // A glob-looking topic would also match others: keep exact ones.
                .filter(|m| m.channel.topic == file.topic)
                .collect();
            assert_eq!(
                messages.len(),
                got.len(),
                "{} {}",
                path.display(),
                file.topic
            );
            for (message, mut row) in messages.iter().zip(got) {
                let row = row.as_object_mut().unwrap();
                assert_eq!(row.remove("log_time").unwrap(), json!(message.log_time_ns));
                assert_eq!(
                    row.remove("publish_time").unwrap(),
                    message.publish_time_ns.map_or(Value::Null, |t| json!(t))
                );
                let raw = report.raw_topics.contains(&file.topic);
                let want = expected(&mut decoder, message, raw);
                if message.channel.message_encoding == "cdr" && !raw {
                    ros2_rows += 1;
                }
                assert_eq!(
                    Value::Object(row.clone()),
                    want,
                    "{} {} at {}",
                    path.display(),
                    file.topic,
                    message.log_time_ns
                );
            }
            rows_in_files += file.rows;
            checked_rows += file.rows;
        }
        assert_eq!(rows_in_files, summary.message_count, "{}", path.display());
    }
    assert!(checked_rows > 11_000, "{checked_rows}");
    assert!(ros2_rows > 50, "{ros2_rows}");
}
