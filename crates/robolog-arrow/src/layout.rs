//! The columns of a topic ([`TopicLayout`]) and the builder of its record batches
//! ([`BatchBuilder`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, NullBufferBuilder, RecordBatch, RecordBatchOptions, TimestampNanosecondArray,
};
use arrow::buffer::ScalarBuffer;
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use robolog::{Channel, Message};

use crate::codec::{Codec, raw_members};
use crate::column::{Columns, Member};
use crate::error::{Error, Result};

/// Key-value metadata naming the topic of a file or table.
pub const META_TOPIC: &str = "robolog:topic";
/// Key-value metadata: the schema (message type) name.
pub const META_SCHEMA_NAME: &str = "robolog:schema_name";
/// Key-value metadata: the schema encoding (`ros1msg`, `jsonschema`, `protobuf`, …).
pub const META_SCHEMA_ENCODING: &str = "robolog:schema_encoding";
/// Key-value metadata: the definition text (for text schemas).
pub const META_SCHEMA: &str = "robolog:schema";
/// Key-value metadata: the definition in base64 (for binary schemas: protobuf descriptor sets).
pub const META_SCHEMA_BASE64: &str = "robolog:schema_base64";
/// Key-value metadata: the message encoding (`ros1`, `json`, …).
pub const META_MESSAGE_ENCODING: &str = "robolog:message_encoding";

/// The Arrow type of `log_time` and `publish_time`: nanoseconds since 1970, UTC.
pub fn time_type() -> DataType {
    DataType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()))
}

/// The columns the messages of one topic become, derived from the channel's schema.
///
/// Every layout starts with `log_time` (timestamp, ns, UTC, never null) and `publish_time`
/// (the same type, null where the format has none), followed by one column per top-level
/// field of the message (see the crate documentation for the rules of each encoding). A
/// message field that is itself called `log_time` or `publish_time` keeps its name, and the
/// time column gets a leading `_` instead.
///
/// ```
/// let log = robolog::open(robolog_testkit::testdata::path("samples/demo-zstd.mcap"))?;
/// let points = log.channels().iter().find(|c| c.topic == "/points").unwrap();
/// let layout = robolog_arrow::TopicLayout::new(points)?;
/// let names: Vec<_> = layout.schema().fields().iter().map(|f| f.name().as_str()).collect();
/// assert_eq!(names, ["log_time", "publish_time", "seq", "x", "label"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct TopicLayout {
    inner: Arc<LayoutInner>,
}

#[derive(Debug)]
struct LayoutInner {
    topic: String,
    schema: SchemaRef,
    members: Vec<Member>,
    raw: bool,
    type_name: String,
    metadata: HashMap<String, String>,
}

impl TopicLayout {
    /// The layout of `channel`'s messages, or why they cannot become columns (the error names
    /// the topic).
    pub fn new(channel: &Channel) -> Result<Self> {
        let described = Codec::describe(channel)?;
        Ok(Self::build(channel, described.members, false))
    }

    /// The layout of a channel whose messages are kept as they are: `log_time`,
    /// `publish_time` and `data` (binary).
    pub fn raw(channel: &Channel) -> Self {
        Self::build(channel, raw_members(), true)
    }

    /// [`TopicLayout::new`], or [`TopicLayout::raw`] when the channel's messages cannot be
    /// decoded and `raw_fallback` is set.
    pub fn for_channel(channel: &Channel, raw_fallback: bool) -> Result<Self> {
        match Self::new(channel) {
            Err(Error::NotDecodable { .. }) if raw_fallback => Ok(Self::raw(channel)),
            other => other,
        }
    }

