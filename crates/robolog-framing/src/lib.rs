//! Bytes-level primitives shared by the robolog container crates (ROS bag, MCAP, BDDF).
//!
//! - [`ByteReader`]: a zero-copy, bounds-checked little-endian reader over `&[u8]` whose every
//!   error carries the absolute byte offset and what was being read;
//! - [`ByteWriter`]: the matching writer, with length fields patched after the fact;
//! - [`check_len`]: the single check every untrusted length goes through before it sizes an
//!   allocation or a slice, and [`read_exact_bounded`] for streams;
//! - [`Compressor`] / [`Decompressor`]: one chunk at a time, LZ4 frames (with the ROS `roslz4`
//!   profile), zstd and bzip2, each behind a cargo feature;
//! - [`crc32`] / [`Crc32`] and [`CountingWriter`] for checksummed single-pass writing;
//! - [`ParallelMap`]: decode upcoming chunks on worker threads (a process-wide pool, started
//!   once), results in order;
//! - [`Problem`] (with its [`Severity`] and [`ProblemKind`]): one finding of a check, the one
//!   type every container crate and the facade report;
//! - [`StreamWindow`]: the bytes of a stream from a point on, read ahead as far as asked and
//!   never more than a limit (recovery of a pipe or a remote object);
//! - [`read_file`] (a whole file as [`Bytes`]) and [`AtomicFile`] (outputs renamed into place on
//!   success; [`remove_temporary_files`] for a program ending on a signal).
//!
//! ```
//! use robolog_framing::{ByteReader, ByteWriter, Compression, Compressor, Decompressor};
//!
//! // Write a record: op byte, then a u32-prefixed topic, then a u64 length and a payload.
//! let mut record = Vec::new();
//! let mut w = ByteWriter::new(&mut record);
//! w.write_u8(0x02);
//! w.write_str_u32("/imu")?;
//! w.write_bytes_u64(b"payload");
//!
//! // Compress it as a ROS-compatible LZ4 frame (when the `lz4` feature is on) and decompress it
//! // again, refusing to produce more than the declared size.
//! let codec = if Compression::Lz4.is_enabled() { Compression::Lz4 } else { Compression::None };
//! let mut frame = Vec::new();
//! Compressor::new(codec)
//!     .with_lz4_frame(robolog_framing::Lz4Frame::RosCompatible)
//!     .compress(&record, &mut frame)?;
//! let mut chunk = Vec::new();
//! Decompressor::new().decompress(codec, &frame, record.len(), 1 << 30, &mut chunk)?;
//!
//! // Read it back without copying.
//! let mut r = ByteReader::new(&chunk);
//! assert_eq!(r.read_u8("op")?, 0x02);
//! assert_eq!(r.read_str_u32("topic")?, "/imu");
//! assert_eq!(r.read_bytes_u64("data")?, b"payload");
//! // Reading past the end is an error that says where and what.
//! let err = r.read_u32("conn").unwrap_err();
//! assert_eq!((err.offset, err.what), (24, "conn"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod atomic_file;
mod bounded_read;
mod buffer_pool;
mod byte_reader;
mod byte_writer;
mod compression;
mod counting_writer;
mod crc;
mod error;
mod inclusive_range;
mod length;
mod parallel_map;
mod problem;
mod read_file;
mod recycle_pool;
mod stream_window;
mod worker_pool;

pub use atomic_file::{AtomicFile, remove_temporary_files};
pub use bounded_read::{StreamError, read_exact_bounded};
pub use buffer_pool::BufferPool;
pub use byte_reader::{ByteReader, utf8};
pub use byte_writer::{ByteWriter, LenSlot};
pub use bytes::Bytes;
pub use compression::{
    CodecError, Compression, Compressor, Decompressor, Lz4Frame, PrefixDecoder, Salvage, compress,
    decompress,
};
pub use counting_writer::CountingWriter;
pub use crc::{Crc32, crc32};
pub use error::{Error, ErrorKind};
pub use inclusive_range::InclusiveRange;
pub use length::{LengthBound, check_len};
pub use parallel_map::{ParallelMap, default_threads};
pub use problem::{Problem, ProblemKind, Severity};
pub use read_file::read_file;
pub use recycle_pool::RecyclePool;
pub use stream_window::{StreamWindow, WindowError};
pub use worker_pool::MAX_POOL_THREADS;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
