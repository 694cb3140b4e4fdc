//! ROS bags (2.0 and 1.2) in the model: connections become `ros1` channels with `ros1msg`
//! schemas, record times become log times.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_query::Input;
use robolog_rosbag::{Bag, Connection, IndexStatus, Version};

use crate::encodings::{ROS1, ROS1MSG};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::log::{MessagesInner, channel_by_id};
use crate::model::{Channel, Message, Schema};
use crate::problem::{Problem, ProblemKind};
use crate::query::{Filter, Order, Selection};
use crate::summary::{
    ChannelSummary, ChunkInfo, ChunkSummary, CompressionSummary, IndexUse, Summary,
};

/// Builds channels from connections, one schema per distinct (type, md5sum, definition).
///
/// Connections of one type normally share one schema; two connections that declare the same
/// type and md5sum with different definition texts (comments, whitespace) keep their own, so
/// that no definition is lost.
#[derive(Debug, Default)]
pub(crate) struct ChannelBuilder {
    schemas: HashMap<(String, String, String), Arc<Schema>>,
}

impl ChannelBuilder {
    pub(crate) fn channel(&mut self, connection: &Connection) -> Channel {
        let key = (
            connection.message_type.clone(),
            connection.md5sum.clone(),
            connection.message_definition.clone(),
        );
        let next_id = u32::try_from(self.schemas.len() + 1).unwrap_or(u32::MAX);
        let schema = self
            .schemas
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Schema {
                    id: next_id,
                    name: connection.message_type.clone(),
                    encoding: ROS1MSG.to_owned(),
                    data: Bytes::from(connection.message_definition.clone().into_bytes()),
                })
            })
            .clone();
        Channel {
            id: connection.id,
            topic: connection.topic.clone(),
            message_encoding: ROS1.to_owned(),
            schema: Some(schema),
            metadata: connection_metadata(connection),
        }
    }
}

/// Every connection-header field but the type and definition (which are the schema), as the
/// upstream bag → MCAP converters do. A repeated field keeps its last value.
fn connection_metadata(connection: &Connection) -> BTreeMap<String, String> {
    connection
        .fields
        .iter()
        .filter(|(name, _)| name != "type" && name != "message_definition")
        .map(|(name, value)| (name.clone(), String::from_utf8_lossy(value).into_owned()))
        .collect()
}

/// Opens a bag the way every facade operation does: every chunk header is checked at open, so
/// that an index pointing anywhere but at a chunk makes the bag be read by a scan (and `info`
/// needs the headers anyway).
pub(crate) fn open_bag(input: impl Into<Input>) -> robolog_rosbag::Result<Bag> {
    open_bag_with(input, true)
}

/// Opens a bag, checking every chunk header at open when `verify_chunks`. A remote bag is
/// opened without: a query then reads only the headers of its chunks, and `info` reads them
/// all (fetched ahead, a few at once), where every header would cost a request at open.
pub(crate) fn open_bag_with(
    input: impl Into<Input>,
    verify_chunks: bool,
) -> robolog_rosbag::Result<Bag> {
    Bag::open_with(
        input,
        robolog_rosbag::OpenOptions::new().verify_chunks(verify_chunks),
    )
}

#[derive(Debug)]
pub(crate) struct BagLog {
    bag: Bag,
    /// Whether opening read and checked every chunk header.
    verified: bool,
}

impl BagLog {
    /// Opens the bag read through `input` (see [`open_bag_with`] for `verify_chunks`).
    pub(crate) fn open(
        input: Input,
        verify_chunks: bool,
    ) -> Result<(Self, Vec<Arc<Channel>>, Vec<Problem>)> {
        let bag = open_bag_with(input, verify_chunks)?;
        let mut builder = ChannelBuilder::default();
        let channels = bag
            .connections()
            .iter()
            .map(|c| Arc::new(builder.channel(c)))
            .collect();
        let mut problems = Vec::new();
        // The bag's own first problem states a missing (2.0) or damaged index; this one replaces
        // it with the facade's wording, so that the fact is reported once.
        let mut stated_by_bag = 1;
        match bag.index_status() {
            IndexStatus::Used => stated_by_bag = 0,
            IndexStatus::Missing if bag.version() == Version::V1_2 => {
                stated_by_bag = 0;
                problems.push(Problem::info(
                    ProblemKind::Index,
                    None,
                    "the 1.2 bag has no index: read by a linear scan",
                ));
            }
            IndexStatus::Missing => problems.push(Problem::warning(
                ProblemKind::Index,
                None,
                "the bag has no index (the recording was never closed): read by a linear scan; `recover` writes an indexed copy",
            )),
            IndexStatus::Damaged { offset, message } => problems.push(Problem::warning(
                ProblemKind::Index,
                Some(*offset),
                format!("the bag index is damaged ({message}): read by a linear scan"),
            )),
        }
        problems.extend(bag.problems().iter().skip(stated_by_bag).cloned());
        Ok((
            Self {
                bag,
                verified: verify_chunks,
            },
            channels,
            problems,
        ))
    }

