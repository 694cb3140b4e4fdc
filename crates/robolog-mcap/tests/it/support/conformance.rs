//! The conformance suite's JSON format (spec section 11): records to JSON for the streamed and
//! indexed runners, and JSON back to records for the writer runner.

#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::BTreeMap;

use robolog_mcap::{Attachment, Channel, Header, Message, Metadata, Record, Schema, WriteOptions};
use serde_json::{Value, json};

fn int(v: impl ToString) -> Value {
    Value::String(v.to_string())
}

fn bytes(data: &[u8]) -> Value {
    Value::Array(data.iter().map(int).collect())
}

fn string_map<'a>(map: impl IntoIterator<Item = (&'a Cow<'a, str>, &'a Cow<'a, str>)>) -> Value {
    Value::Object(
        map.into_iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect(),
    )
}

fn int_map(map: &BTreeMap<u16, u64>) -> Value {
    Value::Object(map.iter().map(|(k, v)| (k.to_string(), int(v))).collect())
}

fn record(kind: &str, mut fields: Vec<(&str, Value)>) -> Value {
    fields.sort_by(|a, b| a.0.cmp(b.0));
    json!({
        "type": kind,
        "fields": fields.into_iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
    })
}

/// A record in the suite's JSON form, `None` for records the suite does not list (Chunk,
/// MessageIndex, unknown opcodes).
pub(crate) fn record_json(r: &Record<'_>) -> Option<Value> {
    Some(match r {
        Record::Header(h) => record(
            "Header",
            vec![("library", json!(h.library)), ("profile", json!(h.profile))],
        ),
        Record::Footer(f) => record(
            "Footer",
            vec![
                ("summary_crc", int(f.summary_crc)),
                ("summary_offset_start", int(f.summary_offset_start)),
                ("summary_start", int(f.summary_start)),
            ],
        ),
        Record::Schema(s) => schema_json(s),
        Record::Channel(c) => channel_json(c),
        Record::Message(m) => message_json(m),
        Record::ChunkIndex(c) => record(
            "ChunkIndex",
            vec![
                ("chunk_length", int(c.chunk_length)),
                ("chunk_start_offset", int(c.chunk_start_offset)),
                ("compressed_size", int(c.compressed_size)),
                ("compression", json!(c.compression)),
                ("message_end_time", int(c.message_end_time)),
                ("message_index_length", int(c.message_index_length)),
                ("message_index_offsets", int_map(&c.message_index_offsets)),
                ("message_start_time", int(c.message_start_time)),
                ("uncompressed_size", int(c.uncompressed_size)),
            ],
        ),
        Record::Attachment(a) => record(
            "Attachment",
            vec![
                ("create_time", int(a.create_time)),
                ("data", bytes(&a.data)),
                ("log_time", int(a.log_time)),
                ("media_type", json!(a.media_type)),
                ("name", json!(a.name)),
            ],
        ),
        Record::AttachmentIndex(a) => record(
            "AttachmentIndex",
            vec![
                ("create_time", int(a.create_time)),
                ("data_size", int(a.data_size)),
                ("length", int(a.length)),
                ("log_time", int(a.log_time)),
                ("media_type", json!(a.media_type)),
                ("name", json!(a.name)),
                ("offset", int(a.offset)),
            ],
        ),
        Record::Statistics(s) => statistics_json(s),
        Record::Metadata(m) => record(
            "Metadata",
            vec![
                ("metadata", string_map(&m.metadata)),
                ("name", json!(m.name)),
            ],
        ),
        Record::MetadataIndex(m) => record(
            "MetadataIndex",
            vec![
                ("length", int(m.length)),
                ("name", json!(m.name)),
                ("offset", int(m.offset)),
            ],
        ),
        Record::SummaryOffset(s) => record(
            "SummaryOffset",
            vec![
                ("group_length", int(s.group_length)),
                ("group_opcode", int(s.group_opcode)),
                ("group_start", int(s.group_start)),
            ],
        ),
        Record::DataEnd(d) => record(
            "DataEnd",
            vec![("data_section_crc", int(d.data_section_crc))],
        ),
        Record::Chunk(_) | Record::MessageIndex(_) | Record::Unknown { .. } => return None,
    })
}

pub(crate) fn schema_json(s: &Schema<'_>) -> Value {
    record(
        "Schema",
        vec![
            ("data", bytes(&s.data)),
            ("encoding", json!(s.encoding)),
            ("id", int(s.id)),
            ("name", json!(s.name)),
        ],
    )
}

pub(crate) fn channel_json(c: &Channel<'_>) -> Value {
    record(
        "Channel",
        vec![
            ("id", int(c.id)),
            ("message_encoding", json!(c.message_encoding)),
            ("metadata", string_map(&c.metadata)),
            ("schema_id", int(c.schema_id)),
            ("topic", json!(c.topic)),
        ],
    )
}

pub(crate) fn message_json(m: &Message<'_>) -> Value {
    record(
        "Message",
        vec![
            ("channel_id", int(m.channel_id)),
            ("data", bytes(m.data)),
            ("log_time", int(m.log_time)),
            ("publish_time", int(m.publish_time)),
            ("sequence", int(m.sequence)),
        ],
    )
}

