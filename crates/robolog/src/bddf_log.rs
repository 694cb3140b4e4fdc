//! BDDF in the model: series become channels (see [`crate::encodings`] for the naming and the
//! `bddf-pod` encoding), data blocks become messages, signed block times become `u64` log
//! times according to [`NegativeTimes`].

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use robolog_bddf::proto::{PodType, SeriesIdentifier};
use robolog_bddf::{
    BddfReader, ChecksumCheck, DataBlock, IndexSource, ReadOptions, Series, SeriesKind,
};
use robolog_framing::Bytes;
use robolog_query::Input;

use crate::encodings::{
    BDDF_ANNOTATION_PREFIX, BDDF_ANNOTATIONS, BDDF_CONTENT_TYPE, BDDF_DESCRIPTION, BDDF_DIMENSIONS,
    BDDF_INDEX_NAMES, BDDF_IS_METADATA, BDDF_JSON_CONTENT, BDDF_POD, BDDF_POD_TYPE,
    BDDF_PROTOBUF_CONTENT, BDDF_SERIES_TYPE, BDDF_SPEC_PREFIX, BDDF_STRUCT, BDDF_TYPE_NAME, JSON,
    PROTOBUF, ROBOLOG_PUBLISH_TIME, ROBOLOG_SEQUENCE,
};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::log::{MessagesInner, NegativeTimes};
use crate::model::{Channel, Message, Metadata, Schema};
use crate::problem::{Problem, ProblemKind};
use crate::query::{Filter, Order, Selection};
use crate::summary::{ChannelSummary, IndexUse, Summary};

/// Series annotations robolog writes when a channel of another format becomes a BDDF series
/// (see [`crate::encodings`]).
pub(crate) mod annotation {
    pub(crate) const TOPIC: &str = "robolog:topic";
    pub(crate) const MESSAGE_ENCODING: &str = "robolog:message-encoding";
    pub(crate) const SCHEMA_NAME: &str = "robolog:schema-name";
    pub(crate) const SCHEMA_ENCODING: &str = "robolog:schema-encoding";
    pub(crate) const SCHEMA_TEXT: &str = "robolog:schema";
    pub(crate) const SCHEMA_BASE64: &str = "robolog:schema-base64";
    pub(crate) const METADATA_PREFIX: &str = "robolog:metadata:";
}

/// A series as a channel, with where its publish times and sequence numbers are kept.
#[derive(Debug, Clone)]
pub(crate) struct SeriesChannel {
    pub(crate) channel: Arc<Channel>,
    publish_index: Option<usize>,
    sequence_index: Option<usize>,
}

impl SeriesChannel {
    /// The model message of a data block of this series.
    pub(crate) fn message(&self, block: DataBlock, policy: NegativeTimes) -> Result<Message> {
        let log_time_ns = log_time(
            block.timestamp_ns,
            policy,
            &self.channel.topic,
            block.offset,
        )?;
        let extra =
            |index: Option<usize>| index.and_then(|i| block.additional_indexes.get(i).copied());
        Ok(Message {
            channel: Arc::clone(&self.channel),
            log_time_ns,
            publish_time_ns: extra(self.publish_index).and_then(|v| u64::try_from(v).ok()),
            sequence: extra(self.sequence_index).and_then(|v| u32::try_from(v).ok()),
            data: block.data,
        })
    }
}

/// A block time as a model log time.
pub(crate) fn log_time(
    timestamp_ns: i64,
    policy: NegativeTimes,
    topic: &str,
    offset: u64,
) -> Result<u64> {
    match u64::try_from(timestamp_ns) {
        Ok(t) => Ok(t),
        Err(_) if policy == NegativeTimes::Clamp => Ok(0),
        Err(_) => Err(Error::NegativeTime {
            topic: topic.to_owned(),
            timestamp_ns,
            offset: Some(offset),
        }),
    }
}

fn clamp(timestamp_ns: i64) -> u64 {
    u64::try_from(timestamp_ns).unwrap_or(0)
}

/// `type:k=v,k=v` (spec keys in sorted order); just `type` for an empty spec.
pub(crate) fn render_identifier(id: &SeriesIdentifier) -> String {
    let spec: Vec<String> = id.spec.iter().map(|(k, v)| format!("{k}={v}")).collect();
    if spec.is_empty() {
        id.series_type.clone()
    } else {
        format!("{}:{}", id.series_type, spec.join(","))
    }
}

