//! MCAP in the model: channels, schemas, attachments and metadata map one to one.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_mcap::{McapReader, ReadOptions, SummarySource};
use robolog_query::Input;

use crate::error::{Error, Result};
use crate::format::Format;
use crate::log::{MessagesInner, channel_by_id};
use crate::model::{Attachment, Channel, Message, Metadata, Schema};
use crate::problem::{Problem, ProblemKind};
use crate::query::{Filter, Order, Selection};
use crate::summary::{
    AttachmentSummary, ChannelSummary, ChunkInfo, ChunkSummary, CompressionSummary, IndexUse,
    Summary,
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
    /// The complete messages of the chunk a cut file ends inside, which no index lists: sorted
    /// by log time (ties in file order).
    tail: Vec<TailMessage>,
}

/// A message salvaged from the chunk a cut file ends inside.
#[derive(Debug, Clone)]
struct TailMessage {
    channel_id: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    data: Bytes,
}

/// What a cut file still holds after its last complete record: the messages of a partial
/// chunk, the channels and schemas defined in it, and what was lost, as problems.
#[derive(Debug, Default)]
struct CutTail {
    messages: Vec<TailMessage>,
    schemas: Vec<robolog_mcap::Schema<'static>>,
    channels: Vec<robolog_mcap::Channel<'static>>,
    problems: Vec<Problem>,
}

/// Reads the end of a file without a footer from `cut_at`, where the scan of its records
/// stopped: when its last record is cut off, the complete messages of a cut chunk are saved
/// (as `recover` does), and the bytes that cannot be read are reported as an error. Only what
/// the cut chunk's declared size can be decoded from is read.
fn read_cut_tail(input: &Input, cut_at: Option<u64>) -> Result<CutTail> {
    use robolog_mcap::parse::RecordSplitter;
    use robolog_mcap::records::op;

    let mut tail = CutTail::default();
    let Some(offset) = cut_at else {
        return Ok(tail);
    };
    let lost_bytes = input.len().saturating_sub(offset);
    let prefix = input.read_up_to(offset, 9 + 24)?;
    let opcode = prefix.first().copied();
    if opcode != Some(op::CHUNK) || prefix.len() < 9 {
        let what = opcode.map_or("record", robolog_mcap::records::record_name);
        tail.problems.push(Problem::error(
            ProblemKind::Truncated,
            Some(offset),
            format!("the file ends inside a {what} record: its last {lost_bytes} bytes are lost"),
        ));
        return Ok(tail);
    }
    // Cut inside its header, the chunk has only the bytes there are.
    let span = robolog_mcap::cut_chunk_span(&prefix[9..], u64::MAX).unwrap_or(24);
    let content = input.read_up_to(offset + 9, span)?;
    let cut = match robolog_mcap::salvage_cut_chunk(&content, u64::MAX) {
        Ok(cut) => cut,
        Err(why) => {
            tail.problems.push(Problem::error(
                ProblemKind::Truncated,
                Some(offset),
                format!(
                    "the file ends inside a chunk ({why}): its last {lost_bytes} bytes are lost"
                ),
            ));
            return Ok(tail);
        }
    };
    let records = Bytes::from(cut.records);
    let mut complete = true;
    for raw in RecordSplitter::chunk_records(&records) {
        let Ok(raw) = raw else {
            complete = false;
            break;
        };
        match raw.parse() {
            Ok(robolog_mcap::Record::Schema(schema)) => tail.schemas.push(schema.into_owned()),
            Ok(robolog_mcap::Record::Channel(channel)) => tail.channels.push(channel.into_owned()),
            Ok(robolog_mcap::Record::Message(m)) => tail.messages.push(TailMessage {
                channel_id: m.channel_id,
                sequence: m.sequence,
                log_time: m.log_time,
                publish_time: m.publish_time,
                data: records.slice_ref(m.data),
            }),
            Ok(_) => {}
            Err(_) => complete = false,
        }
    }
    let decoded = records.len() as u64;
    let whole = complete && cut.error.is_none() && decoded == cut.uncompressed_size;
    let saved = tail.messages.len();
    tail.problems.push(Problem::error(
        ProblemKind::Truncated,
        Some(offset),
        if whole {
            format!(
                "the file ends inside this chunk, after all its records: {saved} messages read from it, its indexes lost"
            )
        } else {
            format!(
                "the file ends inside this chunk: {saved} complete messages read from the first {decoded} of its {} uncompressed bytes{}; the rest of it is lost",
                cut.uncompressed_size,
                cut.error.map(|e| format!(" ({e})")).unwrap_or_default()
            )
        },
    ));
    // Stable: equal log times stay in file order.
    tail.messages.sort_by_key(|m| m.log_time);
    Ok(tail)
}

