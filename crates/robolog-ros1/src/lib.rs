//! The ROS 1 wire format without generated code: compile a parsed message definition (from
//! `robolog-msg`) into a [`Plan`] once, then decode message bytes into a zero-copy value
//! [`Tree`], look fields up by path, extract chosen fields without decoding the rest
//! ([`Projection`]), encode values back byte-exactly, and render messages as JSON.
//!
//! ```
//! use robolog_ros1::{Plan, Value};
//!
//! // The `message_definition` a bag stores for the connection, and one message.
//! let definition = "\
//! Header header
//! float32[] ranges
//! ================================================================================
//! MSG: std_msgs/Header
//! uint32 seq
//! time stamp
//! string frame_id
//! ";
//! let plan = Plan::from_bundle("my_pkg/Scan", definition)?;
//! let message = [
//!     7, 0, 0, 0, 0x00, 0xf1, 0x53, 0x65, 5, 0, 0, 0, // seq, stamp
//!     5, 0, 0, 0, b'l', b'a', b's', b'e', b'r',       // frame_id
//!     2, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0,    // ranges = [1.5, -2.0]
//! ];
//!
//! let decoded = plan.decode(&message)?;
//! assert_eq!(decoded.get("header.stamp.secs")?, Value::UInt32(1_700_000_000));
//! assert_eq!(decoded.get("header.frame_id")?.as_str(), Some("laser"));
//! assert_eq!(decoded.get("ranges[1]")?, Value::Float32(-2.0));
//! // Arrays of primitives are slices of `message`, read through typed accessors.
//! let ranges = decoded.get("ranges")?.as_array().unwrap();
//! assert_eq!(ranges.iter_as::<f32>().unwrap().collect::<Vec<_>>(), [1.5, -2.0]);
//!
//! // Encoding gives back the same bytes.
//! assert_eq!(decoded.encode()?, message);
//!
//! // One field from many messages, without building trees.
//! let stamps = plan.projection(&["header.stamp.secs"])?;
//! assert_eq!(stamps.extract(&message)?, [Some(Value::UInt32(1_700_000_000))]);
//!
//! # #[cfg(feature = "serde")]
//! assert_eq!(
//!     decoded.to_json(),
//!     r#"{"header":{"seq":7,"stamp":{"sec":1700000000,"nsec":5},"frame_id":"laser"},"ranges":[1.5,-2.0]}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Wire rules
//!
//! Little-endian, no padding, fields in definition order, nested messages inline; `string` and
//! `T[]` carry a `u32` length/count, `T[N]` none; `byte` decodes as `i8` ([`Value::Int8`]) and
//! `char` as `u8` ([`Value::UInt8`]); `time` is `u32 secs, u32 nsecs` and `duration`
//! `i32 secs, i32 nsecs`.
//!
//! # Errors and hostile input
//!
//! A message that ends too early fails with [`Error::Truncated`] naming the innermost field and
//! its offset; a count or length larger than the remaining bytes fails with
//! [`Error::LengthPastEnd`] before anything is allocated from it. Bytes after the message are
//! reported by [`Decoded::trailing_bytes`], and rejected by [`Plan::decode_strict`]. Plans
//! refuse nesting deeper than [`MAX_NESTING`], arrays of empty messages (which take no bytes)
//! are capped at [`MAX_EMPTY_NODES`] values per message, and no message decodes to more than
//! [`MAX_VALUES_PER_BYTE`] values per byte (plus that cap), whatever its definition.
//!
//! # JSON
//!
//! With the `serde` feature (on by default), [`Decoded::to_json`] renders a message with these
//! rules: fields in definition order; `time`/`duration` as `{"sec":…,"nsec":…}`;
//! `uint8[]`/`char[]` (fixed or variable) as base64 strings; NaN and ±infinity as the strings
//! `"NaN"`, `"Infinity"`, `"-Infinity"`; 64-bit integers as exact JSON numbers; invalid UTF-8 in
//! strings replaced by U+FFFD. [`Decoded`] and [`MessageRef`] implement `serde::Serialize`.

#![forbid(unsafe_code)]

mod decode;
mod decoded;
mod encode;
mod error;
#[cfg(feature = "serde")]
mod json;
mod path;
mod plan;
mod projection;
mod value;

pub use decode::{MAX_EMPTY_NODES, MAX_VALUES_PER_BYTE};
pub use decoded::{Decoded, FieldRef, MessageRef};
pub use error::{Error, FieldPath, PathStep};
pub use path::ResolvedPath;
pub use plan::{MAX_NESTING, Plan};
pub use projection::Projection;
pub use value::{
    Duration, Element, PrimitiveArray, PrimitiveKind, Span, Time, Tree, Value, le_bytes,
};

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