/// `float32`, … for a POD element type.
pub(crate) fn pod_type_name(pod_type: i32) -> Option<&'static str> {
    Some(match PodType::try_from(pod_type).ok()? {
        PodType::Int8 => "int8",
        PodType::Int16 => "int16",
        PodType::Int32 => "int32",
        PodType::Int64 => "int64",
        PodType::Uint8 => "uint8",
        PodType::Uint16 => "uint16",
        PodType::Uint32 => "uint32",
        PodType::Uint64 => "uint64",
        PodType::Float32 => "float32",
        PodType::Float64 => "float64",
        PodType::Unspecified => return None,
    })
}

/// The element type named `name` (as [`pod_type_name`] writes it).
pub(crate) fn pod_type_from_name(name: &str) -> Option<PodType> {
    (1..=10)
        .filter_map(|v| PodType::try_from(v).ok())
        .find(|&t| pod_type_name(t as i32) == Some(name))
}

/// The message encoding for a BDDF content type.
pub(crate) fn encoding_of_content_type(content_type: &str) -> &str {
    match content_type {
        BDDF_PROTOBUF_CONTENT | "application/x-protobuf" => PROTOBUF,
        BDDF_JSON_CONTENT => JSON,
        other => other,
    }
}

/// The schema of series `index` (schema ids are series index + 1, so that indexed and
/// streaming reads agree).
fn schema(index: u32, name: String, encoding: String, data: Bytes) -> Arc<Schema> {
    Arc::new(Schema {
        id: index.saturating_add(1),
        name,
        encoding,
        data,
    })
}

/// The channel of a series.
pub(crate) fn series_channel(series: &Series) -> SeriesChannel {
    let index_names = series.additional_index_names();
    let position = |name: &str| index_names.iter().position(|n| n == name);
    let annotations = series.annotations();
    let channel = match annotations.get(annotation::TOPIC) {
        Some(topic) => restored_channel(series.index(), topic, annotations),
        None => native_channel(series),
    };
    SeriesChannel {
        channel: Arc::new(channel),
        publish_index: position(ROBOLOG_PUBLISH_TIME),
        sequence_index: position(ROBOLOG_SEQUENCE),
    }
}

/// A channel robolog wrote to BDDF, restored from its annotations.
fn restored_channel(id: u32, topic: &str, annotations: &BTreeMap<String, String>) -> Channel {
    let get = |key: &str| annotations.get(key).cloned();
    let schema = get(annotation::SCHEMA_NAME).map(|name| {
        let data = match (get(annotation::SCHEMA_TEXT), get(annotation::SCHEMA_BASE64)) {
            (Some(text), _) => Bytes::from(text.into_bytes()),
            (None, Some(encoded)) => base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .map(Bytes::from)
                .unwrap_or_default(),
            (None, None) => Bytes::new(),
        };
        schema(
            id,
            name,
            get(annotation::SCHEMA_ENCODING).unwrap_or_default(),
            data,
        )
    });
    Channel {
        id,
        topic: topic.to_owned(),
        message_encoding: get(annotation::MESSAGE_ENCODING).unwrap_or_default(),
        schema,
        metadata: annotations
            .iter()
            .filter_map(|(k, v)| {
                k.strip_prefix(annotation::METADATA_PREFIX)
                    .map(|k| (k.to_owned(), v.clone()))
            })
            .collect(),
    }
}

