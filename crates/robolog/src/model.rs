//! The one message model every format is read into and written from: channels with their
//! schemas, messages, attachments and metadata.

use std::collections::BTreeMap;
use std::sync::Arc;

use robolog_framing::Bytes;
use serde::Serialize;

/// How the messages of a channel are described: a named type, the language of its
/// definition and the definition itself.
///
/// | source | name | encoding | data |
/// |---|---|---|---|
/// | bag 2.0 / 1.2 | message type (`pkg/Type`) | `ros1msg` | the connection's `message_definition` |
/// | MCAP | Schema record | Schema record | Schema record |
/// | BDDF message series | type name | `protobuf` for protobuf content, the content type otherwise | empty (BDDF stores no definitions) |
/// | BDDF POD series | element type and dimensions (`float32[3]`) | `bddf-pod` | empty |
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Schema {
    /// Id within its log (MCAP schema id; numbered from 1 for the other formats). Never 0.
    pub id: u32,
    /// The type name.
    pub name: String,
    /// How [`Schema::data`] is written (`ros1msg`, `protobuf`, `jsonschema`, …).
    pub encoding: String,
    /// The definition (text for `ros1msg`).
    #[serde(serialize_with = "serialize_text_or_len")]
    pub data: Bytes,
}

impl Schema {
    /// The definition as text, when it is UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.data).ok()
    }
}

/// A stream of messages of one kind on one topic.
///
/// | source | id | topic | message_encoding | metadata |
/// |---|---|---|---|---|
/// | bag 2.0 | connection id | connection topic | `ros1` | every connection-header field but `type` and `message_definition` (`topic`, `md5sum`, `callerid`, `latching` as `0`/`1`, …) |
/// | bag 1.2 | synthetic id per topic and definition | topic | `ros1` | `md5sum` (and the other header fields) |
/// | MCAP | channel id | topic | channel's | channel's |
/// | BDDF | series index | series identifier rendered `type:k=v,…` | `protobuf`, `json`, the content type, or `bddf-pod` | `bddf:*` keys (see [`crate::encodings`]) |
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Channel {
    /// Id within its log.
    pub id: u32,
    /// The topic.
    pub topic: String,
    /// How each message's bytes are encoded (`ros1`, `json`, `protobuf`, `cdr`, `bddf-pod`, …).
    pub message_encoding: String,
    /// The schema, for encodings that need one.
    pub schema: Option<Arc<Schema>>,
    /// Key-value metadata.
    pub metadata: BTreeMap<String, String>,
}

impl Channel {
    /// The schema's name (the message type), or `""`.
    pub fn type_name(&self) -> &str {
        self.schema.as_deref().map_or("", |s| s.name.as_str())
    }

    /// Same topic, encoding, schema content and metadata (ids aside): two such channels can be
    /// merged into one.
    pub fn same_content(&self, other: &Channel) -> bool {
        self.topic == other.topic
            && self.message_encoding == other.message_encoding
            && self.metadata == other.metadata
            && match (&self.schema, &other.schema) {
                (None, None) => true,
                (Some(a), Some(b)) => {
                    a.name == b.name && a.encoding == b.encoding && a.data == b.data
                }
                _ => false,
            }
    }
}

/// One message.
///
/// `data` is a zero-copy slice of the input (or of the decompressed chunk). Formats without
/// publish times or sequence numbers (bags, BDDF) leave those `None`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The channel it belongs to.
    pub channel: Arc<Channel>,
    /// When it was logged (bag record time, MCAP log_time, BDDF block timestamp), in
    /// nanoseconds since 1970.
    pub log_time_ns: u64,
    /// When it was published (MCAP).
    pub publish_time_ns: Option<u64>,
    /// Its sequence number (MCAP).
    pub sequence: Option<u32>,
    /// The serialized message.
    pub data: Bytes,
}

/// A file stored in a log (MCAP attachments).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Attachment {
    /// File name.
    pub name: String,
    /// Media type, such as `application/json`.
    pub media_type: String,
    /// When it was logged, in nanoseconds.
    pub log_time_ns: u64,
    /// When the file was created, in nanoseconds.
    pub create_time_ns: u64,
    /// Its content.
    #[serde(serialize_with = "serialize_len")]
    pub data: Bytes,
}

/// A named set of key-value pairs describing the whole log (MCAP metadata records, BDDF file
/// annotations as [`crate::encodings::BDDF_ANNOTATIONS`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Metadata {
    /// Its name.
    pub name: String,
    /// The pairs.
    pub entries: BTreeMap<String, String>,
}

fn serialize_len<S: serde::Serializer>(data: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(data.len() as u64)
}

/// Text schemas as text; binary ones (a protobuf descriptor set) as their length.
fn serialize_text_or_len<S: serde::Serializer>(data: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    match std::str::from_utf8(data) {
        Ok(text) => s.serialize_str(text),
        Err(_) => s.serialize_u64(data.len() as u64),
    }
}
