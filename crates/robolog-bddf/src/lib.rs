//! Boston Dynamics Data Format (BDDF) 1.0.0 log files: an indexed reader, a streaming reader, a
//! single-pass writer, and recovery of cut files.
//!
//! A file holds *series*: streams of timestamped data blocks, either opaque messages (typically
//! serialized protobuf) or POD samples (packed little-endian numbers, scalars, vectors or
//! matrices). The descriptor types in [`proto`] are our own wire-compatible schema
//! (`proto/robolog/bddf/v1/descriptors.proto`, generated with `cargo xtask gen-proto`).
//!
//! ```
//! use robolog_bddf::proto::{MessageTypeDescriptor, PodType};
//! use robolog_bddf::{BddfReader, BddfWriter, SeriesKind, StreamReader, series_identifier};
//!
//! # fn main() -> Result<(), robolog_bddf::Error> {
//! // Write a message series and a series of 3-vectors.
//! let mut writer = BddfWriter::new(Vec::new())?;
//! let log = writer.add_message_series(
//!     series_identifier("bosdyn:channel", [("bosdyn:channel", "log")]),
//!     MessageTypeDescriptor { content_type: "text/plain".into(), ..Default::default() },
//!     Default::default(),
//! )?;
//! let accel = writer.add_pod_series(
//!     series_identifier("bosdyn:signal", [("example:var", "accel")]),
//!     PodType::Float32,
//!     &[3],
//!     Default::default(),
//! )?;
//! writer.write_message(log, 1_000, b"started")?;
//! writer.write_pod(accel, 1_000, &[0.0f32, 0.5, 9.8])?;
//! writer.write_pod(accel, 2_000, &[0.1f32, 0.4, 9.7])?;
//! let file = writer.finish()?;
//!
//! // Read it through its index: series, counts, blocks by series and time range.
//! let reader = BddfReader::open(file.clone().into())?;
//! let series = reader.series_by_index(accel).unwrap();
//! assert!(matches!(series.kind(), SeriesKind::Pod(_)));
//! let block = reader.read_block(accel, 0)?;
//! let samples = series.decode_pod(&block)?;
//! assert_eq!(samples.sample_count(), 2);
//! assert_eq!(samples.sample::<f32>(1), Some(&[0.1, 0.4, 9.7][..]));
//! let early: Vec<_> = reader.series_blocks(log, ..1_500)?.collect::<Result<_, _>>()?;
//! assert_eq!(&early[0].data[..], b"started");
//!
//! // Or stream it from any `Read`, checking the SHA-1 at the end.
//! let blocks = StreamReader::new(&file[..])?.collect::<Result<Vec<_>, _>>()?;
//! assert_eq!(blocks.len(), 2);
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]

/// The protobuf messages stored in BDDF files (generated from `proto/`; do not edit).
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
#[path = "proto/robolog.bddf.v1.rs"]
pub mod proto;

mod block;
mod block_writer;
mod error;
mod file_descriptor;
mod identifier;
mod pod;
mod reader;
mod recover;
mod scan;
mod series;
mod stream;
mod time;
mod writer;

pub use block::{DataBlock, END_MAGIC, START_MAGIC};
pub use error::{Error, PodError, Sha1Digest};
pub use identifier::{identifier_hash, series_identifier};
pub use pod::{PodElement, PodSamples, PodValues, SampleShape, element_size};
pub use reader::{BddfReader, Blocks, ChecksumCheck, IndexEntry, IndexSource, ReadOptions};
pub use recover::{RecoverReport, recover, recover_file, recover_input, recover_stream};
pub use robolog_framing::Bytes;
pub use robolog_framing::{Problem, ProblemKind, Severity};
pub use robolog_query::Input;
pub use scan::Trailer;
pub use series::{BlockStats, Series, SeriesKind};
pub use stream::{DEFAULT_MAX_BLOCK_SIZE, StreamOptions, StreamReader};
pub use time::{timestamp_from_nanos, timestamp_to_nanos};
pub use writer::{BddfWriter, DEFAULT_POD_BLOCK_BYTES, SeriesOptions, WriteOptions};

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