impl McapLog {
    /// Opens `data`; `check_uncompressed_chunks` as in [`crate::OpenOptions`].
    pub(crate) fn open(
        data: impl Into<Input>,
        check_uncompressed_chunks: bool,
    ) -> Result<(Self, Vec<Arc<Channel>>, Vec<Problem>)> {
        let options = ReadOptions::default().verify_uncompressed_chunks(check_uncompressed_chunks);
        let input: Input = data.into();
        let reader = McapReader::open_with(input.clone(), options)?;
        let summary = reader.summary();
        let cut = summary.footer.is_none() && !reader.is_draft();
        let tail = if cut {
            read_cut_tail(&input, summary.scan_stopped_at)?
        } else {
            CutTail::default()
        };
        let mut builder = ChannelBuilder::default();
        for schema in summary.schemas.values() {
            builder.schema(schema);
        }
        for schema in tail.schemas.iter().filter(|s| s.id != 0) {
            if !summary.schemas.contains_key(&schema.id) {
                builder.schema(schema);
            }
        }
        let mut channels: BTreeMap<u16, Arc<Channel>> = summary
            .channels
            .iter()
            .map(|(&id, c)| (id, Arc::new(builder.channel(c))))
            .collect();
        for channel in &tail.channels {
            channels
                .entry(channel.id)
                .or_insert_with(|| Arc::new(builder.channel(channel)));
        }
        let channels = channels.into_values().collect();
        let mut problems = Vec::new();
        if reader.is_draft() {
            problems.push(Problem::info(
                ProblemKind::Unsupported,
                None,
                "pre-ratification draft layout: read through a mapping to the ratified records; `recover` converts it",
            ));
        }
        if summary.source == SummarySource::Scan && !reader.is_draft() {
            let reason = summary.scan_reason.clone().unwrap_or_default();
            if summary.footer.is_none() {
                problems.push(Problem::warning(
                    ProblemKind::Truncated,
                    None,
                    format!(
                        "no footer or summary (the file was cut or is still being written): read by a scan ({reason}); `recover` writes an indexed copy"
                    ),
                ));
            } else {
                problems.push(Problem::info(
                    ProblemKind::Index,
                    None,
                    format!("read by a scan: {reason}"),
                ));
            }
        }
        problems.extend(tail.problems);
        let log = Self {
            reader,
            tail: tail.messages,
        };
        Ok((log, channels, problems))
    }

    /// The file's reader.
    pub(crate) fn reader(&self) -> &McapReader {
        &self.reader
    }

    /// Whether the file was cut (no footer): its summary is a scan's, its last chunk partial.
    pub(crate) fn is_cut(&self) -> bool {
        self.reader.summary().footer.is_none() || !self.tail.is_empty()
    }

    pub(crate) fn profile(&self) -> Option<String> {
        let header = self.reader.summary().header.as_ref()?;
        Some(header.profile.to_string())
    }

