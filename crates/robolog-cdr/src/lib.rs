//! The ROS 2 wire format (CDR, as every ROS 2 middleware writes it) without generated code:
//! compile a parsed message definition (from `robolog-msg`) into a [`Plan`] once, then decode
//! message bytes into a zero-copy value [`Tree`], look fields up by path, extract chosen fields
//! without decoding the rest ([`Projection`]), encode values back byte-exactly, and render
//! messages as JSON. The shape is robolog-ros1's, so code written for one reads like the other.
//!
//! ```
//! use robolog_cdr::{Plan, Value};
//!
//! // A `ros2msg` schema as rosbag2 stores it, and one message.
//! let definition = "\
//! std_msgs/Header header
//! float64[] ranges
//! ================================================================================
//! MSG: std_msgs/Header
//! builtin_interfaces/Time stamp
//! string frame_id
//! ";
//! let plan = Plan::from_bundle("my_pkg/msg/Scan", definition)?;
//! let message = [
//!     0x00, 0x01, 0x00, 0x00,                                 // CDR_LE header
//!     0x00, 0xf1, 0x53, 0x65, 5, 0, 0, 0,                     // stamp
//!     6, 0, 0, 0, b'l', b'a', b's', b'e', b'r', 0, 0, 0,      // frame_id, padding
//!     2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0, // ranges
//! ];
//!
//! let decoded = plan.decode(&message)?;
//! assert_eq!(decoded.get("header.stamp.sec")?, Value::Int32(1_700_000_000));
//! assert_eq!(decoded.get("header.frame_id")?.as_str(), Some("laser"));
//! assert_eq!(decoded.get("ranges[1]")?, Value::Float64(-2.0));
//! // Arrays of primitives are slices of `message`, read through typed accessors.
//! let ranges = decoded.get("ranges")?.as_array().unwrap();
//! assert_eq!(ranges.iter_as::<f64>().unwrap().collect::<Vec<_>>(), [1.5, -2.0]);
//!
//! // Encoding gives back the same bytes.
//! assert_eq!(decoded.encode()?, message);
//!
//! // One field from many messages, without building trees.
//! let stamps = plan.projection(&["header.stamp.sec"])?;
//! assert_eq!(stamps.extract(&message)?, [Some(Value::Int32(1_700_000_000))]);
//!
//! # #[cfg(feature = "serde")]
//! assert_eq!(
//!     decoded.to_json(),
//!     r#"{"header":{"stamp":{"sec":1700000000,"nanosec":5},"frame_id":"laser"},"ranges":[1.5,-2.0]}"#
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Wire rules
//!
//! A message is a 4-byte encapsulation header ([`Encapsulation`]: `00 01` little endian or
//! `00 00` big endian XCDR1, `00 07`/`00 06` PLAIN_CDR2; any other kind is refused with
//! [`Error::UnsupportedEncapsulation`]), then the fields in definition order, nested messages
//! inline. Every primitive aligns to its size (8-byte values to 4 in XCDR2), counted from the
//! byte after the header; padding is ignored when read and written as zeros. `string` is a
//! `u32` length that counts a terminating NUL, then the bytes and the NUL (length 0 reads as
//! the empty string); `wstring` is a `u32` count of UTF-16 code units, then 4 bytes per unit
//! (the layout of the ROS 2 middlewares on Linux). `T[N]` has no count, `T[]` and `T[<=N]` a
//! `u32` count, and an empty sequence has no padding after its count. `byte` and `char` are
//! `u8`; `builtin_interfaces/Time` and `Duration` (and `time`/`duration`) are ordinary
//! messages of `int32 sec, uint32 nanosec`. A message without fields takes one byte.
//!
//! # Errors and hostile input
//!
//! A message that ends too early fails with [`Error::Truncated`] naming the innermost field and
//! its offset (from the first byte of the message, header included); a count or length larger
//! than the remaining bytes fails with [`Error::LengthPastEnd`] before anything is allocated
//! from it. Up to 3 bytes after the message are padding some writers add; more are reported by
//! [`Decoded::trailing_bytes`]. What real writers get slightly wrong without losing anything
//! (a `bool` byte of 2, a string without its NUL, a bounded sequence over its bound) decodes,
//! and [`Decoded::warning`] names it; [`Plan::decode_strict`] rejects all of it. Plans refuse
//! nesting deeper than [`MAX_NESTING`], and no message decodes to more than
//! [`MAX_VALUES_PER_BYTE`] values per byte (plus [`VALUE_ALLOWANCE`]), whatever its definition.
//!
//! # JSON
//!
//! With the `serde` feature (on by default), [`Decoded::to_json`] renders a message with the
//! rules robolog uses for every encoding: fields in definition order; `builtin_interfaces`
//! times as `{"sec":…,"nanosec":…}`; arrays and sequences of `uint8`, `byte` and `char` as
//! base64 strings; NaN and ±infinity as the strings `"NaN"`, `"Infinity"`, `"-Infinity"`;
//! 64-bit integers as exact JSON numbers; invalid UTF-8 in strings replaced by U+FFFD.
//! [`Decoded`] and [`MessageRef`] implement `serde::Serialize`.

#![forbid(unsafe_code)]

mod decode;
mod decoded;
mod encode;
mod error;
mod header;
#[cfg(feature = "serde")]
mod json;
mod path;
mod plan;
mod projection;
mod value;

pub use decode::{Decoding, MAX_VALUES_PER_BYTE, VALUE_ALLOWANCE};
pub use decoded::{Decoded, FieldRef, MessageRef};
pub use error::{Error, FieldPath, PathStep};
pub use header::{Encapsulation, HEADER_LEN};
pub use path::ResolvedPath;
pub use plan::{MAX_NESTING, Plan};
pub use projection::Projection;
pub use value::{
    ByteOrder, Element, PrimitiveArray, PrimitiveKind, Span, Tree, Value, WideString, le_bytes,
    wstring_bytes,
};

// The README's examples run as doctests, so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
