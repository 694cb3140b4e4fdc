//! The MCAP storage: a `.mcap` file with profile `ros2`, read through robolog-mcap.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use robolog_framing::{Problem, ProblemKind};
use robolog_mcap::{McapReader, ReadOptions};

use crate::definition::Definition;
use crate::error::{Error, Result};
use crate::metadata::{BagMetadata, TopicMetadata};
use crate::qos::parse_profiles;
use crate::storage::{FileCounts, FileQuery, FileTopic, FileView, RawMessage, storage_input};

/// The name of the metadata record rosbag2 writes into each MCAP file.
pub const METADATA_RECORD: &str = "rosbag2";

/// An open MCAP storage file.
#[derive(Debug)]
pub(crate) struct McapStorage {
    pub(crate) path: PathBuf,
    pub(crate) reader: McapReader,
    pub(crate) view: FileView,
}

impl McapStorage {
    /// Opens the MCAP storage file `readable` (reported as `path`), memory-mapped when
    /// `mapped`.
    pub(crate) fn open(
        path: &Path,
        readable: &Path,
        options: ReadOptions,
        mapped: bool,
    ) -> Result<Self> {
        let data = storage_input(readable, mapped).map_err(|e| Error::io(path, e))?;
        let reader = McapReader::open_with(data, options).map_err(|e| Error::mcap(path, e))?;
        let mut notes = Vec::new();
        let summary = reader.summary();
        if let Some(header) = &summary.header
            && header.profile != "ros2"
        {
            notes.push(Problem::warning(
                ProblemKind::Metadata,
                None,
                format!(
                    "MCAP profile {:?} where rosbag2 writes \"ros2\"",
                    header.profile
                ),
            ));
        }
        if summary.source == robolog_mcap::SummarySource::Scan {
            notes.push(Problem::warning(
                ProblemKind::Index,
                None,
                format!(
                    "no usable summary: read by a scan ({})",
                    summary
                        .scan_reason
                        .clone()
                        .unwrap_or_else(|| "no summary section".to_owned())
                ),
            ));
        }
        let mut topics = Vec::new();
        for channel in summary.channels.values() {
            let schema = summary.schemas.get(&channel.schema_id);
            let type_name = schema.map(|s| s.name.to_string()).unwrap_or_default();
            let definition = match schema {
                Some(s) => Definition::from_stored(
                    &s.encoding,
                    String::from_utf8_lossy(&s.data).into_owned(),
                ),
                None => Definition::NotFound {
                    encoding: String::new(),
                },
            };
            let meta = |key: &str| {
                channel
                    .metadata
                    .get(&Cow::Borrowed(key))
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            };
            let qos_text = meta("offered_qos_profiles");
            let offered_qos_profiles = parse_profiles(&qos_text).unwrap_or_else(|e| {
                notes.push(Problem::warning(
                    ProblemKind::Metadata,
                    None,
                    format!(
                        "channel {} ({}): offered_qos_profiles unreadable ({e}); read as none",
                        channel.id, channel.topic
                    ),
                ));
                Vec::new()
            });
            topics.push(FileTopic {
                local_id: i64::from(channel.id),
                metadata: TopicMetadata {
                    name: channel.topic.to_string(),
                    type_name,
                    serialization_format: channel.message_encoding.to_string(),
                    offered_qos_profiles,
                    type_description_hash: meta("topic_type_hash"),
                },
                definition,
            });
        }
        let (stored_metadata, ros_distro) = stored_metadata(&reader, &mut notes);
        let mut counts = match &summary.statistics {
            Some(stats) => FileCounts {
                message_count: stats.message_count,
                start_ns: (stats.message_count > 0).then_some(stats.message_start_time),
                end_ns: (stats.message_count > 0).then_some(stats.message_end_time),
                per_topic: Some(
                    stats
                        .channel_message_counts
                        .iter()
                        .map(|(&id, &n)| (i64::from(id), n))
                        .collect(),
                ),
            },
            None => count_messages(&reader).map_err(|e| Error::mcap(path, e))?,
        };
        // The chunk indexes are what queries go by; some writers fill the Statistics times
        // wrongly (a Go writer takes a log time of 0 for "unset").
        let chunk_start = summary
            .chunk_indexes
            .iter()
            .map(|c| c.message_start_time)
            .min();
        let chunk_end = summary
            .chunk_indexes
            .iter()
            .map(|c| c.message_end_time)
            .max();
        if summary.statistics.is_some()
            && summary
                .chunk_indexes
                .iter()
                .all(|c| c.message_start_time <= c.message_end_time)
            && let (Some(start), Some(end)) = (chunk_start, chunk_end)
            && counts.message_count > 0
            && (counts.start_ns, counts.end_ns) != (Some(start), Some(end))
        {
            notes.push(Problem::warning(ProblemKind::Index, None, format!(
                "the Statistics record says messages from {} to {} ns, the chunk indexes from {start} to {end} ns: times from the chunk indexes",
                counts.start_ns.unwrap_or(0),
                counts.end_ns.unwrap_or(0)
            )));
            counts.start_ns = Some(start);
            counts.end_ns = Some(end);
        }
        Ok(Self {
            path: path.to_path_buf(),
            reader,
            view: FileView {
                topics,
                ros_distro,
                stored_metadata,
                counts,
                notes,
            },
        })
    }

