//! Writing BDDF from the model: channels become message series (or POD series for `bddf-pod`
//! channels that came from BDDF), messages become data blocks.

use std::collections::BTreeMap;

use base64::Engine as _;
use robolog_bddf::proto::{MessageTypeDescriptor, SeriesIdentifier};
use robolog_bddf::{SeriesOptions, WriteOptions};

use crate::bddf_log::{annotation, pod_type_from_name};
use crate::encodings::{
    BDDF_ANNOTATION_PREFIX, BDDF_ANNOTATIONS, BDDF_CONTENT_TYPE, BDDF_DESCRIPTION, BDDF_DIMENSIONS,
    BDDF_IS_METADATA, BDDF_JSON_CONTENT, BDDF_POD, BDDF_POD_TYPE, BDDF_PROTOBUF_CONTENT,
    BDDF_SERIES_TYPE, BDDF_SPEC_PREFIX, BDDF_STRUCT, BDDF_TYPE_NAME, JSON, PROTOBUF,
    ROBOLOG_PUBLISH_TIME, ROBOLOG_SEQUENCE,
};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::writer::{Finished, LogWriter, Output};

/// The spec key that tells apart two channels with the same topic.
const CHANNEL_ID_KEY: &str = "robolog:channel-id";

enum State {
    /// Not started: file annotations (from metadata records) go into the first block.
    Pending(Output),
    Open(Box<robolog_bddf::BddfWriter<Output>>),
    Done,
}

#[derive(Debug, Clone, Copy)]
enum SeriesLayout {
    Message { publish_time: bool, sequence: bool },
    Pod,
}

struct ChannelOut {
    channel: Channel,
    series: Option<(u32, SeriesLayout)>,
}

/// Writes BDDF.
///
/// - A channel read from BDDF (it carries `bddf:series_type` metadata) becomes the same series
///   again: identifier, annotations, description, message type or POD type and dimensions;
///   `bddf-pod` messages are written as one POD block each, so block boundaries survive.
///   Additional index *values* are not part of the model, so series are written without their
///   additional indexes.
/// - Any other channel becomes a message series `bosdyn:channel` named by its topic (plus
///   `robolog:channel-id` when two channels share a topic), content type `application/protobuf`
///   for `protobuf`, `application/json` for `json`, the message encoding otherwise, type name
///   = schema name. Topic, encoding, schema and metadata are kept in `robolog:` series
///   annotations, publish times and sequence numbers in additional indexes (see
///   [`crate::encodings`]), so that reading the file through the facade gives the channels back.
/// - Metadata records written before the first channel of BDDF origin and the first message
///   become file annotations (BDDF annotations from another BDDF file keep their keys, others
///   are named `<name>:<key>`); later ones and attachments are dropped (`Ok(false)`).
/// - Log times must be below 2^63 ns (BDDF times are signed).
/// - A channel without messages becomes a series without blocks.
/// - A zero-length message is written (robolog reads it back) but the Boston Dynamics reader
///   refuses it: [`Finished::warnings`] says so.
pub struct BddfWriter {
    state: State,
    options: WriteOptions,
    channels: Vec<ChannelOut>,
    /// Zero-length messages written, by topic (for [`Finished::warnings`]).
    empty_messages: BTreeMap<String, u64>,
}

impl std::fmt::Debug for BddfWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BddfWriter")
            .field("channels", &self.channels.len())
            .finish_non_exhaustive()
    }
}

impl BddfWriter {
    /// A writer to `output`; `options` gives file annotations and the POD block size.
    pub fn new(output: Output, options: WriteOptions) -> Self {
        Self {
            state: State::Pending(output),
            options,
            channels: Vec::new(),
            empty_messages: BTreeMap::new(),
        }
    }

    fn writer(&mut self) -> Result<&mut robolog_bddf::BddfWriter<Output>> {
        if let State::Pending(_) = self.state {
            let State::Pending(output) = std::mem::replace(&mut self.state, State::Done) else {
                return Err(Error::Usage("BDDF writer state".into()));
            };
            let writer = robolog_bddf::BddfWriter::with_options(output, self.options.clone())?;
            self.state = State::Open(Box::new(writer));
        }
        match &mut self.state {
            State::Open(writer) => Ok(writer),
            _ => Err(Error::Usage("the BDDF writer is finished".into())),
        }
    }

    /// Adds the series of channel `index` (of another format), shaped by its first message
    /// (without one, with no index for publish times or sequences).
    fn add_series(&mut self, index: usize, first: Option<&Message>) -> Result<(u32, SeriesLayout)> {
        let channel = self.channels[index].channel.clone();
        let added = add_foreign_series(self.writer()?, &channel, first)?;
        self.channels[index].series = Some(added);
        Ok(added)
    }
}

fn prefixed(meta: &BTreeMap<String, String>, prefix: &str) -> BTreeMap<String, String> {
    meta.iter()
        .filter_map(|(k, v)| k.strip_prefix(prefix).map(|k| (k.to_owned(), v.clone())))
        .collect()
}

