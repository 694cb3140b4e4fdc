//! A log's summary as one self-contained document: what `robolog info --json` prints (the
//! Python package's `Log.summary()`; its tests compare it with the CLI's golden files).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::Format;
use crate::model::Metadata;
use crate::problem::Problem;
use crate::summary::{CompressionSummary, IndexUse, Summary};

/// A [`Summary`] with what a reader wants spelled out: the duration, UTC times, chunk totals
/// and compression ratio, per-channel rates, and the problems noticed on opening.
///
/// Serialized (serde), it is the `robolog info --json` document: keys `file`, `format`,
/// `version`, `properties`, `file_size`, `message_count`, `start_time`/`end_time`/`duration`
/// in nanoseconds, `start_utc`/`end_utc`, `chunks`, `channels`, `attachments`, `metadata`,
/// `index`, `problems`.
///
/// ```
/// let path = robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag");
/// let log = robolog::open(&path)?;
/// let document = robolog::SummaryDocument::new("ref_lz4.bag", &log.summary()?, log.problems());
/// assert_eq!(document.start_utc.as_deref(), Some("2020-09-13T12:26:40.000000000Z"));
/// assert_eq!(document.channels[0].rate_hz, Some(102.041));
/// let json = serde_json::to_value(&document)?;
/// assert_eq!(json["chunks"]["compression_ratio"], 3.749);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SummaryDocument {
    /// The file as the caller names it.
    pub file: String,
    /// The format.
    pub format: Format,
    /// The format version.
    pub version: String,
    /// Format-specific facts (see [`Summary::properties`]).
    pub properties: BTreeMap<String, String>,
    /// Size of the input in bytes.
    pub file_size: u64,
    /// Messages in the log.
    pub message_count: u64,
    /// Earliest log time, nanoseconds since 1970.
    pub start_time: Option<u64>,
    /// Latest log time.
    pub end_time: Option<u64>,
    /// `end_time - start_time`.
    pub duration: Option<u64>,
    /// `start_time` in RFC 3339 (see [`format_utc`]).
    pub start_utc: Option<String>,
    /// `end_time` in RFC 3339.
    pub end_utc: Option<String>,
    /// Chunk totals, for formats with chunks.
    pub chunks: Option<DocumentChunks>,
    /// Every channel, by id.
    pub channels: Vec<DocumentChannel>,
    /// Attachments, without their content.
    pub attachments: Vec<DocumentAttachment>,
    /// Metadata records.
    pub metadata: Vec<Metadata>,
    /// Whether the index was used.
    pub index: IndexUse,
    /// What opening the log noticed.
    pub problems: Vec<Problem>,
}

/// The chunks of a log, in a [`SummaryDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DocumentChunks {
    /// Number of chunks.
    pub count: u64,
    /// Bytes stored.
    pub compressed_bytes: u64,
    /// Bytes once decompressed.
    pub uncompressed_bytes: u64,
    /// Uncompressed over compressed bytes, to three decimals (`None` without stored bytes).
    pub compression_ratio: Option<f64>,
    /// Totals per compression.
    pub by_compression: Vec<CompressionSummary>,
}

/// One channel, in a [`SummaryDocument`].
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct DocumentChannel {
    /// Channel id.
    pub id: u32,
    /// Topic.
    pub topic: String,
    /// Schema name (the message type), `None` without a schema.
    pub schema_name: Option<String>,
    /// Schema encoding.
    pub schema_encoding: Option<String>,
    /// Message encoding.
    pub message_encoding: String,
    /// ROS 2 channels: the RIHS01 hash of the definition, or the one the recording declares
    /// when it holds no definition (see [`crate::shown_type_hash`]); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_hash: Option<String>,
    /// Messages on the channel.
    pub message_count: u64,
    /// Messages per second over the log's duration, to three decimals (`None` for a log
    /// without a duration).
    pub rate_hz: Option<f64>,
    /// The channel's metadata.
    pub metadata: BTreeMap<String, String>,
}