    pub(crate) fn chunks(&self) -> Vec<ChunkInfo> {
        let mut chunks: Vec<ChunkInfo> = self
            .reader
            .summary()
            .chunk_indexes
            .iter()
            .map(|c| ChunkInfo {
                offset: c.chunk_start_offset,
                start_ns: c.message_start_time,
                end_ns: c.message_end_time,
                compression: compression_name(&c.compression),
                compressed_bytes: c.compressed_size,
                uncompressed_bytes: c.uncompressed_size,
                message_count: None,
            })
            .collect();
        chunks.sort_by_key(|c| c.offset);
        chunks
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
            let name = compression_name(&chunk.compression);
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
        let mut count = |channel_id: u16, log_time: u64| {
            total += 1;
            *counts.entry(u32::from(channel_id)).or_insert(0) += 1;
            start = Some(start.map_or(log_time, |s: u64| s.min(log_time)));
            end = Some(end.map_or(log_time, |e: u64| e.max(log_time)));
        };
        for m in self.reader.messages().order(Order::File).iter()? {
            let m = m?;
            count(m.channel_id, m.log_time);
        }
        for m in &self.tail {
            count(m.channel_id, m.log_time);
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
            .order(order)
            .time_range(filter.start_ns()..=filter.end_ns_inclusive());
        if let Some(ids) = &selection.channels {
            // Channel ids come from this file, so they fit in u16.
            query = query.channel_ids(ids.iter().filter_map(|&id| u16::try_from(id).ok()));
        }
        let tail: Vec<TailMessage> = self
            .tail
            .iter()
            .filter(|m| {
                selection.contains(u32::from(m.channel_id)) && filter.contains_time(m.log_time)
            })
            .cloned()
            .collect();
        let mut tail = tail;
        if order == Order::ReverseLogTime {
            // Sorted by log time, equal times in file order: now the exact reverse.
            tail.reverse();
        }
        Ok(MessagesInner::Mcap(Box::new(McapMessages {
            inner: query.iter()?,
            channels: channels.to_vec(),
            head: None,
            tail: tail.into_iter().peekable(),
            order,
        })))
    }
}

pub(crate) struct McapMessages {
    inner: robolog_mcap::MessageIter,
    channels: Vec<Arc<Channel>>,
    /// The next message of `inner`, read ahead to be merged with the tail by log time.
    head: Option<robolog_mcap::OwnedMessage>,
    /// Messages of a cut file's last, partial chunk: after the others in file order, merged
    /// with them in log-time order.
    tail: std::iter::Peekable<std::vec::IntoIter<TailMessage>>,
    order: Order,
}

impl McapMessages {
    pub(crate) fn next(&mut self) -> Option<Result<Message>> {
        if self.head.is_none() && self.tail.peek().is_none() {
            // Every file but a cut one: the index's messages alone.
            return Some(match self.inner.next()? {
                Ok(m) => self.message(m.channel_id, m.log_time, m.publish_time, m.sequence, m.data),
                Err(e) => Err(e.into()),
            });
        }
        if self.head.is_none() {
            match self.inner.next() {
                Some(Ok(m)) => self.head = Some(m),
                Some(Err(e)) => return Some(Err(e.into())),
                None => {}
            }
        }
        let tail_first = match (&self.head, self.tail.peek()) {
            (None, None) => return None,
            (None, Some(_)) => true,
            (Some(_), None) => false,
            (Some(head), Some(tail)) => match self.order {
                Order::File => false,
                // The tail follows the others in the file: after them at equal times.
                Order::ReverseLogTime => tail.log_time >= head.log_time,
                Order::LogTime | Order::Topic => tail.log_time < head.log_time,
            },
        };
        Some(if tail_first {
            let m = self.tail.next()?;
            self.message(m.channel_id, m.log_time, m.publish_time, m.sequence, m.data)
        } else {
            let m = self.head.take()?;
            self.message(m.channel_id, m.log_time, m.publish_time, m.sequence, m.data)
        })
    }

    fn message(
        &self,
        channel_id: u16,
        log_time: u64,
        publish_time: u64,
        sequence: u32,
        data: Bytes,
    ) -> Result<Message> {
        let Some(channel) = channel_by_id(&self.channels, u32::from(channel_id)) else {
            return Err(Error::UndefinedChannel {
                format: Format::Mcap,
                channel: u64::from(channel_id),
                offset: None,
            });
        };
        Ok(Message {
            channel: Arc::clone(channel),
            log_time_ns: log_time,
            publish_time_ns: Some(publish_time),
            sequence: Some(sequence),
            data,
        })
    }
}

/// A chunk's compression as the summaries name it: `none` for MCAP's empty string.
fn compression_name(compression: &str) -> String {
    if compression.is_empty() {
        "none".to_owned()
    } else {
        compression.to_owned()
    }
}
