//! ROS 2 bags (rosbag2): a directory with `metadata.yaml` and its storage files, sqlite3
//! (`.db3`, schema versions 1–4) or MCAP (profile `ros2`), or a lone storage file.
//!
//! - [`Bag`] opens a bag directory (metadata.yaml versions 1–9, split files in order, zstd
//!   FILE and MESSAGE compression), a directory whose metadata.yaml is missing or stale (the
//!   view is rebuilt from the storage files, and [`Bag::problems`] says so), or a single `.db3`
//!   / `.mcap` file. Topics carry their QoS profiles, type hash and stored [`Definition`].
//! - [`Bag::messages`] queries by topic and receive-time range, in time or file order, merged
//!   across split files. sqlite storage is read through SQLite (bundled, so nothing needs to be
//!   installed) using the timestamp index; MCAP storage through `robolog-mcap`'s indexes.
//!
//! Message bytes are CDR and stay opaque here: decoding is the job of the CDR crate, joined to
//! this one in the `robolog` facade.
//!
//! ```
//! use robolog_rosbag2::{Bag, Order};
//!
//! let bag = Bag::open(robolog_testkit::testdata::path("rosbag2/sqlite3-talker"))?;
//! assert_eq!(bag.message_count(), 20);
//! let topic = bag.topics().iter().find(|t| t.name() == "/topic").unwrap();
//! assert_eq!(topic.type_name(), "std_msgs/msg/String");
//!
//! // The ten messages of one topic, in receive-time order.
//! let times: Vec<u64> = bag
//!     .messages()
//!     .topics(["/topic"])
//!     .order(Order::LogTime)
//!     .iter()?
//!     .map(|m| m.map(|m| m.log_time))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(times.len(), 10);
//! assert!(times.windows(2).all(|w| w[0] <= w[1]));
//! # Ok::<(), robolog_rosbag2::Error>(())
//! ```

// One `unsafe` block: storage files memory-mapped on request (`storage::storage_input`).
#![cfg_attr(not(feature = "mmap"), forbid(unsafe_code))]
#![cfg_attr(feature = "mmap", deny(unsafe_code))]

mod bag;
mod compression;
mod definition;
mod error;
mod layout;
mod mcap_storage;
mod mcap_writer;
pub mod metadata;
pub mod qos;
mod query;
mod recover;
mod sqlite;
mod storage;
mod writer;
mod yaml;

pub use bag::{Bag, BagKind, MetadataSource, OpenOptions, StorageFile, Topic};
pub use definition::Definition;
pub use error::{Error, Result, SqliteFault};
pub use layout::METADATA_FILE;
pub use mcap_storage::METADATA_RECORD;
pub use metadata::{
    BagMetadata, CompressionMode, FileInformation, TopicInformation, TopicMetadata,
};
pub use qos::QosProfile;
pub use query::{Message, Messages, Query};
pub use recover::{FileReport, Method, RecoverReport, recover};
pub use robolog_framing::Bytes;
pub use robolog_framing::{Problem, ProblemKind, Severity};
pub use robolog_query::Order;
pub use storage::StorageId;
pub use writer::{WriteOptions, Writer};

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