/// A series written by another tool, described by its identifier and descriptor.
fn native_channel(series: &Series) -> Channel {
    let mut metadata = BTreeMap::new();
    metadata.insert(BDDF_SERIES_TYPE.to_owned(), series.series_type().to_owned());
    for (k, v) in series.spec() {
        metadata.insert(format!("{BDDF_SPEC_PREFIX}{k}"), v.clone());
    }
    for (k, v) in series.annotations() {
        metadata.insert(format!("{BDDF_ANNOTATION_PREFIX}{k}"), v.clone());
    }
    if !series.additional_index_names().is_empty() {
        metadata.insert(
            BDDF_INDEX_NAMES.to_owned(),
            serde_json::Value::from(series.additional_index_names()).to_string(),
        );
    }
    if !series.description().is_empty() {
        metadata.insert(BDDF_DESCRIPTION.to_owned(), series.description().to_owned());
    }
    let (message_encoding, schema) = match series.kind() {
        SeriesKind::Message(m) => {
            metadata.insert(BDDF_CONTENT_TYPE.to_owned(), m.content_type.clone());
            metadata.insert(BDDF_TYPE_NAME.to_owned(), m.type_name.clone());
            if m.is_metadata {
                metadata.insert(BDDF_IS_METADATA.to_owned(), "true".to_owned());
            }
            let encoding = encoding_of_content_type(&m.content_type).to_owned();
            let schema = (!m.type_name.is_empty()).then(|| {
                let schema_encoding = if encoding == PROTOBUF {
                    PROTOBUF.to_owned()
                } else {
                    m.content_type.clone()
                };
                schema(
                    series.index(),
                    m.type_name.clone(),
                    schema_encoding,
                    Bytes::new(),
                )
            });
            (encoding, schema)
        }
        SeriesKind::Pod(p) => {
            let element = pod_type_name(p.pod_type).unwrap_or("unspecified");
            let dims: Vec<String> = p.dimension.iter().map(u32::to_string).collect();
            metadata.insert(BDDF_POD_TYPE.to_owned(), element.to_owned());
            metadata.insert(BDDF_DIMENSIONS.to_owned(), dims.join(","));
            let name = if dims.is_empty() {
                element.to_owned()
            } else {
                format!("{element}[{}]", dims.join(","))
            };
            let schema = schema(series.index(), name, BDDF_POD.to_owned(), Bytes::new());
            (BDDF_POD.to_owned(), Some(schema))
        }
        SeriesKind::Struct(s) => {
            for (key, hash) in &s.key_to_series_identifier_hash {
                metadata.insert(format!("bddf:struct:{key}"), format!("{hash:016x}"));
            }
            (BDDF_STRUCT.to_owned(), None)
        }
        SeriesKind::Unspecified => (String::new(), None),
    };
    Channel {
        id: series.index(),
        topic: render_identifier(series.identifier()),
        message_encoding,
        schema,
        metadata,
    }
}

#[derive(Debug)]
pub(crate) struct BddfLog {
    reader: Arc<BddfReader>,
    series: Vec<SeriesChannel>,
    policy: NegativeTimes,
}

impl BddfLog {
    /// Opens the file read through `input`: its index parts are read now, blocks as queries
    /// need them.
    pub(crate) fn open(
        input: Input,
        policy: NegativeTimes,
    ) -> Result<(Self, Vec<Arc<Channel>>, Vec<Problem>)> {
        let reader = BddfReader::open_input(input, ReadOptions::default())?;
        let mut series: Vec<SeriesChannel> = reader.series().iter().map(series_channel).collect();
        series.sort_by_key(|s| s.channel.id);
        let mut problems = Vec::new();
        if let IndexSource::Scan { reason, stopped } = reader.index_source() {
            problems.push(Problem::warning(
                ProblemKind::Index,
                reason.offset(),
                format!("no usable index ({reason}): read by a walk over the blocks"),
            ));
            if let Some(stopped) = stopped {
                problems.push(Problem::error(
                    stopped.problem_kind(),
                    stopped.offset(),
                    format!(
                        "the walk stopped early ({stopped}): later blocks cannot be read; `recover` writes a valid file with every complete block"
                    ),
                ));
            }
        }
        for s in reader.series() {
            let entries = reader.block_entries(s.index())?;
            let negative: Vec<&robolog_bddf::IndexEntry> =
                entries.iter().filter(|e| e.timestamp_ns < 0).collect();
            if let Some(first) = negative.first() {
                let topic = series
                    .iter()
                    .find(|c| c.channel.id == s.index())
                    .map_or("?", |c| c.channel.topic.as_str());
                let text = format!(
                    "{topic}: {} blocks are timestamped before 1970 (first: {} ns)",
                    negative.len(),
                    first.timestamp_ns
                );
                problems.push(match policy {
                    NegativeTimes::Clamp => Problem::warning(
                        ProblemKind::Time,
                        Some(first.offset),
                        format!("{text}; read as time 0"),
                    ),
                    NegativeTimes::Refuse => Problem::error(
                        ProblemKind::Time,
                        Some(first.offset),
                        format!(
                            "{text}; reading them fails unless opened with NegativeTimes::Clamp"
                        ),
                    ),
                });
            }
        }
        let channels = series.iter().map(|s| Arc::clone(&s.channel)).collect();
        Ok((
            Self {
                reader: Arc::new(reader),
                series,
                policy,
            },
            channels,
            problems,
        ))
    }

    pub(crate) fn metadata(&self) -> Vec<Metadata> {
        let annotations = self.reader.annotations();
        if annotations.is_empty() {
            return Vec::new();
        }
        vec![Metadata {
            name: BDDF_ANNOTATIONS.to_owned(),
            entries: annotations.clone(),
        }]
    }

