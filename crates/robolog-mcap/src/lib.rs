//! MCAP files: a sans-io record parser, streaming and indexed readers, a single-pass writer,
//! `doctor`-style checks and recovery of truncated or corrupt files, plus read-only support for
//! the pre-ratification draft layout.

#![forbid(unsafe_code)]

mod check;
mod chunk;
mod decode;
pub mod draft;
mod error;
mod indexed;
mod linear;
mod message;
mod options;
mod stream;
mod summary;
pub mod parse;
pub mod records;
mod recover;
pub mod serialize;
mod writer;

pub use check::{CheckOptions, Problem, Severity, check, check_with};
pub use chunk::{compression_from_name, compression_name};
pub use decode::release_buffers;
pub use error::{McapError, Result};
pub use indexed::{McapReader, MessageIter, MessageQuery, Order};
pub use linear::{LinearMessages, LinearReader};
pub use message::OwnedMessage;
pub use options::{Layout, ReadOptions};
pub use recover::{Damage, Report, recover, recover_file};
pub use stream::StreamReader;
pub use summary::{Summary, SummarySource};
pub use records::{
    Attachment, AttachmentIndex, Channel, Chunk, ChunkIndex, DataEnd, Footer, Header, Message,
    MessageIndex, Metadata, MetadataIndex, Record, Schema, Statistics, SummaryOffset,
};
pub use robolog_framing::{Bytes, Compression};
pub use writer::{DEFAULT_CHUNK_SIZE, WriteOptions, Writer};