    fn build(channel: &Channel, members: Vec<Member>, raw: bool) -> Self {
        let taken = |name: &str| members.iter().any(|m| m.name == name);
        let mut log_time = String::from("log_time");
        let mut publish_time = String::from("publish_time");
        while taken(&log_time) {
            log_time.insert(0, '_');
        }
        while taken(&publish_time) {
            publish_time.insert(0, '_');
        }
        let mut fields = vec![
            Field::new(log_time, time_type(), false),
            Field::new(publish_time, time_type(), true),
        ];
        fields.extend(members.iter().map(Member::field));
        let mut metadata = HashMap::new();
        metadata.insert(META_TOPIC.to_owned(), channel.topic.clone());
        metadata.insert(
            META_MESSAGE_ENCODING.to_owned(),
            channel.message_encoding.clone(),
        );
        if let Some(schema) = &channel.schema {
            metadata.insert(META_SCHEMA_NAME.to_owned(), schema.name.clone());
            metadata.insert(META_SCHEMA_ENCODING.to_owned(), schema.encoding.clone());
            if !schema.data.is_empty() {
                match schema.text() {
                    Some(text) => metadata.insert(META_SCHEMA.to_owned(), text.to_owned()),
                    None => {
                        use base64::Engine as _;
                        metadata.insert(
                            META_SCHEMA_BASE64.to_owned(),
                            base64::engine::general_purpose::STANDARD.encode(&schema.data),
                        )
                    }
                };
            }
        }
        TopicLayout {
            inner: Arc::new(LayoutInner {
                topic: channel.topic.clone(),
                schema: Arc::new(Schema::new(fields)),
                members,
                raw,
                type_name: channel.type_name().to_owned(),
                metadata,
            }),
        }
    }

    /// The topic.
    pub fn topic(&self) -> &str {
        &self.inner.topic
    }

    /// The Arrow schema (without metadata: see [`TopicLayout::metadata`]).
    pub fn schema(&self) -> &SchemaRef {
        &self.inner.schema
    }

    /// True for a layout of raw bytes ([`TopicLayout::raw`]).
    pub fn is_raw(&self) -> bool {
        self.inner.raw
    }

    /// What the exported files carry in their schema's metadata (and Parquet files in their
    /// key-value metadata too): [`META_TOPIC`],
    /// [`META_MESSAGE_ENCODING`], [`META_SCHEMA_NAME`], [`META_SCHEMA_ENCODING`] and the
    /// definition ([`META_SCHEMA`] or [`META_SCHEMA_BASE64`]).
    pub fn metadata(&self) -> &HashMap<String, String> {
        &self.inner.metadata
    }

    /// Checks that `channel` (of the same topic, from another file say) has this layout.
    pub fn check_channel(&self, channel: &Channel) -> Result<()> {
        let other = if self.is_raw() {
            match Codec::describe(channel) {
                Ok(_) => return Err(self.conflict(channel)),
                Err(_) => raw_members(),
            }
        } else {
            Codec::describe(channel)?.members
        };
        if other == self.inner.members {
            Ok(())
        } else {
            Err(self.conflict(channel))
        }
    }

    fn conflict(&self, channel: &Channel) -> Error {
        Error::TopicConflict {
            topic: self.inner.topic.clone(),
            first: self.inner.type_name.clone(),
            second: channel.type_name().to_owned(),
        }
    }

    /// A builder of batches with the columns at `projection` (indexes into
    /// [`TopicLayout::schema`]; `None` for all). Fields that are not selected are not decoded
    /// where the encoding allows it (ROS 1: a few leaves are read straight from the bytes).
    pub fn batch_builder(&self, projection: Option<&[usize]>) -> Result<BatchBuilder> {
        let width = self.inner.schema.fields().len();
        let projection: Vec<usize> = match projection {
            Some(p) => p.to_vec(),
            None => (0..width).collect(),
        };
        if let Some(bad) = projection.iter().find(|i| **i >= width) {
            return Err(Error::Internal(format!(
                "column {bad} of {width} projected"
            )));
        }
        let schema = Arc::new(self.inner.schema.project(&projection)?);
        let members: Vec<Member> = projection
            .iter()
            .filter(|i| **i >= 2)
            .map(|i| self.inner.members[i - 2].clone())
            .collect();
        let all_selected = members.len() == self.inner.members.len();
        Ok(BatchBuilder {
            layout: self.clone(),
            order: projection,
            schema,
            log_time: Vec::new(),
            publish_time: Vec::new(),
            publish_nulls: NullBufferBuilder::new(0),
            columns: Columns::new(&members),
            all_selected,
            codecs: HashMap::new(),
            rows: 0,
            bytes: 0,
        })
    }
}

