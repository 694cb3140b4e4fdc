//! The robolog facade: open any supported log (ROS bag 1.2/2.0, MCAP, BDDF detected from its
//! first bytes; ROS 2 bags from a directory or `.db3` path), read it through one message model,
//! decode ROS 1 and ROS 2 messages, check and recover
//! damaged files, and convert or merge logs between formats.
//!
//! ```
//! use robolog::{Decoded, Decoder, Order};
//!
//! let path = robolog_testkit::testdata::path("bags/generated/ros_comm/ref_bz2.bag");
//! let log = robolog::open(path)?;
//! assert_eq!(log.format(), robolog::Format::Bag);
//!
//! // The summary comes from the index: counts per channel, times, chunks.
//! let summary = log.summary()?;
//! assert_eq!(summary.message_count, 150);
//!
//! // Query one topic over a time range, in log-time order, and decode the messages.
//! let mut decoder = Decoder::new();
//! let start = summary.start_ns.unwrap();
//! let mut texts = Vec::new();
//! for message in log
//!     .messages()
//!     .topics(["/chat*"])
//!     .time_range(start..start + 30_000_000)
//!     .order(Order::LogTime)
//!     .iter()?
//! {
//!     let message = message?;
//!     assert_eq!(message.channel.type_name(), "std_msgs/String");
//!     let decoded = decoder.decode(&message)?;
//!     if let Decoded::Ros1(m) = &decoded {
//!         texts.push(m.get("data")?.as_str().unwrap().to_owned());
//!     }
//!     assert!(decoded.to_json().starts_with(r#"{"data":"hello "#));
//! }
//! assert_eq!(texts, ["hello 0", "hello 1", "hello 2"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The model
//!
//! Every format is read into [`Channel`]s (topic, message encoding, optional [`Schema`],
//! metadata) and [`Message`]s (channel, `u64` log time in nanoseconds, optional publish time
//! and sequence, zero-copy [`Bytes`]). How each format maps onto it is documented on
//! [`Channel`] and [`Schema`]; BDDF series and the `bddf-pod` encoding in [`encodings`]. BDDF
//! times are signed: see [`NegativeTimes`] for times before 1970.
//!
//! # Reading
//!
//! - [`open`] / [`open_bytes`] give a [`Log`]: channels, [`Summary`] (and
//!   [`SummaryDocument`], the `robolog info --json` document built from it), [`Log::messages`]
//!   queries by topic (exact names and globs), time range and order, through the file's index
//!   when it has a usable one; what opening noticed (a missing index, a cut file) is in
//!   [`Log::problems`].
//! - [`open_reader`] reads any `Read` (stdin, a pipe) in file order: a [`LogStream`].
//! - [`Decoder`] decodes `ros1` messages into the `robolog-ros1` value tree and `cdr` (ROS 2)
//!   messages into the `robolog-cdr` one, both with JSON, passes `json` messages through, and
//!   says why anything else cannot be decoded.
//!
//! # Writing, converting, merging
//!
//! [`LogWriter`] is implemented by [`BagWriter`], [`McapWriter`], [`BddfWriter`] and
//! [`Rosbag2Writer`] (or
//! [`create_writer`]), writing to an [`Output`]: a path (written atomically), memory, a seekable
//! stream the caller opened, or any stream (not for bags); [`OutputSettings`] turns settings
//! given by name (format, compression, chunk size, ROS 2 storage) into writer options, as the
//! CLI and the Python package take them. [`convert`],
//! [`convert_stream`] and [`merge`] copy channels, messages, attachments and metadata with topic
//! and time filters and a progress hook. Message bytes and log times are always copied exactly.
//! What each target cannot hold:
//!
//! | target | dropped |
//! |---|---|
//! | bag | channels that are not `ros1` (refused, listed in the error), publish times, sequence numbers, attachments, metadata |
//! | MCAP | nothing (BDDF additional index values other than robolog's own, which the model does not carry) |
//! | BDDF | attachments, metadata records after the first message (earlier ones become file annotations), BDDF additional index values |
//! | ROS 2 bag | channels that are not `cdr` (refused, listed in the error), sequence numbers, attachments, metadata; publish times with sqlite3 storage |
//!
//! # Checking and recovering
//!
//! [`check`] validates any log's structure and lists [`Problem`]s with byte offsets;
//! [`recover`] writes a valid copy of a cut or damaged log with a [`RecoverReport`]. Errors
//! carry the byte offset where known ([`Error::offset`]).
//!
//! # Features
//!
//! `rosbag`, `mcap`, `bddf`, `rosbag2` (the formats), `ros1` (decoding, md5sums), `cdr` (ROS 2
//! decoding, with the bundled standard interfaces), `lz4`, `zstd`, `bz2`
//! (chunk codecs), `mmap`; all on by default. A file of a format compiled out gives
//! [`Error::FormatDisabled`], naming the feature.

