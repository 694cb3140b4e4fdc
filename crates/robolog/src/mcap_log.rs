//! MCAP in the model: channels, schemas, attachments and metadata map one to one.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_mcap::{McapReader, ReadOptions, SummarySource};

use crate::error::{Error, Result};
use crate::format::Format;
use crate::log::{MessagesInner, channel_by_id};
use crate::model::{Attachment, Channel, Message, Metadata, Schema};
use crate::problem::Problem;
use crate::query::{Filter, Order, Selection};
use crate::summary::{
    AttachmentSummary, ChannelSummary, ChunkSummary, CompressionSummary, IndexUse, Summary,
};

/// Turns MCAP schema and channel records into the model, sharing one `Arc<Schema>` per schema
/// id.
#[derive(Debug, Default)]
pub(crate) struct ChannelBuilder {
    schemas: HashMap<u16, Arc<Schema>>,
}

impl ChannelBuilder {
    pub(crate) fn schema(&mut self, schema: &robolog_mcap::Schema<'_>) -> Arc<Schema> {
        Arc::clone(self.schemas.entry(schema.id).or_insert_with(|| {
            Arc::new(Schema {
                id: u32::from(schema.id),
                name: schema.name.clone().into_owned(),
                encoding: schema.encoding.clone().into_owned(),
                data: Bytes::copy_from_slice(&schema.data),
            })
        }))
    }

    /// The channel, with its schema when that has been seen (id 0 means no schema).
    pub(crate) fn channel(&self, channel: &robolog_mcap::Channel<'_>) -> Channel {
        Channel {
            id: u32::from(channel.id),
            topic: channel.topic.clone().into_owned(),
            message_encoding: channel.message_encoding.clone().into_owned(),
            schema: (channel.schema_id != 0)
                .then(|| self.schemas.get(&channel.schema_id).cloned())
                .flatten(),
            metadata: string_map(&channel.metadata),
        }
    }
}

pub(crate) fn string_map(map: &BTreeMap<Cow<'_, str>, Cow<'_, str>>) -> BTreeMap<String, String> {
    map.iter()
        .map(|(k, v)| (k.clone().into_owned(), v.clone().into_owned()))
        .collect()
}

#[derive(Debug)]
pub(crate) struct McapLog {
    reader: McapReader,
}

impl McapLog {
    /// Opens `data`; `check_uncompressed_chunks` as in [`crate::OpenOptions`].
    pub(crate) fn open(
        data: Bytes,
        check_uncompressed_chunks: bool,
    ) -> Result<(Self, Vec<Arc<Channel>>, Vec<Problem>)> {
        let options = ReadOptions {
            verify_uncompressed_chunks: check_uncompressed_chunks,
            ..ReadOptions::default()
        };
        let reader = McapReader::open_with(data, options)?;
        let summary = reader.summary();
        let mut builder = ChannelBuilder::default();
        for schema in summary.schemas.values() {
            builder.schema(schema);
        }
        let channels = summary
            .channels
            .values()
            .map(|c| Arc::new(builder.channel(c)))
            .collect();
        let mut problems = Vec::new();
        if reader.is_draft() {
            problems.push(Problem::info(
                None,
                "pre-ratification draft layout: read through a mapping to the ratified records; `recover` converts it",
            ));
        }
        if summary.source == SummarySource::Scan && !reader.is_draft() {
            let reason = summary.scan_reason.clone().unwrap_or_default();
            if summary.footer.is_none() {
                problems.push(Problem::warning(
                    None,
                    format!(
                        "no footer or summary (the file was cut or is still being written): read by a scan ({reason}); `recover` writes an indexed copy"
                    ),
                ));
            } else {
                problems.push(Problem::info(None, format!("read by a scan: {reason}")));
            }
        }
        Ok((Self { reader }, channels, problems))
    }