    pub(crate) fn messages(&self, query: &FileQuery) -> Result<McapMessages> {
        let mut q = self
            .reader
            .messages()
            .order(query.order)
            .time_range(query.start..=query.end_inclusive);
        if let Some(ids) = &query.topics {
            q = q.channel_ids(ids.iter().filter_map(|&id| u16::try_from(id).ok()));
        }
        Ok(McapMessages {
            inner: q.iter().map_err(|e| Error::mcap(&self.path, e))?,
            path: self.path.clone(),
        })
    }
}

/// The last `rosbag2` metadata record: Jazzy's `serialized_metadata`, or the older
/// `ROS_DISTRO`-only record.
fn stored_metadata(
    reader: &McapReader,
    notes: &mut Vec<Problem>,
) -> (Option<BagMetadata>, Option<String>) {
    let mut result = (None, None);
    for index in reader.metadata_indexes() {
        if index.name != METADATA_RECORD {
            continue;
        }
        let record = match reader.read_metadata(index) {
            Ok(r) => r,
            Err(e) => {
                notes.push(Problem::warning(
                    ProblemKind::Metadata,
                    None,
                    format!(
                        "the rosbag2 metadata record at byte {} is unreadable: {e}",
                        index.offset
                    ),
                ));
                continue;
            }
        };
        let mut metadata = None;
        if let Some(text) = record.metadata.get(&Cow::Borrowed("serialized_metadata")) {
            match BagMetadata::from_serialized(text) {
                Ok(m) => metadata = Some(m),
                Err(e) => notes.push(Problem::warning(
                    ProblemKind::Metadata,
                    None,
                    format!(
                        "the rosbag2 metadata record at byte {} is unreadable: {e}",
                        index.offset
                    ),
                )),
            }
        }
        let distro = record
            .metadata
            .get(&Cow::Borrowed("ROS_DISTRO"))
            .map(|d| d.to_string())
            .or_else(|| {
                metadata
                    .as_ref()
                    .map(|m: &BagMetadata| m.ros_distro.clone())
            })
            .filter(|d| !d.is_empty());
        // The last record wins.
        result = (metadata, distro.or(result.1));
    }
    result
}

fn count_messages(reader: &McapReader) -> robolog_mcap::Result<FileCounts> {
    let mut counts = FileCounts {
        per_topic: Some(Vec::new()),
        ..FileCounts::default()
    };
    let mut per: std::collections::BTreeMap<i64, u64> = Default::default();
    let mut it = reader.messages().order(crate::Order::File).iter()?;
    while let Some(m) = it.next_ref() {
        let m = m?;
        counts.message_count += 1;
        *per.entry(i64::from(m.channel_id)).or_insert(0) += 1;
        counts.start_ns = Some(counts.start_ns.map_or(m.log_time, |s| s.min(m.log_time)));
        counts.end_ns = Some(counts.end_ns.map_or(m.log_time, |e| e.max(m.log_time)));
    }
    counts.per_topic = Some(per.into_iter().collect());
    Ok(counts)
}

/// The messages of one MCAP query.
pub(crate) struct McapMessages {
    inner: robolog_mcap::MessageIter,
    path: PathBuf,
}

impl std::fmt::Debug for McapMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapMessages")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl Iterator for McapMessages {
    type Item = Result<RawMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.inner.next()? {
            Ok(m) => Ok(RawMessage {
                local_topic: i64::from(m.channel_id),
                log_time: m.log_time,
                publish_time: Some(m.publish_time),
                sequence: Some(m.sequence),
                data: m.data,
                row: -1,
            }),
            Err(e) => Err(Error::mcap(&self.path, e)),
        })
    }
}