// Two `unsafe` blocks, both behind the `unsafe` opt-in `OpenOptions::memory_map` (log.rs).
#![cfg_attr(not(feature = "mmap"), forbid(unsafe_code))]
#![cfg_attr(feature = "mmap", deny(unsafe_code))]
// A build without any format can only report which feature to enable: the rest is unreachable
// (a ROS 2 bag is opened by path before the formats read from bytes are tried).
#![cfg_attr(
    not(any(feature = "rosbag", feature = "mcap", feature = "bddf")),
    allow(unreachable_code, unused_variables, unused_imports, dead_code)
)]

#[cfg(feature = "rosbag")]
mod bag_log;
#[cfg(feature = "rosbag")]
mod bag_writer;
#[cfg(feature = "bddf")]
mod bddf_log;
#[cfg(feature = "bddf")]
mod bddf_writer;
mod check;
mod convert;
mod decode;
pub mod encodings;
mod error;
mod format;
mod log;
#[cfg(feature = "mcap")]
mod mcap_log;
#[cfg(feature = "mcap")]
mod mcap_writer;
mod merged;
#[cfg(feature = "migrate")]
pub mod migrate;
#[cfg(not(feature = "migrate"))]
mod migrate_off;
mod model;
mod output_settings;
mod problem;
mod query;
mod recover;
#[cfg(feature = "rosbag2")]
mod rosbag2_log;
#[cfg(feature = "rosbag2")]
mod rosbag2_writer;
mod sniff;
mod stream;
mod summary;
mod summary_document;
#[cfg(feature = "cdr")]
mod type_hash;
mod writer;

#[cfg(feature = "rosbag")]
pub use bag_writer::BagWriter;
#[cfg(feature = "bddf")]
pub use bddf_writer::BddfWriter;
pub use check::{CheckReport, check, check_bytes, check_input};
pub use convert::{
    ConvertOptions, ConvertReport, InputProblem, Progress, ProgressFn, convert, convert_stream,
    merge,
};
#[cfg(feature = "ros1")]
pub use decode::Ros1Message;
#[cfg(feature = "cdr")]
pub use decode::{CdrMessage, cdr_definitions};
pub use decode::{DecodeError, Decoded, Decoder};
pub use error::{Error, Result};
pub use format::Format;
pub use log::{Log, Messages, NegativeTimes, OpenOptions, Query, is_url, open, open_bytes};
#[cfg(feature = "mcap")]
pub use mcap_writer::McapWriter;
pub use merged::MergedMessages;
pub use model::{Attachment, Channel, Message, Metadata, Schema};
pub use output_settings::{Compression, CompressionMode, OutputSettings, SettingsError, Storage};
pub use problem::{Problem, ProblemKind, Severity};
pub use query::{Filter, Order, Selection, TopicMatcher};
pub use recover::{RecoverReport, recover, recover_file, recover_input, recover_reader};
pub use robolog_framing::{Bytes, remove_temporary_files};
pub use robolog_query::{Input, ReadAt};
#[cfg(feature = "rosbag2")]
pub use rosbag2_writer::Rosbag2Writer;
pub use sniff::{SNIFF_LEN, is_rosbag2_path, sniff};
pub use stream::{Item, LogStream, open_reader};
pub use summary::{
    AttachmentSummary, ChannelSummary, ChunkInfo, ChunkSummary, CompressionSummary, IndexUse,
    Summary,
};
pub use summary_document::{
    DocumentAttachment, DocumentChannel, DocumentChunks, SummaryDocument, format_utc,
};
#[cfg(feature = "cdr")]
pub use type_hash::{shown_type_hash, type_hash};
pub use writer::{Finished, LogWriter, Output, WriterOptions, create_writer};

/// The format crates, for their own options and lower-level APIs.
#[cfg(feature = "bddf")]
pub use robolog_bddf as bddf;
#[cfg(feature = "cdr")]
pub use robolog_cdr as cdr;
/// The byte-level machinery the format crates share: its [`ParallelMap`](framing::ParallelMap)
/// runs ordered work on the process-wide worker pool the readers decode on.
pub use robolog_framing as framing;
#[cfg(feature = "mcap")]
pub use robolog_mcap as mcap;
#[cfg(any(feature = "ros1", feature = "cdr"))]
pub use robolog_msg as msg;
/// Remote objects read by ranged requests (the `remote` feature): what [`open`] uses for URLs.
#[cfg(feature = "remote")]
pub use robolog_remote as remote;
#[cfg(feature = "ros1")]
pub use robolog_ros1 as ros1;
#[cfg(feature = "rosbag")]
pub use robolog_rosbag as rosbag;
#[cfg(feature = "rosbag2")]
pub use robolog_rosbag2 as rosbag2;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
