//! The indexed-query engine shared by the robolog container crates (ROS bag, MCAP, and any
//! container with chunks described by an index), and the positional input under it.
//!
//! - [`Input`]: the bytes of a log read by range ([`ReadAt`]): a file with positional reads, a
//!   buffer in memory, an explicit `unsafe` memory map ([`Input::map`]), or any other source (a
//!   remote object);
//! - [`Container`]: what a format tells the engine (its chunks with their time bounds and
//!   channels, [`ChunkMeta`]) and what the engine asks of it (a chunk's index entries, a chunk or
//!   a prefix of it decoded, the message at an offset, a walk over its records);
//! - [`Query`] → [`Messages`]: plans which chunks a topic and time query needs, loads them on
//!   worker threads (each only up to its last wanted message when its index says where that
//!   is), merges their messages in log-time, reverse or file [`Order`], recycles the decode
//!   buffers ([`BufferPool`]) and lends the messages one at a time ([`Messages::next_entry`]).
//!
//! ```
//! use std::sync::Arc;
//! use robolog_query::{
//!     Bytes, ChunkMeta, Compression, Container, Decoded, Entry, Hits, Order, Query, Want,
//! };
//!
//! /// A toy format: chunks of 12-byte records (channel `u32`, time `u64`), without an index.
//! struct Toy {
//!     file: Bytes,
//!     chunks: Vec<ChunkMeta>,
//! }
//!
//! #[derive(Debug, Clone, Copy)]
//! struct Record {
//!     channel: u32,
//!     time: u64,
//!     offset: u64,
//! }
//!
//! impl Entry for Record {
//!     fn time(&self) -> u64 { self.time }
//!     fn channel(&self) -> u32 { self.channel }
//!     fn offset(&self) -> u64 { self.offset }
//! }
//!
//! impl Container for Toy {
//!     type Entry = Record;
//!     type Error = std::io::Error;
//!
//!     fn chunks(&self) -> &[ChunkMeta] {
//!         &self.chunks
//!     }
//!     fn index(&self, _chunk: usize, _want: &Want) -> Option<Hits> {
//!         None
//!     }
//!     fn read(&self, chunk: usize, _prefix: Option<u64>, _buffer: Vec<u8>) -> std::io::Result<Decoded> {
//!         let c = &self.chunks[chunk];
//!         let start = c.position as usize;
//!         let content = self.file.slice(start..start + c.uncompressed_size as usize);
//!         Ok(Decoded { content, whole: true, file_offset: Some(c.position) })
//!     }
//!     fn message_at(&self, content: &[u8], offset: u64) -> Option<Record> {
//!         let r = content.get(offset as usize..offset as usize + 12)?;
//!         let channel = u32::from_le_bytes(r[..4].try_into().ok()?);
//!         Some(Record { channel, time: u64::from_le_bytes(r[4..].try_into().ok()?), offset })
//!     }
//!     fn walk(&self, _chunk: usize, content: &[u8], want: &Want, out: &mut Vec<Record>) -> std::io::Result<bool> {
//!         for offset in (0..content.len() as u64).step_by(12) {
//!             let record = self.message_at(content, offset).ok_or(std::io::ErrorKind::InvalidData)?;
//!             if want.wants(record.channel, record.time) {
//!                 out.push(record);
//!             }
//!         }
//!         Ok(true)
//!     }
//! }
//!
//! // Two chunks that overlap in time, messages on channels 1 and 2.
//! let mut file = Vec::new();
//! let mut chunks = Vec::new();
//! for records in [[(1, 10), (2, 20), (1, 30)], [(1, 15), (1, 25), (2, 35)]] {
//!     let position = file.len() as u64;
//!     for (channel, time) in records {
//!         file.extend_from_slice(&u32::to_le_bytes(channel));
//!         file.extend_from_slice(&u64::to_le_bytes(time));
//!     }
//!     chunks.push(ChunkMeta {
//!         position,
//!         start_ns: records[0].1,
//!         end_ns: records[2].1,
//!         channels: Some(vec![1, 2]),
//!         messages: Some(3),
//!         compression: Compression::None,
//!         uncompressed_size: 36,
//!     });
//! }
//! let toy = Arc::new(Toy { file: Bytes::from(file), chunks });
//!
//! // Channel 1 from time 12 on, merged across the chunks in log-time order.
//! let mut messages = Query::new(toy, Want::new(Some([1]), 12..))
//!     .order(Order::LogTime)
//!     .threads(2)
//!     .run();
//! let mut times = Vec::new();
//! while let Some(message) = messages.next_entry() {
//!     times.push(message?.entry.time);
//! }
//! assert_eq!(times, [15, 25, 30]);
//! # Ok::<(), std::io::Error>(())
//! ```

#![cfg_attr(not(feature = "mmap"), forbid(unsafe_code))]

mod container;
mod input;
mod load;
mod merge;
mod order;
mod plan;

pub use container::{ChunkMeta, Container, Decoded, Entry, Hit, Hits, Want};
pub use input::{COALESCE_GAP, Input, InputStream, ReadAt, STREAM_PIECE};
pub use load::Batch;
pub use merge::{Lent, Messages, Query};
pub use order::Order;
pub use robolog_framing::{BufferPool, Bytes, Compression};

#[cfg(test)]
mod tests;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