/// Adds a series, adding a channel-id key to the spec when the spec is taken.
fn add_with_unique_spec(
    id: SeriesIdentifier,
    channel: &Channel,
    mut add: impl FnMut(SeriesIdentifier) -> std::result::Result<u32, robolog_bddf::Error>,
) -> Result<u32> {
    match add(id.clone()) {
        Err(robolog_bddf::Error::DuplicateSpec { .. }) => {
            let mut id = id;
            id.spec
                .insert(CHANNEL_ID_KEY.to_owned(), channel.id.to_string());
            Ok(add(id)?)
        }
        other => Ok(other?),
    }
}

/// The series a channel read from BDDF came from.
fn add_native_series(
    writer: &mut robolog_bddf::BddfWriter<Output>,
    channel: &Channel,
) -> Result<(u32, SeriesLayout)> {
    let meta = &channel.metadata;
    let id = SeriesIdentifier {
        series_type: meta.get(BDDF_SERIES_TYPE).cloned().unwrap_or_default(),
        spec: prefixed(meta, BDDF_SPEC_PREFIX),
    };
    let options = SeriesOptions::new()
        .annotations(prefixed(meta, BDDF_ANNOTATION_PREFIX))
        .description(meta.get(BDDF_DESCRIPTION).cloned().unwrap_or_default())
        .pod_block_bytes(u32::MAX as usize);
    if channel.message_encoding == BDDF_POD {
        let element = meta.get(BDDF_POD_TYPE).map_or("", String::as_str);
        let pod_type = pod_type_from_name(element).ok_or_else(|| Error::UnsupportedChannels {
            target: Format::Bddf,
            channels: vec![format!("{} (unknown POD type {element:?})", channel.topic)],
        })?;
        let dims = meta
            .get(BDDF_DIMENSIONS)
            .map(|d| {
                d.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::parse::<u32>)
                    .collect::<std::result::Result<Vec<u32>, _>>()
            })
            .transpose()
            .map_err(|e| Error::UnsupportedChannels {
                target: Format::Bddf,
                channels: vec![format!("{} (bad POD dimensions: {e})", channel.topic)],
            })?
            .unwrap_or_default();
        let series = add_with_unique_spec(id, channel, |id| {
            writer.add_pod_series(id, pod_type, &dims, options.clone())
        })?;
        return Ok((series, SeriesLayout::Pod));
    }
    let descriptor = MessageTypeDescriptor {
        content_type: meta.get(BDDF_CONTENT_TYPE).cloned().unwrap_or_default(),
        type_name: meta.get(BDDF_TYPE_NAME).cloned().unwrap_or_default(),
        is_metadata: meta.get(BDDF_IS_METADATA).is_some_and(|v| v == "true"),
    };
    let series = add_with_unique_spec(id, channel, |id| {
        writer.add_message_series(id, descriptor.clone(), options.clone())
    })?;
    Ok((
        series,
        SeriesLayout::Message {
            publish_time: false,
            sequence: false,
        },
    ))
}

/// A message series for a channel of another format, with the annotations that restore it.
fn add_foreign_series(
    writer: &mut robolog_bddf::BddfWriter<Output>,
    channel: &Channel,
    first: Option<&Message>,
) -> Result<(u32, SeriesLayout)> {
    let publish_time = first.is_some_and(|m| m.publish_time_ns.is_some());
    let sequence = first.is_some_and(|m| m.sequence.is_some());
    let mut annotations = BTreeMap::new();
    annotations.insert(annotation::TOPIC.to_owned(), channel.topic.clone());
    annotations.insert(
        annotation::MESSAGE_ENCODING.to_owned(),
        channel.message_encoding.clone(),
    );
    if let Some(schema) = &channel.schema {
        annotations.insert(annotation::SCHEMA_NAME.to_owned(), schema.name.clone());
        annotations.insert(
            annotation::SCHEMA_ENCODING.to_owned(),
            schema.encoding.clone(),
        );
        match std::str::from_utf8(&schema.data) {
            Ok(text) => annotations.insert(annotation::SCHEMA_TEXT.to_owned(), text.to_owned()),
            Err(_) => annotations.insert(
                annotation::SCHEMA_BASE64.to_owned(),
                base64::engine::general_purpose::STANDARD.encode(&schema.data),
            ),
        };
    }
    for (k, v) in &channel.metadata {
        annotations.insert(format!("{}{k}", annotation::METADATA_PREFIX), v.clone());
    }
    let layout = SeriesLayout::Message {
        publish_time,
        sequence,
    };
    let mut index_names = Vec::new();
    if publish_time {
        index_names.push(ROBOLOG_PUBLISH_TIME.to_owned());
    }
    if sequence {
        index_names.push(ROBOLOG_SEQUENCE.to_owned());
    }
    let content_type = match channel.message_encoding.as_str() {
        PROTOBUF => BDDF_PROTOBUF_CONTENT.to_owned(),
        JSON => BDDF_JSON_CONTENT.to_owned(),
        other => other.to_owned(),
    };
    let descriptor = MessageTypeDescriptor {
        content_type,
        type_name: channel.type_name().to_owned(),
        is_metadata: false,
    };
    let options = SeriesOptions::new()
        .annotations(annotations)
        .additional_index_names(index_names);
    let id = SeriesIdentifier {
        series_type: "bosdyn:channel".to_owned(),
        spec: BTreeMap::from([("bosdyn:channel".to_owned(), channel.topic.clone())]),
    };
    let series = add_with_unique_spec(id, channel, |id| {
        writer.add_message_series(id, descriptor.clone(), options.clone())
    })?;
    Ok((series, layout))
}