    pub(crate) fn summary(&self, channels: &[Arc<Channel>], file_size: u64) -> Result<Summary> {
        let s = self.reader.summary();
        let mut properties = BTreeMap::new();
        if let Some(header) = &s.header {
            properties.insert("profile".to_owned(), header.profile.to_string());
            properties.insert("library".to_owned(), header.library.to_string());
        }
        if self.reader.is_draft() {
            properties.insert("layout".to_owned(), "draft".to_owned());
        }
        let (message_count, start_ns, end_ns, counts) = match &s.statistics {
            Some(stats) => (
                stats.message_count,
                (stats.message_count > 0).then_some(stats.message_start_time),
                (stats.message_count > 0).then_some(stats.message_end_time),
                stats
                    .channel_message_counts
                    .iter()
                    .map(|(&id, &n)| (u32::from(id), n))
                    .collect::<BTreeMap<_, _>>(),
            ),
            None => self.count_messages()?,
        };
        let mut by_compression: BTreeMap<String, CompressionSummary> = BTreeMap::new();
        for chunk in &s.chunk_indexes {
            let name = if chunk.compression.is_empty() {
                "none".to_owned()
            } else {
                chunk.compression.to_string()
            };
            let entry = by_compression
                .entry(name.clone())
                .or_insert_with(|| CompressionSummary {
                    compression: name,
                    chunks: 0,
                    compressed_bytes: 0,
                    uncompressed_bytes: 0,
                });
            entry.chunks += 1;
            entry.compressed_bytes = entry.compressed_bytes.saturating_add(chunk.compressed_size);
            entry.uncompressed_bytes = entry
                .uncompressed_bytes
                .saturating_add(chunk.uncompressed_size);
        }
        let chunks = (!s.chunk_indexes.is_empty()).then(|| ChunkSummary {
            count: s.chunk_indexes.len() as u64,
            compression: by_compression.into_values().collect(),
        });
        Ok(Summary {
            format: Format::Mcap,
            version: "0".to_owned(),
            properties,
            file_size,
            message_count,
            start_ns,
            end_ns,
            channels: channels
                .iter()
                .map(|c| ChannelSummary {
                    channel: Arc::clone(c),
                    message_count: counts.get(&c.id).copied().unwrap_or(0),
                })
                .collect(),
            chunks,
            attachments: s
                .attachment_indexes
                .iter()
                .map(|a| AttachmentSummary {
                    name: a.name.to_string(),
                    media_type: a.media_type.to_string(),
                    log_time_ns: a.log_time,
                    create_time_ns: a.create_time,
                    size: a.data_size,
                    offset: a.offset,
                })
                .collect(),
            metadata: self.metadata()?,
            index: match s.source {
                SummarySource::SummarySection => IndexUse::Index,
                SummarySource::Scan => IndexUse::Scan {
                    reason: s
                        .scan_reason
                        .clone()
                        .unwrap_or_else(|| "no summary".to_owned()),
                },
            },
        })
    }

    /// Counts for a file without a Statistics record, by reading its messages in file order.
    #[allow(clippy::type_complexity)]
    fn count_messages(&self) -> Result<(u64, Option<u64>, Option<u64>, BTreeMap<u32, u64>)> {
        let mut counts = BTreeMap::new();
        let (mut total, mut start, mut end) = (0u64, None::<u64>, None::<u64>);
        for m in self
            .reader
            .messages()
            .order(robolog_mcap::Order::File)
            .iter()?
        {
            let m = m?;
            total += 1;
            *counts.entry(u32::from(m.channel_id)).or_insert(0) += 1;
            start = Some(start.map_or(m.log_time, |s| s.min(m.log_time)));
            end = Some(end.map_or(m.log_time, |e| e.max(m.log_time)));
        }
        Ok((total, start, end, counts))
    }

    pub(crate) fn attachments(&self) -> Result<Vec<Attachment>> {
        self.reader
            .attachments()
            .iter()
            .map(|index| {
                let a = self.reader.read_attachment(index)?;
                Ok(Attachment {
                    name: a.name.into_owned(),
                    media_type: a.media_type.into_owned(),
                    log_time_ns: a.log_time,
                    create_time_ns: a.create_time,
                    data: Bytes::from(a.data.into_owned()),
                })
            })
            .collect()
    }

    pub(crate) fn metadata(&self) -> Result<Vec<Metadata>> {
        self.reader
            .metadata_indexes()
            .iter()
            .map(|index| {
                let m = self.reader.read_metadata(index)?;
                Ok(Metadata {
                    name: m.name.into_owned(),
                    entries: string_map(&m.metadata),
                })
            })
            .collect()
    }

    pub(crate) fn messages(
        &self,
        channels: &[Arc<Channel>],
        selection: &Selection,
        filter: &Filter,
        order: Order,
    ) -> Result<MessagesInner> {
        let mut query = self
            .reader
            .messages()
            .order(match order {
                Order::LogTime => robolog_mcap::Order::LogTime,
                Order::File => robolog_mcap::Order::File,
            })
            .time_range(filter.start_ns()..=filter.end_ns_inclusive());
        if let Some(ids) = &selection.channels {
            // Channel ids come from this file, so they fit in u16.
            query = query.channel_ids(ids.iter().filter_map(|&id| u16::try_from(id).ok()));
        }
        Ok(MessagesInner::Mcap(McapMessages {
            inner: query.iter()?,
            channels: channels.to_vec(),
        }))
    }
}

pub(crate) struct McapMessages {
    inner: robolog_mcap::MessageIter,
    channels: Vec<Arc<Channel>>,
}

impl McapMessages {
    pub(crate) fn next(&mut self) -> Option<Result<Message>> {
        let m = match self.inner.next()? {
            Ok(m) => m,
            Err(e) => return Some(Err(e.into())),
        };
        let Some(channel) = channel_by_id(&self.channels, u32::from(m.channel_id)) else {
            return Some(Err(Error::Usage(format!(
                "message on unknown channel {}",
                m.channel_id
            ))));
        };
        Some(Ok(Message {
            channel: Arc::clone(channel),
            log_time_ns: m.log_time,
            publish_time_ns: Some(m.publish_time),
            sequence: Some(m.sequence),
            data: m.data,
        }))
    }
}
