//! Well-known encoding names and metadata keys, and the `bddf-pod` message encoding.
//!
//! # The `bddf-pod` message encoding
//!
//! BDDF *POD series* hold plain numbers rather than messages. When such a series becomes a
//! channel (reading a BDDF file through the facade, or converting BDDF to MCAP), each data block
//! becomes one message with `message_encoding` **`bddf-pod`**:
//!
//! - **data**: the block's payload unchanged: one or more *samples*, packed back to back, each
//!   sample `product(dimensions)` elements in row-major order, each element little-endian of
//!   the element type (`int8` … `int64`, `uint8` … `uint64`: two's complement / unsigned
//!   integers of 1, 2, 4 or 8 bytes; `float32`, `float64`: IEEE 754). No header, no padding.
//!   The number of samples is `data.len() / (element size × product(dimensions))`.
//! - **log time**: the block timestamp, which is the time of its *first* sample (BDDF stores no
//!   per-sample times).
//! - **schema**: name = element type and dimensions, `float64` for scalars, `float32[3]` for
//!   3-vectors, `int16[2,3]` for 2×3 matrices; encoding `bddf-pod`; data empty.
//! - **channel metadata**: [`BDDF_POD_TYPE`] (the element type name, as in the schema name) and
//!   [`BDDF_DIMENSIONS`] (comma-separated, empty for scalars), plus the series keys below.
//!
//! Converting a `bddf-pod` channel back to BDDF writes one data block per message, so block
//! boundaries and timestamps survive a BDDF → MCAP → BDDF round trip.
//!
//! # BDDF series as channels
//!
//! A series' identifier is rendered as the topic `type:k=v,k=v` (spec keys in sorted order), and
//! everything that names or describes the series is kept in channel metadata so that it can be
//! written back: [`BDDF_SERIES_TYPE`], one [`BDDF_SPEC_PREFIX`]`<key>` per spec entry, one
//! [`BDDF_ANNOTATION_PREFIX`]`<key>` per series annotation, [`BDDF_INDEX_NAMES`] (a JSON array,
//! present when the series declares additional indexes), [`BDDF_DESCRIPTION`], and for message
//! series [`BDDF_CONTENT_TYPE`], [`BDDF_TYPE_NAME`] and [`BDDF_IS_METADATA`].
//!
//! Channels written *to* BDDF from other formats become message series named
//! `bosdyn:channel` / `{bosdyn:channel: <topic>}` (plus `robolog:channel-id: <id>` when two
//! channels share a topic). Their topic, message encoding, schema and metadata are kept in
//! series annotations under [`ROBOLOG_PREFIX`] (`robolog:topic`, `robolog:message-encoding`,
//! `robolog:schema-name`, `robolog:schema-encoding`, `robolog:schema` or
//! `robolog:schema-base64`, `robolog:metadata:<key>`), and publish times and sequence numbers in
//! the additional indexes [`ROBOLOG_PUBLISH_TIME`] and [`ROBOLOG_SEQUENCE`], so that reading the
//! file back through the facade restores the original channels exactly.

/// ROS 1 serialized messages.
pub const ROS1: &str = "ros1";
/// ROS 1 message definitions (the full text with dependencies, as bags store it).
pub const ROS1MSG: &str = "ros1msg";
/// JSON messages.
pub const JSON: &str = "json";
/// Protobuf messages.
pub const PROTOBUF: &str = "protobuf";
/// ROS 2 CDR messages.
pub const CDR: &str = "cdr";
/// ROS 2 message definitions as `.msg` texts (the root, then `MSG:`/`SRV:`/`IDL:` sections).
pub const ROS2MSG: &str = "ros2msg";
/// ROS 2 message definitions as the IDL rosidl generates (`IDL:` sections).
pub const ROS2IDL: &str = "ros2idl";
/// Channel metadata: the RIHS01 type hash rosbag2 records for a ROS 2 topic.
pub const TOPIC_TYPE_HASH: &str = "topic_type_hash";
/// BDDF POD samples (see the module documentation).
pub const BDDF_POD: &str = "bddf-pod";
/// BDDF struct series (groups of other series; they carry no data blocks).
pub const BDDF_STRUCT: &str = "bddf-struct";

/// The MIME type BDDF uses for protobuf content.
pub const BDDF_PROTOBUF_CONTENT: &str = "application/protobuf";
/// The MIME type for JSON content.
pub const BDDF_JSON_CONTENT: &str = "application/json";

/// Channel metadata: the md5sum of a ROS 1 type.
pub const MD5SUM: &str = "md5sum";
/// Channel metadata: the publishing node of a ROS 1 connection.
pub const CALLERID: &str = "callerid";
/// Channel metadata: whether a ROS 1 publisher was latching (`0`/`1` from bags).
pub const LATCHING: &str = "latching";

/// The [`crate::Metadata`] name under which BDDF file annotations appear.
pub const BDDF_ANNOTATIONS: &str = "bddf:annotations";
/// Channel metadata: a BDDF series' identifier type.
pub const BDDF_SERIES_TYPE: &str = "bddf:series_type";
/// Channel metadata prefix: one key per entry of a BDDF series' spec.
pub const BDDF_SPEC_PREFIX: &str = "bddf:spec:";
/// Channel metadata prefix: one key per BDDF series annotation.
pub const BDDF_ANNOTATION_PREFIX: &str = "bddf:annotation:";
/// Channel metadata: the names of a BDDF series' additional indexes, as a JSON array.
pub const BDDF_INDEX_NAMES: &str = "bddf:additional_index_names";
/// Channel metadata: a BDDF series' description.
pub const BDDF_DESCRIPTION: &str = "bddf:description";
/// Channel metadata: a BDDF message series' content type.
pub const BDDF_CONTENT_TYPE: &str = "bddf:content_type";
/// Channel metadata: a BDDF message series' type name.
pub const BDDF_TYPE_NAME: &str = "bddf:type_name";
/// Channel metadata: `true` for BDDF message series flagged as metadata.
pub const BDDF_IS_METADATA: &str = "bddf:is_metadata";
/// Channel metadata: a BDDF POD series' element type (`float32`, …).
pub const BDDF_POD_TYPE: &str = "bddf:pod_type";
/// Channel metadata: a BDDF POD series' sample dimensions, comma-separated.
pub const BDDF_DIMENSIONS: &str = "bddf:dimensions";

/// Prefix of the BDDF series annotations robolog writes to restore channels.
pub const ROBOLOG_PREFIX: &str = "robolog:";
/// BDDF additional index holding MCAP publish times.
pub const ROBOLOG_PUBLISH_TIME: &str = "robolog:publish_time_ns";
/// BDDF additional index holding MCAP sequence numbers.
pub const ROBOLOG_SEQUENCE: &str = "robolog:sequence";