impl LogWriter for BddfWriter {
    fn format(&self) -> Format {
        Format::Bddf
    }

    fn check_channel(&self, channel: &Channel) -> std::result::Result<(), String> {
        if channel.message_encoding == BDDF_STRUCT {
            return Err("BDDF struct series have no data blocks and cannot be copied".into());
        }
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<u32> {
        if let Err(why) = self.check_channel(channel) {
            return Err(Error::UnsupportedChannels {
                target: Format::Bddf,
                channels: vec![format!("{} ({why})", channel.topic)],
            });
        }
        let id = u32::try_from(self.channels.len())
            .map_err(|_| Error::Usage("too many channels".into()))?;
        // Series of BDDF origin are added now, so that they keep their order; others wait for
        // their first message, which says whether publish times and sequences need indexes.
        let series = if channel.metadata.contains_key(BDDF_SERIES_TYPE) {
            Some(add_native_series(self.writer()?, channel)?)
        } else {
            None
        };
        self.channels.push(ChannelOut {
            channel: channel.clone(),
            series,
        });
        Ok(id)
    }

    fn write_message(&mut self, channel: u32, message: &Message) -> Result<()> {
        let index = channel as usize;
        let Some(out) = self.channels.get(index) else {
            return Err(Error::Usage(format!("unknown BDDF channel {channel}")));
        };
        let time = i64::try_from(message.log_time_ns).map_err(|_| Error::TimeOutOfRange {
            topic: out.channel.topic.clone(),
            time_ns: message.log_time_ns,
            target: Format::Bddf,
            reason: "BDDF times are signed 64-bit nanoseconds",
        })?;
        if message.data.is_empty() {
            *self
                .empty_messages
                .entry(out.channel.topic.clone())
                .or_default() += 1;
        }
        let (series, layout) = match out.series {
            Some(s) => s,
            None => self.add_series(index, Some(message))?,
        };
        let writer = self.writer()?;
        match layout {
            SeriesLayout::Pod => {
                writer.write_pod_bytes(series, time, &message.data)?;
                writer.flush_pod(series)?;
            }
            SeriesLayout::Message {
                publish_time,
                sequence,
            } => {
                let mut indexes = Vec::with_capacity(2);
                if publish_time {
                    let publish = message.publish_time_ns.unwrap_or(message.log_time_ns);
                    indexes.push(i64::try_from(publish).unwrap_or(i64::MAX));
                }
                if sequence {
                    indexes.push(i64::from(message.sequence.unwrap_or(0)));
                }
                writer.write_message_indexed(series, time, &indexes, &message.data)?;
            }
        }
        Ok(())
    }

    fn write_attachment(&mut self, _attachment: &Attachment) -> Result<bool> {
        Ok(false)
    }

    fn write_metadata(&mut self, metadata: &Metadata) -> Result<bool> {
        if !matches!(self.state, State::Pending(_)) {
            return Ok(false);
        }
        for (key, value) in &metadata.entries {
            let key = if metadata.name == BDDF_ANNOTATIONS {
                key.clone()
            } else {
                format!("{}:{key}", metadata.name)
            };
            self.options = std::mem::take(&mut self.options).annotation(key, value.clone());
        }
        Ok(true)
    }

    fn finish(&mut self) -> Result<Finished> {
        self.writer()?;
        // A channel without messages is a series without blocks: it still exists.
        for index in 0..self.channels.len() {
            if self.channels[index].series.is_none() {
                self.add_series(index, None)?;
            }
        }
        let empty = std::mem::take(&mut self.empty_messages);
        match std::mem::replace(&mut self.state, State::Done) {
            State::Open(writer) => {
                let mut finished = writer.finish()?.finish()?;
                finished.warnings.extend(empty.into_iter().map(|(topic, n)| {
                    format!(
                        "{topic}: {n} message{} of zero bytes: the Boston Dynamics reader cannot read them back",
                        if n == 1 { "" } else { "s" }
                    )
                }));
                Ok(finished)
            }
            _ => Err(Error::Usage("the BDDF writer is finished".into())),
        }
    }
}