/// One attachment, in a [`SummaryDocument`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DocumentAttachment {
    /// File name.
    pub name: String,
    /// Media type.
    pub media_type: String,
    /// Log time in nanoseconds.
    pub log_time: u64,
    /// Creation time in nanoseconds.
    pub create_time: u64,
    /// Size in bytes.
    pub size: u64,
    /// Offset of the attachment record.
    pub offset: u64,
}

impl SummaryDocument {
    /// The document of `summary`, naming the log `file`, with the `problems` noticed when it
    /// was opened ([`crate::Log::problems`]).
    pub fn new(file: &str, summary: &Summary, problems: &[Problem]) -> Self {
        let duration = summary.duration_ns();
        let chunks = summary.chunks.as_ref().map(|c| {
            let compressed: u64 = c.compression.iter().map(|x| x.compressed_bytes).sum();
            let uncompressed: u64 = c.compression.iter().map(|x| x.uncompressed_bytes).sum();
            DocumentChunks {
                count: c.count,
                compressed_bytes: compressed,
                uncompressed_bytes: uncompressed,
                compression_ratio: (compressed > 0)
                    .then(|| round3(uncompressed as f64 / compressed as f64)),
                by_compression: c.compression.clone(),
            }
        });
        let channels = summary
            .channels
            .iter()
            .map(|entry| {
                let channel = &entry.channel;
                let schema = channel.schema.as_deref();
                DocumentChannel {
                    id: channel.id,
                    topic: channel.topic.clone(),
                    schema_name: schema.map(|s| s.name.clone()),
                    schema_encoding: schema.map(|s| s.encoding.clone()),
                    message_encoding: channel.message_encoding.clone(),
                    #[cfg(feature = "cdr")]
                    type_hash: crate::shown_type_hash(channel),
                    #[cfg(not(feature = "cdr"))]
                    type_hash: None,
                    message_count: entry.message_count,
                    rate_hz: duration
                        .filter(|&d| d > 0)
                        .map(|d| round3(entry.message_count as f64 * 1e9 / d as f64)),
                    metadata: channel.metadata.clone(),
                }
            })
            .collect();
        let attachments = summary
            .attachments
            .iter()
            .map(|a| DocumentAttachment {
                name: a.name.clone(),
                media_type: a.media_type.clone(),
                log_time: a.log_time_ns,
                create_time: a.create_time_ns,
                size: a.size,
                offset: a.offset,
            })
            .collect();
        SummaryDocument {
            file: file.to_owned(),
            format: summary.format,
            version: summary.version.clone(),
            properties: summary.properties.clone(),
            file_size: summary.file_size,
            message_count: summary.message_count,
            start_time: summary.start_ns,
            end_time: summary.end_ns,
            duration,
            start_utc: summary.start_ns.map(format_utc),
            end_utc: summary.end_ns.map(format_utc),
            chunks,
            channels,
            attachments,
            metadata: summary.metadata.clone(),
            index: summary.index.clone(),
            problems: problems.to_vec(),
        }
    }
}

/// Three decimals are plenty for a rate or a ratio, and keep the JSON stable to read.
fn round3(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

/// `ns` since 1970 as RFC 3339 in UTC with all nine fractional digits
/// (`2020-09-13T12:26:40.490000002Z`), so that times line up in columns and read back exactly.
///
/// ```
/// assert_eq!(robolog::format_utc(0), "1970-01-01T00:00:00.000000000Z");
/// assert_eq!(robolog::format_utc(u64::MAX), "2554-07-21T23:34:33.709551615Z");
/// ```
pub fn format_utc(ns: u64) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ns)) {
        Ok(timestamp) => format!("{timestamp:.9}"),
        // Unreachable for u64 (which ends in 2554), but a number beats a panic.
        Err(_) => format!("{ns} ns"),
    }
}