    pub(crate) fn summary(&self, channels: &[Arc<Channel>], file_size: u64) -> Summary {
        let mut properties = BTreeMap::new();
        let descriptor = self.reader.file_descriptor();
        properties.insert(
            "checksum".to_owned(),
            match descriptor.checksum_type {
                2 => "sha1".to_owned(),
                1 => "none".to_owned(),
                other => other.to_string(),
            },
        );
        let version = descriptor.version.map_or_else(String::new, |v| {
            format!("{}.{}.{}", v.major_version, v.minor_version, v.patch_level)
        });
        let mut counts = BTreeMap::new();
        let (mut start, mut end) = (None::<u64>, None::<u64>);
        for s in self.reader.series() {
            counts.insert(s.index(), s.block_count());
            if let Some((first, last)) = s.time_span() {
                let (first, last) = (clamp(first), clamp(last));
                start = Some(start.map_or(first, |v| v.min(first)));
                end = Some(end.map_or(last, |v| v.max(last)));
            }
        }
        Summary {
            format: Format::Bddf,
            version,
            properties,
            file_size,
            message_count: counts.values().sum(),
            start_ns: start,
            end_ns: end,
            channels: channels
                .iter()
                .map(|c| ChannelSummary {
                    channel: Arc::clone(c),
                    message_count: counts.get(&c.id).copied().unwrap_or(0),
                })
                .collect(),
            chunks: None,
            attachments: Vec::new(),
            metadata: self.metadata(),
            index: match self.reader.index_source() {
                IndexSource::File => IndexUse::Index,
                IndexSource::Scan { reason, .. } => IndexUse::Scan {
                    reason: reason.to_string(),
                },
            },
        }
    }

    pub(crate) fn messages(
        &self,
        _channels: &[Arc<Channel>],
        selection: &Selection,
        filter: &Filter,
        order: Order,
    ) -> Result<MessagesInner> {
        let mut plan = Vec::new();
        for (series_pos, s) in self.series.iter().enumerate() {
            if !selection.contains(s.channel.id) {
                continue;
            }
            for (position, entry) in self.reader.block_entries(s.channel.id)?.iter().enumerate() {
                let time = u64::try_from(entry.timestamp_ns);
                // Refused negative times are kept when the range starts at 0, so that reading
                // them reports the error instead of skipping them silently.
                let keep = match time {
                    Ok(t) => filter.contains_time(t),
                    Err(_) => filter.contains_time(0),
                };
                if keep {
                    plan.push(PlannedBlock {
                        time: time.unwrap_or(0),
                        offset: entry.offset,
                        series: series_pos,
                        position,
                    });
                }
            }
        }
        match order {
            Order::LogTime | Order::Topic => plan.sort_unstable_by_key(|b| (b.time, b.offset)),
            Order::ReverseLogTime => {
                plan.sort_unstable_by_key(|b| std::cmp::Reverse((b.time, b.offset)));
            }
            Order::File => plan.sort_unstable_by_key(|b| b.offset),
        }
        let verify = filter.is_everything()
            && selection.channels.is_none()
            && self.reader.trailer().is_some();
        // Read by position (a remote object), the planned blocks are fetched ahead.
        self.reader.prefetch_blocks(
            plan.iter()
                .map(|b| (self.series[b.series].channel.id, b.position)),
        );
        Ok(MessagesInner::Bddf(BddfMessages {
            check: verify.then(|| self.reader.checksum_check()).flatten(),
            reader: Arc::clone(&self.reader),
            series: self.series.clone(),
            plan: plan.into_iter(),
            policy: self.policy,
        }))
    }
}

#[derive(Debug, Clone, Copy)]
struct PlannedBlock {
    time: u64,
    offset: u64,
    series: usize,
    position: usize,
}

pub(crate) struct BddfMessages {
    reader: Arc<BddfReader>,
    series: Vec<SeriesChannel>,
    plan: std::vec::IntoIter<PlannedBlock>,
    policy: NegativeTimes,
    /// Reading the whole file: its SHA-1, hashed as the blocks are read (so that a remote file
    /// is fetched once) and compared after the last block, so that a corrupt file never reads
    /// as a good one.
    check: Option<ChecksumCheck>,
}

impl BddfMessages {
    pub(crate) fn next(&mut self) -> Option<Result<Message>> {
        let Some(block) = self.plan.next() else {
            if let Some(check) = self.check.take()
                && let Err(e) = check.finish(&self.reader)
            {
                return Some(Err(e.into()));
            }
            return None;
        };
        let s = &self.series[block.series];
        let read = match &mut self.check {
            Some(check) => self
                .reader
                .read_block_checked(s.channel.id, block.position, check),
            None => self.reader.read_block(s.channel.id, block.position),
        };
        Some(
            read.map_err(Error::from)
                .and_then(|data| s.message(data, self.policy)),
        )
    }
}
