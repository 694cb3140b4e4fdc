//! Robot log messages as Arrow record batches: column layouts derived from the message
//! definitions, Parquet and Arrow IPC export, and DataFusion tables for SQL over logs.
//!
//! ```
//! use robolog_arrow::{ExportOptions, TopicLayout};
//!
//! let path = robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag");
//! let log = robolog::open(&path)?;
//!
//! // Batches of one topic, decoded straight into Arrow arrays.
//! let imu = log.channels().iter().find(|c| c.topic == "/imu").unwrap();
//! let layout = TopicLayout::new(imu)?;
//! let mut builder = layout.batch_builder(None)?;
//! for message in log.messages().topics(["/imu"]).iter()? {
//!     builder.push(&message?)?;
//! }
//! let batch = builder.finish()?;
//! assert_eq!(batch.num_rows(), 50);
//! assert_eq!(batch.schema().field(2).name(), "header");
//!
//! // One Parquet file per topic.
//! let out = tempfile::tempdir()?;
//! let report = robolog_arrow::export(&[&log], out.path(), ExportOptions::new())?;
//! assert_eq!(report.files.len(), 3);
//!
//! // SQL (the `sql` feature, on by default): one table per topic, plus `messages` and
//! // `channels`.
//! #[cfg(feature = "sql")]
//! {
//!     let tables = robolog_arrow::LogTables::open([&path])?;
//!     let batches = tables.sql_blocking(r#"SELECT count(*) AS n FROM "/chatter""#)?;
//!     assert_eq!(arrow::util::pretty::pretty_format_batches(&batches)?.to_string().lines().nth(3), Some("| 50 |"));
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Column layout
//!
//! Every topic becomes `log_time` (timestamp, nanoseconds, UTC), `publish_time` (the same,
//! null when the format has none: bags, BDDF) and one column per top-level field of the
//! message, in definition order. Values follow robolog's decoded-value rules:
//!
//! | definition | Arrow |
//! |---|---|
//! | `bool`, `int8`…`int64`, `uint8`…`uint64`, `float32`, `float64` | the same type (ROS 1 `byte` is int8 and `char` uint8, as on the wire) |
//! | `string` (and ROS 2 `wstring`, bounded strings) | UTF-8; bytes that are not UTF-8 become U+FFFD, as in robolog's JSON |
//! | nested message | struct |
//! | `T[]` (and ROS 2 bounded sequences) | list of `T` |
//! | `T[N]` | fixed-size list of N `T` |
//! | `uint8[]`, `byte[]`, `char[]` | binary; `uint8[N]` (and `byte[N]`, `char[N]`) fixed-size binary |
//! | ROS 1 `time` / `duration` | struct `{sec: uint32, nsec: uint32}` / `{sec: int32, nsec: int32}` |
//! | ROS 2 `builtin_interfaces/Time`, `Duration` | the messages they are: `{sec: int32, nanosec: uint32}` |
//! | a message with no field (`std_msgs/Empty`) | left out (Parquet cannot store an empty group) |
//!
//! JSON channels take their columns from a JSON Schema (see the `json` rules on
//! [`TopicLayout`]'s encodings below), protobuf channels from the descriptor set in their
//! schema, BDDF POD series become a `samples` list per block. Everything else (no schema, an
//! unknown encoding, BDDF protobuf series, which carry no descriptors) cannot become columns:
//! [`TopicLayout::new`] says why, naming the topic, and [`TopicLayout::raw`] keeps the bytes in
//! a `data` column.
//!
//! - **JSON Schema**: an object with `properties` at the top; each property a nullable column
//!   in schema order: `integer` int64, `number` float64, `boolean`, `string` (binary when
//!   `contentEncoding` is `base64`), objects with properties as structs, arrays with `items` as
//!   lists; a type list with `"null"` is the other type; anything else (no type, `oneOf`,
//!   tuples, free-form objects) is kept as JSON text. Local `$ref`s are followed. A message that
//!   does not match its schema is an error naming the field.
//! - **protobuf**: fields in declaration order, integer kinds as the Arrow type of the same
//!   width and sign, enums as int32 numbers, `bytes` binary, messages structs, `repeated` lists,
//!   `map` maps (keys sorted). Fields with presence are null when absent, others hold their
//!   default; recursive types are refused.
//!
//! # Projection
//!
//! [`TopicLayout::batch_builder`] takes the columns to build. Unselected fields are not
//! turned into arrays at all; for ROS 1 messages, a projection of at most a few leaves
//! (primitives, strings, times, primitive arrays) is read field by field straight from the
//! message bytes ([`robolog::ros1::Projection`]), skipping the rest, and a projection of no
//! field decodes nothing.
//!
//! # Export and SQL
//!
//! [`TopicBatches`] reads one topic of a log as record batches with the export's layout;
//! [`export`] writes one file per topic (Parquet or Arrow IPC, see [`ExportOptions`]);
//! [`LogTables`] registers DataFusion tables (see the [`sql`] module). SQL needs the cargo
//! feature `sql` (on by default), which brings DataFusion; without it the crate builds batches
//! and writes files only.

#![forbid(unsafe_code)]

mod batches;
mod cdr;
mod codec;
mod column;
mod error;
mod export;
mod json;
mod json_lines;
mod layout;
mod pod;
mod protobuf;
mod ros;
#[cfg(feature = "sql")]
pub mod sql;

pub use batches::{TopicBatches, TopicOptions};
pub use error::{Error, Result};
pub use export::{
    ExportFormat, ExportOptions, ExportProgress, ExportReport, ExportedFile, export,
    topic_file_stem,
};
pub use json_lines::write_json_lines;
pub use layout::{
    BatchBuilder, META_MESSAGE_ENCODING, META_SCHEMA, META_SCHEMA_BASE64, META_SCHEMA_ENCODING,
    META_SCHEMA_NAME, META_TOPIC, TopicLayout, time_type,
};
#[cfg(feature = "sql")]
pub use sql::{LogTables, MessagesTable, TopicTable};

/// The DataFusion version this crate is built with.
#[cfg(feature = "sql")]
pub use datafusion;
/// The Arrow and Parquet versions this crate is built with.
pub use {arrow, parquet};