/// Builds the record batches of one topic from its messages: [`BatchBuilder::push`] each
/// message (of any channel with the topic's layout), [`BatchBuilder::finish`] when
/// [`BatchBuilder::len`] or [`BatchBuilder::data_bytes`] reach the batch size you want.
#[derive(Debug)]
pub struct BatchBuilder {
    layout: TopicLayout,
    /// The selected columns, as indexes into the layout's schema.
    order: Vec<usize>,
    schema: SchemaRef,
    log_time: Vec<i64>,
    publish_time: Vec<i64>,
    publish_nulls: NullBufferBuilder,
    columns: Columns,
    all_selected: bool,
    /// Each channel's decoder, by the address of its (kept alive) channel.
    codecs: HashMap<usize, (Arc<Channel>, Codec)>,
    rows: usize,
    bytes: usize,
}

impl BatchBuilder {
    /// The schema of the batches (the selected columns).
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows pushed since the last batch.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when no row was pushed since the last batch.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Message bytes pushed since the last batch (what the batch's memory grows with).
    pub fn data_bytes(&self) -> usize {
        self.bytes
    }

    /// Decodes `message` into the next row. On error (the message does not match its
    /// definition) no row is added, and the builder can go on with the next message.
    pub fn push(&mut self, message: &Message) -> Result<()> {
        let channel = &message.channel;
        let key = Arc::as_ptr(channel) as usize;
        if !self.codecs.contains_key(&key) {
            let codec = if self.layout.is_raw() {
                self.layout.check_channel(channel)?;
                Codec::Raw
            } else {
                let described = Codec::describe(channel)?;
                if described.members != self.layout.inner.members {
                    return Err(self.layout.conflict(channel));
                }
                let mut codec = described.codec;
                codec.project(&self.columns, self.all_selected);
                codec
            };
            self.codecs.insert(key, (channel.clone(), codec));
        }
        let log_time = i64::try_from(message.log_time_ns).map_err(|_| Error::TimeOutOfRange {
            topic: channel.topic.clone(),
            log_time_ns: message.log_time_ns,
        })?;
        let publish_time = match message.publish_time_ns {
            Some(t) => Some(i64::try_from(t).map_err(|_| Error::TimeOutOfRange {
                topic: channel.topic.clone(),
                log_time_ns: message.log_time_ns,
            })?),
            None => None,
        };
        let Some((_, codec)) = self.codecs.get_mut(&key) else {
            return Err(Error::internal("a channel's decoder went missing"));
        };
        // A batch of no message field (`count(*)`) needs no decoding.
        if !self.columns.top.is_empty() {
            codec
                .append(&message.data, &mut self.columns)
                .map_err(|reason| Error::Message {
                    topic: channel.topic.clone(),
                    log_time_ns: message.log_time_ns,
                    reason,
                })?;
        }
        self.log_time.push(log_time);
        match publish_time {
            Some(t) => {
                self.publish_time.push(t);
                self.publish_nulls.append_non_null();
            }
            None => {
                self.publish_time.push(0);
                self.publish_nulls.append_null();
            }
        }
        self.rows += 1;
        self.bytes += message.data.len();
        Ok(())
    }

    /// The rows pushed so far as one batch; the builder starts over empty.
    pub fn finish(&mut self) -> Result<RecordBatch> {
        let rows = std::mem::take(&mut self.rows);
        self.bytes = 0;
        let log_time: ArrayRef = Arc::new(
            TimestampNanosecondArray::new(
                ScalarBuffer::from(std::mem::replace(
                    &mut self.log_time,
                    Vec::with_capacity(rows),
                )),
                None,
            )
            .with_timezone("UTC"),
        );
        let publish_time: ArrayRef = Arc::new(
            TimestampNanosecondArray::new(
                ScalarBuffer::from(std::mem::replace(
                    &mut self.publish_time,
                    Vec::with_capacity(rows),
                )),
                self.publish_nulls.finish(),
            )
            .with_timezone("UTC"),
        );
        let mut fields = self.columns.finish()?.into_iter();
        let mut arrays = Vec::with_capacity(self.order.len());
        for &column in &self.order {
            arrays.push(match column {
                0 => log_time.clone(),
                1 => publish_time.clone(),
                _ => fields
                    .next()
                    .ok_or_else(|| Error::internal("fewer field columns than selected"))?,
            });
        }
        let options = RecordBatchOptions::new().with_row_count(Some(rows));
        Ok(RecordBatch::try_new_with_options(
            self.schema.clone(),
            arrays,
            &options,
        )?)
    }
}
