//! What a log holds, at a glance, the same way for every format.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::format::Format;
use crate::model::{Channel, Metadata};

/// Counts, times and layout of a log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    /// The format.
    pub format: Format,
    /// The format version (`2.0`, `1.2`; `0` for MCAP; `1.0.0` for BDDF).
    pub version: String,
    /// Format-specific facts: MCAP `profile` and `library` (and `layout: draft` for
    /// pre-ratification files), BDDF `checksum`.
    pub properties: BTreeMap<String, String>,
    /// Size of the input in bytes.
    pub file_size: u64,
    /// Messages in the log.
    pub message_count: u64,
    /// Earliest log time, `None` without messages.
    pub start_ns: Option<u64>,
    /// Latest log time.
    pub end_ns: Option<u64>,
    /// Every channel (also those without messages) with its message count, by id.
    pub channels: Vec<ChannelSummary>,
    /// Chunk statistics for formats with chunks (bag 2.0, chunked MCAP).
    pub chunks: Option<ChunkSummary>,
    /// Attachments (MCAP).
    pub attachments: Vec<AttachmentSummary>,
    /// Metadata records (MCAP), file annotations (BDDF).
    pub metadata: Vec<Metadata>,
    /// Whether the counts and queries come from the file's index or from a scan.
    pub index: IndexUse,
}

impl Summary {
    /// `end - start`, `None` without messages.
    pub fn duration_ns(&self) -> Option<u64> {
        Some(self.end_ns?.saturating_sub(self.start_ns?))
    }
}

/// One channel and how many messages it has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChannelSummary {
    /// The channel.
    pub channel: Arc<Channel>,
    /// Its messages.
    pub message_count: u64,
}

/// Chunks of a log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkSummary {
    /// Number of chunks.
    pub count: u64,
    /// Totals per compression.
    pub compression: Vec<CompressionSummary>,
}

/// The chunks of one compression.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CompressionSummary {
    /// `none`, `lz4`, `zstd`, `bz2`.
    pub compression: String,
    /// Chunks.
    pub chunks: u64,
    /// Bytes stored.
    pub compressed_bytes: u64,
    /// Bytes once decompressed.
    pub uncompressed_bytes: u64,
}

/// One chunk of a log ([`crate::Log::chunks`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ChunkInfo {
    /// Offset of the chunk record in the file.
    pub offset: u64,
    /// Earliest log time in the chunk, in nanoseconds.
    pub start_ns: u64,
    /// Latest log time in the chunk, in nanoseconds.
    pub end_ns: u64,
    /// `none`, `lz4`, `zstd`, `bz2`.
    pub compression: String,
    /// Bytes stored.
    pub compressed_bytes: u64,
    /// Bytes once decompressed.
    pub uncompressed_bytes: u64,
    /// Messages in the chunk, when the index says without reading it (bags).
    pub message_count: Option<u64>,
}

/// An attachment, without its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AttachmentSummary {
    /// File name.
    pub name: String,
    /// Media type.
    pub media_type: String,
    /// Log time in nanoseconds.
    pub log_time_ns: u64,
    /// Creation time in nanoseconds.
    pub create_time_ns: u64,
    /// Size in bytes.
    pub size: u64,
    /// Offset of the attachment record.
    pub offset: u64,
}

/// Where a reader's knowledge of the messages comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase", tag = "source")]
pub enum IndexUse {
    /// The file's own index.
    Index,
    /// A linear scan of the file, because it has no usable index.
    Scan {
        /// Why.
        reason: String,
    },
}