pub(crate) fn statistics_json(s: &robolog_mcap::Statistics) -> Value {
    record(
        "Statistics",
        vec![
            ("attachment_count", int(s.attachment_count)),
            ("channel_count", int(s.channel_count)),
            ("channel_message_counts", int_map(&s.channel_message_counts)),
            ("chunk_count", int(s.chunk_count)),
            ("message_count", int(s.message_count)),
            ("message_end_time", int(s.message_end_time)),
            ("message_start_time", int(s.message_start_time)),
            ("metadata_count", int(s.metadata_count)),
            ("schema_count", int(s.schema_count)),
        ],
    )
}

/// The features of a test file (from its JSON).
pub(crate) fn features(expected: &Value) -> Vec<String> {
    expected["meta"]["variant"]["features"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// Writer options for a variant (spec section 11, writer protocol).
pub(crate) fn writer_options(features: &[String]) -> WriteOptions {
    let has = |f: &str| features.iter().any(|x| x == f);
    WriteOptions::new()
        .profile("")
        .library("")
        .compression(robolog_mcap::Compression::None)
        .threads(0)
        .chunk_size(has("ch").then_some(u64::MAX))
        .message_indexes(has("mx"))
        .chunk_indexes(has("chx"))
        .attachment_indexes(has("ax"))
        .metadata_indexes(has("mdx"))
        .statistics(has("st"))
        .summary_offsets(has("sum"))
        .repeat_schemas(has("rsh"))
        .repeat_channels(has("rch"))
        .crcs(true)
}

fn fields(r: &Value) -> BTreeMap<String, Value> {
    r["fields"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| Some((p[0].as_str()?.to_owned(), p[1].clone())))
                .collect()
        })
        .unwrap_or_default()
}

fn num<T: std::str::FromStr>(f: &BTreeMap<String, Value>, name: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    f[name]
        .as_str()
        .expect("integer string")
        .parse()
        .expect("integer")
}

fn text(f: &BTreeMap<String, Value>, name: &str) -> String {
    f[name].as_str().expect("string").to_owned()
}

fn data(f: &BTreeMap<String, Value>, name: &str) -> Vec<u8> {
    f[name]
        .as_array()
        .expect("byte array")
        .iter()
        .map(|b| b.as_str().expect("byte string").parse().expect("byte"))
        .collect()
}

fn map(f: &BTreeMap<String, Value>, name: &str) -> BTreeMap<Cow<'static, str>, Cow<'static, str>> {
    f[name]
        .as_object()
        .expect("map")
        .iter()
        .map(|(k, v)| {
            (
                Cow::Owned(k.clone()),
                Cow::Owned(v.as_str().expect("value").to_owned()),
            )
        })
        .collect()
}

/// Replays the input records of an expected JSON through our writer (writer protocol).
pub(crate) fn write_from_json(expected: &Value) -> Vec<u8> {
    let opts = writer_options(&features(expected));
    let records = expected["records"].as_array().expect("records");
    let header = records.iter().find(|r| r["type"] == "Header").map(fields);
    let mut opts = opts;
    if let Some(h) = header {
        opts = opts
            .profile(text(&h, "profile"))
            .library(text(&h, "library"));
    }
    let mut w = robolog_mcap::Writer::new(Vec::new(), opts).expect("writer");
    for r in records {
        let f = fields(r);
        match r["type"].as_str().expect("type") {
            "Schema" => w
                .add_schema(&Schema {
                    id: num(&f, "id"),
                    name: Cow::Owned(text(&f, "name")),
                    encoding: Cow::Owned(text(&f, "encoding")),
                    data: Cow::Owned(data(&f, "data")),
                })
                .expect("schema"),
            "Channel" => w
                .add_channel(&Channel {
                    id: num(&f, "id"),
                    schema_id: num(&f, "schema_id"),
                    topic: Cow::Owned(text(&f, "topic")),
                    message_encoding: Cow::Owned(text(&f, "message_encoding")),
                    metadata: map(&f, "metadata"),
                })
                .expect("channel"),
            "Message" => {
                let payload = data(&f, "data");
                w.write_message(&Message {
                    channel_id: num(&f, "channel_id"),
                    sequence: num(&f, "sequence"),
                    log_time: num(&f, "log_time"),
                    publish_time: num(&f, "publish_time"),
                    data: &payload,
                })
                .expect("message")
            }
            "Attachment" => w
                .write_attachment(&Attachment {
                    log_time: num(&f, "log_time"),
                    create_time: num(&f, "create_time"),
                    name: Cow::Owned(text(&f, "name")),
                    media_type: Cow::Owned(text(&f, "media_type")),
                    data: Cow::Owned(data(&f, "data")),
                    crc: 0,
                })
                .expect("attachment"),
            "Metadata" => w
                .write_metadata(&Metadata {
                    name: Cow::Owned(text(&f, "name")),
                    metadata: map(&f, "metadata"),
                })
                .expect("metadata"),
            _ => {}
        }
    }
    let _ = Header::default();
    w.finish().expect("finish")
}
