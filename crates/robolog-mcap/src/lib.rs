//! MCAP files: a sans-io record parser, streaming and indexed readers, a single-pass writer,
//! `doctor`-style checks and recovery of truncated or corrupt files, plus read-only support for
//! the pre-ratification draft layout.
//!
//! - [`parse`]: bytes in, [`Record`]s out (every ratified record; unknown trailing fields
//!   skipped; private and unknown opcodes handed over as [`Record::Unknown`]);
//! - [`LinearReader`] (over `Bytes`, chunks decoded ahead on worker threads) and
//!   [`StreamReader`] (over `std::io::Read`): every record in file order, chunks flattened,
//!   chunk, data-section and summary CRCs checked ([`ReadOptions`] switches them);
//! - [`McapReader`]: footer → summary → chunk indexes, then a [`MessageQuery`] by topic, channel
//!   and time range in log-time, reverse or file [`Order`], decompressing only the chunks that
//!   can hold wanted messages, and (for a topic or channel query with message indexes) each
//!   only up to its last wanted message; the CRCs of the compressed chunks it decodes whole are
//!   checked, and of uncompressed ones when asked
//!   ([`ReadOptions::verify_uncompressed_chunks`]), since that check reads every byte;
//! - [`Writer`]: one pass over any `Write`, chunked (none/lz4/zstd) or not, every index and
//!   summary part switchable ([`WriteOptions`]); over a file ([`Writer::new_seekable`]),
//!   uncompressed chunks go out as they fill, with one copy of each message less;
//! - [`check`]: the checks of `mcap doctor` and more, as [`Problem`]s with byte offsets
//!   ([`check_input`]: the same of a file read by position, in one front-to-back pass);
//! - [`recover`]: a valid, indexed file from a truncated, damaged or draft-layout one, with a
//!   [`Report`] of what was kept and lost.
//!
//! Both message iterators hand out [`OwnedMessage`]s that share their chunk's bytes; their
//! `next_ref` ([`LinearMessages::next_ref`], [`MessageIter::next_ref`]) lends each [`Message`]
//! until the next call instead, the cheapest way to look at every message once.
//!
//! ```
//! use robolog_mcap::{Bytes, McapReader, Message, Order, Severity, WriteOptions, Writer, check};
//!
//! // Write a small file with one schema, one channel and three messages.
//! let mut writer = Writer::new(Vec::new(), WriteOptions::new().profile("ros1"))?;
//! let schema = writer.register_schema("std_msgs/String", "ros1msg", b"string data\n")?;
//! let channel = writer.register_channel("/chatter", "ros1", schema, Default::default())?;
//! for (i, t) in [30u64, 10, 20].into_iter().enumerate() {
//!     let text = format!("hello {i}");
//!     let mut data = (text.len() as u32).to_le_bytes().to_vec();
//!     data.extend_from_slice(text.as_bytes());
//!     writer.write_message(&Message {
//!         channel_id: channel,
//!         sequence: i as u32,
//!         log_time: t,
//!         publish_time: t,
//!         data: &data,
//!     })?;
//! }
//! let file = Bytes::from(writer.finish()?);
//! // Valid; the only remarks are warnings about the log times going backwards.
//! assert!(check(&file).iter().all(|p| p.severity == Severity::Warning));
//!
//! // Read it back through the index, in log-time order, from one topic.
//! let reader = McapReader::open(file)?;
//! assert_eq!(reader.summary().channels[&channel].topic, "/chatter");
//! let messages: Vec<_> = reader
//!     .messages()
//!     .topics(["/chatter"])
//!     .order(Order::LogTime)
//!     .iter()?
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(messages.iter().map(|m| m.log_time).collect::<Vec<_>>(), [10, 20, 30]);
//! assert_eq!(&messages[0].data[4..], b"hello 1");
//! # Ok::<(), robolog_mcap::McapError>(())
//! ```

#![forbid(unsafe_code)]

mod check;
mod chunk;
mod chunks;
mod decode;
pub mod draft;
mod error;
mod linear;
mod message;
mod options;
pub mod parse;
mod query;
mod reader;
mod record_source;
pub mod records;
mod recover;
pub mod serialize;
mod stream;
mod summary;
mod window;
mod writer;

pub use check::{CheckOptions, Checked, check, check_input, check_with};
pub use chunk::{compression_from_name, compression_name, decompress_chunk};
pub use error::{McapError, Result};
pub use linear::{LinearMessages, LinearReader};
pub use message::OwnedMessage;
pub use options::{Layout, ReadOptions};
pub use query::{MessageIter, MessageQuery};
pub use reader::McapReader;
pub use records::{
    Attachment, AttachmentIndex, Channel, Chunk, ChunkIndex, DataEnd, Footer, Header, Message,
    MessageIndex, Metadata, MetadataIndex, Record, Schema, Statistics, SummaryOffset,
};
pub use recover::{
    CutChunk, RecoverOptions, Report, cut_chunk_span, recover, recover_file, recover_input,
    recover_stream, recover_with, salvage_cut_chunk,
};
pub use robolog_framing::{Bytes, Compression};
pub use robolog_framing::{Problem, ProblemKind, Severity};
pub use robolog_query::{Input, Order};
pub use stream::StreamReader;
pub use summary::{Summary, SummarySource};
pub use writer::{DEFAULT_CHUNK_SIZE, WriteOptions, Writer};

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