    pub(crate) fn chunks(&self) -> Result<Vec<ChunkInfo>> {
        self.bag
            .chunks()
            .zip(self.bag.chunk_headers())
            .map(|(info, header)| {
                let header = header?;
                Ok(ChunkInfo {
                    offset: info.position,
                    start_ns: info.start_ns,
                    end_ns: info.end_ns,
                    compression: header.compression.name().to_owned(),
                    compressed_bytes: header.compressed_size,
                    uncompressed_bytes: header.uncompressed_size,
                    message_count: Some(
                        info.message_counts.iter().map(|&(_, n)| u64::from(n)).sum(),
                    ),
                })
            })
            .collect()
    }

    /// The summary; with `chunks`, the chunk totals, from every chunk header (read at open,
    /// then this reads nothing and cannot fail; for a remote bag read now, when a failure is
    /// an error).
    pub(crate) fn summary(
        &self,
        channels: &[Arc<Channel>],
        file_size: u64,
        chunks: bool,
    ) -> Result<Summary> {
        let s = self.bag.summary();
        let chunks = chunks && self.bag.version() == Version::V2_0;
        let compression = match chunks.then(|| self.bag.compression()) {
            None => Vec::new(),
            Some(Ok(compression)) => compression,
            Some(Err(e)) if !self.verified => return Err(e.into()),
            Some(Err(_)) => Vec::new(),
        };
        let chunks = chunks.then(|| ChunkSummary {
            count: s.chunk_count,
            compression: compression
                .iter()
                .map(|c| CompressionSummary {
                    compression: c.compression.name().to_owned(),
                    chunks: c.chunks,
                    compressed_bytes: c.compressed_bytes,
                    uncompressed_bytes: c.uncompressed_bytes,
                })
                .collect(),
        });
        Ok(Summary {
            format: Format::Bag,
            version: self.bag.version().to_string(),
            properties: BTreeMap::new(),
            file_size,
            message_count: s.message_count,
            start_ns: s.start_ns,
            end_ns: s.end_ns,
            channels: channels
                .iter()
                .map(|c| ChannelSummary {
                    channel: Arc::clone(c),
                    message_count: s.message_counts.get(&c.id).copied().unwrap_or(0),
                })
                .collect(),
            chunks,
            attachments: Vec::new(),
            metadata: Vec::new(),
            index: match self.bag.index_status() {
                IndexStatus::Used => IndexUse::Index,
                IndexStatus::Missing => IndexUse::Scan {
                    reason: "the bag has no index".to_owned(),
                },
                IndexStatus::Damaged { offset, message } => IndexUse::Scan {
                    reason: format!("the index is damaged at byte {offset}: {message}"),
                },
            },
        })
    }

    pub(crate) fn messages(
        &self,
        channels: &[Arc<Channel>],
        selection: &Selection,
        filter: &Filter,
        order: Order,
    ) -> Result<MessagesInner> {
        let mut query = self
            .bag
            .messages()
            .time_range(filter.start_ns()..=filter.end_ns_inclusive())
            .order(order);
        if let Some(ids) = &selection.channels {
            query = query.connections(ids.iter().copied());
        }
        Ok(MessagesInner::Bag(BagMessages {
            inner: query.iter(),
            channels: channels.to_vec(),
        }))
    }
}

pub(crate) struct BagMessages {
    inner: robolog_rosbag::Messages,
    channels: Vec<Arc<Channel>>,
}

impl BagMessages {
    pub(crate) fn next(&mut self) -> Option<Result<Message>> {
        let m = match self.inner.next()? {
            Ok(m) => m,
            Err(e) => return Some(Err(e.into())),
        };
        Some(to_message(&self.channels, m))
    }
}

fn to_message(channels: &[Arc<Channel>], m: robolog_rosbag::Message) -> Result<Message> {
    let channel = channel_by_id(channels, m.conn).ok_or(Error::UndefinedChannel {
        format: Format::Bag,
        channel: u64::from(m.conn),
        offset: match m.position {
            robolog_rosbag::Position::File(offset) => Some(offset),
            robolog_rosbag::Position::Chunk { chunk, .. } => Some(chunk),
        },
    })?;
    Ok(Message {
        channel: Arc::clone(channel),
        log_time_ns: m.time_ns,
        publish_time_ns: None,
        sequence: None,
        data: m.data,
    })
}
