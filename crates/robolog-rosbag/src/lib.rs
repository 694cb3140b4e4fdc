//! ROS bag files: read format 2.0 (indexed, reading by position only the parts a query needs, or
//! streaming over `Read`) and 1.2, write 2.0 (and 1.2), and reindex or recover bags that were
//! never closed or were cut short.
//!
//! A 2.0 bag without a usable index is scanned in file order; [`reindex`] (of a bag in memory,
//! or streamed through a window by [`reindex_input`] and [`reindex_stream`]) and the
//! [`StreamReader`] (over any `Read`) read in file order too, and all follow one set of rules
//! for damage (runs of zero bytes, cut records, corrupt or cut chunks, length limits), so they
//! keep the same messages and report the same [`Problem`]s at the same offsets.
//!
//! Messages come out as opaque bytes plus their connection's type, md5sum and definition;
//! understanding the definitions is the job of `robolog-msg` and `robolog-ros1`.
//!
//! Opening an indexed 2.0 bag reads its index section only, so it takes the same time whatever
//! the bag's size; each chunk's header is read when a query first needs that chunk
//! ([`OpenOptions::verify_chunks`] checks them all at open instead).
//!
//! A query's [`Messages`] iterate as [`Message`]s, which share their chunk's bytes and may be
//! kept; [`Messages::next_ref`] lends them one at a time instead, which is the fastest way to
//! look at every message once. Upcoming chunks are decompressed, or walked, on worker threads.
//!
//! ```
//! use std::io::Cursor;
//! use robolog_rosbag::{Bag, Order, Writer};
//!
//! // Write a small bag…
//! let mut writer = Writer::new(Cursor::new(Vec::new()))?;
//! let conn = writer.add_connection("/chatter", "std_msgs/String",
//!     "992ce8a1687cec8c8bd883ec73ca41d1", "string data\n")?;
//! writer.write(conn, 2_000_000_000, b"\x02\0\0\0hi")?;
//! writer.write(conn, 1_000_000_000, b"\x02\0\0\0yo")?;
//! let bytes = writer.finish()?.into_inner();
//!
//! // …and read it back in time order.
//! let bag = Bag::open(bytes)?;
//! assert_eq!(bag.connections()[0].topic, "/chatter");
//! let times: Vec<u64> = bag
//!     .messages()
//!     .topics(["/chatter"])
//!     .order(Order::LogTime)
//!     .into_iter()
//!     .map(|m| m.map(|m| m.time_ns))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(times, [1_000_000_000, 2_000_000_000]);
//! # Ok::<(), robolog_rosbag::Error>(())
//! ```

#![forbid(unsafe_code)]

mod chunk;
mod chunks;
mod connection;
mod error;
mod format;
mod linear;
mod open;
mod query;
mod reindex;
mod scan;
mod stream;
mod summary;
mod v12;
mod writer;
mod writer12;

pub use chunk::ChunkCompression;
pub use connection::Connection;
pub use error::{Error, RecordKind, Result};
pub use format::version::Version;
pub use open::{Bag, IndexStatus, OpenOptions};
pub use query::{Message, MessageRef, Messages, Position, Query};
pub use reindex::{
    ReindexMode, ReindexOptions, ReindexReport, reindex, reindex_file, reindex_input,
    reindex_stream,
};
pub use robolog_framing::Bytes;
pub use robolog_framing::{Problem, ProblemKind, Severity};
pub use robolog_query::{Input, Order};
pub use stream::{StreamOptions, StreamReader, StreamReport};
pub use summary::{ChunkHeader, ChunkInfo, CompressionStats, Summary};
pub use writer::{WriteOptions, Writer};
pub use writer12::V12Writer;

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
