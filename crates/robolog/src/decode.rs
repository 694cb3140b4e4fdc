//! Decoding messages through the facade: ROS 1 messages into the `robolog-ros1` value tree,
//! ROS 2 (CDR) messages into the `robolog-cdr` one, both rendered as JSON with the same rules;
//! JSON messages passed through; everything else reported as not decodable with the reason.

use std::collections::HashMap;
#[cfg(any(feature = "ros1", feature = "cdr"))]
use std::sync::Arc;

use crate::encodings::{BDDF_POD, CDR, JSON, PROTOBUF, ROS1, ROS1MSG};
#[cfg(feature = "cdr")]
use crate::encodings::{ROS2IDL, ROS2MSG, TOPIC_TYPE_HASH};
#[cfg(any(feature = "ros1", feature = "cdr"))]
use crate::model::Schema;
use crate::model::{Channel, Message};

/// Why a message could not be decoded.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The channel's encoding (or its schema) is one robolog cannot decode.
    #[error("{topic}: messages encoded as {encoding:?} cannot be decoded: {reason}")]
    NotDecodable {
        /// The channel's topic.
        topic: String,
        /// The message encoding.
        encoding: String,
        /// Why.
        reason: String,
    },
    /// The channel's definition could not be compiled.
    #[error("{topic}: the definition of {type_name} cannot be used: {reason}")]
    Schema {
        /// The channel's topic.
        topic: String,
        /// The message type.
        type_name: String,
        /// What went wrong.
        reason: String,
    },
    /// The message bytes do not match the channel's definition.
    #[error("{topic}: the message at log time {log_time_ns} is not a valid {type_name}: {reason}")]
    Message {
        /// The channel's topic.
        topic: String,
        /// The message type.
        type_name: String,
        /// The message's log time.
        log_time_ns: u64,
        /// What went wrong (with the field path and message-relative offset).
        reason: String,
        /// True when the message ends too early (as opposed to holding wrong values).
        truncated: bool,
        /// Where in the message's data (from its first byte) the failing read began, when the
        /// decoder knows.
        offset: Option<u64>,
    },
    /// A JSON message is not valid JSON.
    #[error("{topic}: the message at log time {log_time_ns} is not valid JSON: {reason}")]
    Json {
        /// The channel's topic.
        topic: String,
        /// The message's log time.
        log_time_ns: u64,
        /// What serde_json reported.
        reason: String,
    },
}

/// A decoded message.
#[derive(Debug)]
#[non_exhaustive]
pub enum Decoded<'a> {
    /// A ROS 1 message as a value tree.
    #[cfg(feature = "ros1")]
    Ros1(Ros1Message<'a>),
    /// A ROS 2 (CDR) message as a value tree.
    #[cfg(feature = "cdr")]
    Cdr(CdrMessage<'a>),
    /// A JSON message, validated and passed through as it is.
    Json(&'a str),
}

impl Decoded<'_> {
    /// The message as JSON text. ROS 1 and ROS 2 messages follow the same rules (fields in
    /// definition order, ROS 1 times as `{"sec","nsec"}` and ROS 2 `builtin_interfaces` times
    /// as the messages they are, `{"sec","nanosec"}`, octet arrays as base64, non-finite floats
    /// as strings, 64-bit integers exact); JSON messages come out exactly as stored.
    pub fn to_json(&self) -> String {
        match self {
            #[cfg(feature = "ros1")]
            Decoded::Ros1(m) => m.root().to_json(),
            #[cfg(feature = "cdr")]
            Decoded::Cdr(m) => m.root().to_json(),
            Decoded::Json(text) => (*text).to_owned(),
        }
    }

    /// What the message holds that a strict reader would refuse, when decoding tolerated
    /// something: bytes after the end of a ROS 1 message; for a ROS 2 message more than 3 bytes
    /// after it, a `bool` byte other than 0 or 1, a string without its NUL, a bounded sequence
    /// over its bound (with the field and offset). Usually a sign that the definition does not
    /// match the data. `None` for a regular message.
    pub fn warning(&self) -> Option<String> {
        match self {
            #[cfg(feature = "ros1")]
            Decoded::Ros1(m) => (m.trailing_bytes() > 0)
                .then(|| format!("{} bytes follow the end of the message", m.trailing_bytes())),
            #[cfg(feature = "cdr")]
            Decoded::Cdr(m) => m.warning().map(|e| e.to_string()),
            Decoded::Json(_) => None,
        }
    }

    /// Writes [`Decoded::to_json`] to `writer`.
    pub fn write_json(&self, mut writer: impl std::io::Write) -> std::io::Result<()> {
        match self {
            Decoded::Json(text) => writer.write_all(text.as_bytes()),
            #[cfg(any(feature = "ros1", feature = "cdr"))]
            _ => {
                let mut out = Vec::new();
                self.append_json(&mut out);
                writer.write_all(&out)
            }
        }
    }

    /// Appends [`Decoded::to_json`] to `out`, for a caller that renders many messages into one
    /// reused buffer.
    pub fn append_json(&self, out: &mut Vec<u8>) {
        match self {
            #[cfg(feature = "ros1")]
            Decoded::Ros1(m) => m.root().append_json(out),
            #[cfg(feature = "cdr")]
            Decoded::Cdr(m) => m.root().append_json(out),
            Decoded::Json(text) => out.extend_from_slice(text.as_bytes()),
        }
    }
}

/// A ROS 1 message decoded into a value tree that borrows strings and arrays from the
/// message's bytes.
#[cfg(feature = "ros1")]
#[derive(Debug)]
pub struct Ros1Message<'a> {
    plan: Arc<robolog_ros1::Plan>,
    tree: robolog_ros1::Tree<'a>,
    trailing: usize,
}

#[cfg(feature = "ros1")]
impl<'a> Ros1Message<'a> {
    /// The top-level message with its fields.
    pub fn root(&self) -> robolog_ros1::MessageRef<'_, 'a> {
        self.plan.view(&self.tree)
    }

    /// The value at `path` (`header.stamp.secs`, `ranges[3]`).
    pub fn get(&self, path: &str) -> Result<robolog_ros1::Value<'a>, robolog_ros1::Error> {
        self.root().get(path)
    }

    /// The compiled definition.
    pub fn plan(&self) -> &robolog_ros1::Plan {
        &self.plan
    }

    /// The value tree.
    pub fn tree(&self) -> &robolog_ros1::Tree<'a> {
        &self.tree
    }

    /// Bytes after the end of the message (0 for a well-formed message; real recorders
    /// sometimes leave some, which decoding tolerates).
    pub fn trailing_bytes(&self) -> usize {
        self.trailing
    }
}

/// A ROS 2 (CDR) message decoded into a value tree that borrows strings and arrays from the
/// message's bytes.
#[cfg(feature = "cdr")]
#[derive(Debug)]
pub struct CdrMessage<'a> {
    plan: Arc<robolog_cdr::Plan>,
    tree: robolog_cdr::Tree<'a>,
    data: &'a [u8],
    decoding: robolog_cdr::Decoding,
}

#[cfg(feature = "cdr")]
impl<'a> CdrMessage<'a> {
    /// The top-level message with its fields.
    pub fn root(&self) -> robolog_cdr::MessageRef<'_, 'a> {
        self.plan.view(&self.tree)
    }

    /// The value at `path` (`header.stamp.sec`, `ranges[3]`).
    pub fn get(&self, path: &str) -> Result<robolog_cdr::Value<'a>, robolog_cdr::Error> {
        self.root().get(path)
    }

    /// The compiled definition.
    pub fn plan(&self) -> &robolog_cdr::Plan {
        &self.plan
    }

    /// The value tree.
    pub fn tree(&self) -> &robolog_cdr::Tree<'a> {
        &self.tree
    }

    /// The message's encapsulation, end and trailing bytes (0 to 3 bytes of padding after a
    /// message are normal and not counted).
    pub fn decoding(&self) -> robolog_cdr::Decoding {
        self.decoding
    }

    /// What strict decoding would refuse in the message (a `bool` byte of 2, a string without
    /// its NUL, a bounded sequence over its bound, trailing bytes), or `None`.
    pub fn warning(&self) -> Option<robolog_cdr::Error> {
        if self.decoding.is_regular() {
            return None;
        }
        self.plan.decode_strict(self.data).err()
    }
}

/// A compiled plan, or why the definition cannot be compiled (kept so that a bad definition
/// fails once, not once per message).
#[cfg(any(feature = "ros1", feature = "cdr"))]
type Compiled<P> = Result<Arc<P>, String>;

/// Plans compiled once per schema: by the schema's address (a lookup per message costs a hash
/// of a pointer), and by content, so that channels of different files that share a type and
/// definition share a plan.
#[cfg(any(feature = "ros1", feature = "cdr"))]
#[derive(Debug)]
struct PlanCache<P> {
    by_schema: HashMap<usize, (Arc<Schema>, Compiled<P>)>,
    by_content: HashMap<(String, String, robolog_framing::Bytes), Compiled<P>>,
}

#[cfg(any(feature = "ros1", feature = "cdr"))]
impl<P> Default for PlanCache<P> {
    fn default() -> Self {
        PlanCache {
            by_schema: HashMap::new(),
            by_content: HashMap::new(),
        }
    }
}

#[cfg(any(feature = "ros1", feature = "cdr"))]
impl<P> PlanCache<P> {
    /// The plan of `schema`, compiled by `compile` the first time its content is seen.
    fn get(
        &mut self,
        schema: &Arc<Schema>,
        compile: impl FnOnce(&Schema) -> Compiled<P>,
    ) -> Compiled<P> {
        let key = Arc::as_ptr(schema) as usize;
        if let Some((_, compiled)) = self.by_schema.get(&key) {
            return compiled.clone();
        }
        let content = (
            schema.name.clone(),
            schema.encoding.clone(),
            schema.data.clone(),
        );
        let compiled = self
            .by_content
            .entry(content)
            .or_insert_with(|| compile(schema))
            .clone();
        // Holding the Arc keeps the address from being reused by another schema.
        self.by_schema
            .insert(key, (Arc::clone(schema), compiled.clone()));
        compiled
    }
}

/// Decodes messages, compiling each definition once.
///
/// Compiled plans are cached by (schema name, encoding, data): channels of different files that
/// share a type and definition share a plan, and a definition that fails to compile fails
/// once, not once per message. A per-schema fast path avoids hashing the definition for each
/// message.
///
/// ROS 2 channels (`cdr`) take their definition from a `ros2msg` or `ros2idl` schema, completed
/// from the bundled standard interfaces when it lacks a dependency. A channel recorded without
/// a definition (schema encoding `""` or `unknown`, as rosbag2 writes for types it could not
/// find, actions among them) is decoded with the standard definition of its type, from the
/// newest bundled distro whose RIHS01 hash equals the channel's `topic_type_hash` (the newest
/// that has the type when there is no hash or none matches).
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use robolog::{Bytes, Channel, Decoder, Message, Schema};
///
/// let schema = Schema {
///     id: 1,
///     name: "std_msgs/String".into(),
///     encoding: "ros1msg".into(),
///     data: Bytes::from_static(b"string data\n"),
/// };
/// let channel = Arc::new(Channel {
///     id: 0,
///     topic: "/chatter".into(),
///     message_encoding: "ros1".into(),
///     schema: Some(Arc::new(schema)),
///     metadata: BTreeMap::new(),
/// });
/// let message = Message {
///     channel,
///     log_time_ns: 1,
///     publish_time_ns: None,
///     sequence: None,
///     data: Bytes::from_static(b"\x05\0\0\0hello"),
/// };
/// let mut decoder = Decoder::new();
/// assert_eq!(decoder.decode(&message)?.to_json(), r#"{"data":"hello"}"#);
///
/// // The same message from ROS 2, recorded without a schema: the bundled definition is used.
/// let schema = Schema {
///     id: 2,
///     name: "std_msgs/msg/String".into(),
///     encoding: "".into(),
///     data: Bytes::new(),
/// };
/// let channel = Arc::new(Channel {
///     id: 1,
///     topic: "/chatter".into(),
///     message_encoding: "cdr".into(),
///     schema: Some(Arc::new(schema)),
///     metadata: BTreeMap::new(),
/// });
/// let message = Message {
///     channel,
///     log_time_ns: 1,
///     publish_time_ns: None,
///     sequence: None,
///     data: Bytes::from_static(b"\0\x01\0\0\x06\0\0\0hello\0"),
/// };
/// assert_eq!(decoder.decode(&message)?.to_json(), r#"{"data":"hello"}"#);
/// # Ok::<(), robolog::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Decoder {
    #[cfg(feature = "ros1")]
    ros1: PlanCache<robolog_ros1::Plan>,
    #[cfg(feature = "cdr")]
    cdr: PlanCache<robolog_cdr::Plan>,
    #[cfg(not(any(feature = "ros1", feature = "cdr")))]
    _none: HashMap<(), ()>,
}

impl Decoder {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether messages of `channel` can be decoded (`Ok`), or why not; compiles and caches
    /// the channel's definition.
    pub fn check_channel(&mut self, channel: &Channel) -> Result<(), DecodeError> {
        match channel.message_encoding.as_str() {
            JSON => Ok(()),
            ROS1 => self.ros1_plan(channel).map(|_| ()),
            CDR => self.cdr_plan(channel).map(|_| ()),
            _ => Err(not_decodable(channel)),
        }
    }

    /// Decodes one message.
    pub fn decode<'a>(&mut self, message: &'a Message) -> Result<Decoded<'a>, DecodeError> {
        let channel = &message.channel;
        #[cfg(any(feature = "ros1", feature = "cdr"))]
        let invalid =
            |reason: String, truncated: bool, offset: Option<usize>| DecodeError::Message {
                topic: channel.topic.clone(),
                type_name: channel.type_name().to_owned(),
                log_time_ns: message.log_time_ns,
                truncated,
                offset: offset.map(|o| o as u64),
                reason,
            };
        match channel.message_encoding.as_str() {
            JSON => {
                let text = std::str::from_utf8(&message.data).map_err(|e| DecodeError::Json {
                    topic: channel.topic.clone(),
                    log_time_ns: message.log_time_ns,
                    reason: e.to_string(),
                })?;
                serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| {
                    DecodeError::Json {
                        topic: channel.topic.clone(),
                        log_time_ns: message.log_time_ns,
                        reason: e.to_string(),
                    }
                })?;
                Ok(Decoded::Json(text))
            }
            #[cfg(feature = "ros1")]
            ROS1 => {
                let plan = self.ros1_plan(channel)?;
                let decoded = plan
                    .decode(&message.data)
                    .map_err(|e| invalid(e.to_string(), e.is_truncation(), e.offset()))?;
                let trailing = decoded.trailing_bytes();
                let tree = decoded.into_tree();
                Ok(Decoded::Ros1(Ros1Message {
                    plan,
                    tree,
                    trailing,
                }))
            }
            #[cfg(feature = "cdr")]
            CDR => {
                let plan = self.cdr_plan(channel)?;
                let mut tree = robolog_cdr::Tree::new();
                let decoding = plan
                    .decode_into(&message.data, &mut tree)
                    .map_err(|e| invalid(e.to_string(), e.is_truncation(), e.offset()))?;
                Ok(Decoded::Cdr(CdrMessage {
                    plan,
                    tree,
                    data: &message.data,
                    decoding,
                }))
            }
            _ => Err(not_decodable(channel)),
        }
    }

    /// The compiled plan of a `ros1` channel.
    #[cfg(feature = "ros1")]
    pub fn ros1_plan(&mut self, channel: &Channel) -> Result<Arc<robolog_ros1::Plan>, DecodeError> {
        let schema = match &channel.schema {
            Some(schema) if schema.encoding == ROS1MSG => schema,
            _ => return Err(not_decodable(channel)),
        };
        self.ros1
            .get(schema, compile_ros1)
            .map_err(|reason| schema_error(channel, schema, reason))
    }

    #[cfg(not(feature = "ros1"))]
    fn ros1_plan(&mut self, channel: &Channel) -> Result<(), DecodeError> {
        Err(not_decodable(channel))
    }

    /// The compiled plan of a `cdr` channel: from its `ros2msg` or `ros2idl` schema, or from the
    /// bundled standard interfaces (see [`Decoder`]).
    #[cfg(feature = "cdr")]
    pub fn cdr_plan(&mut self, channel: &Channel) -> Result<Arc<robolog_cdr::Plan>, DecodeError> {
        let Some(schema) = &channel.schema else {
            return Err(not_decodable(channel));
        };
        if !matches!(schema.encoding.as_str(), ROS2MSG | ROS2IDL | "" | "unknown") {
            return Err(not_decodable(channel));
        }
        let hash = channel.metadata.get(TOPIC_TYPE_HASH).map(String::as_str);
        self.cdr
            .get(schema, |schema| compile_cdr(schema, hash))
            .map_err(|reason| schema_error(channel, schema, reason))
    }

    #[cfg(not(feature = "cdr"))]
    fn cdr_plan(&mut self, channel: &Channel) -> Result<(), DecodeError> {
        Err(not_decodable(channel))
    }
}

#[cfg(any(feature = "ros1", feature = "cdr"))]
fn schema_error(channel: &Channel, schema: &Schema, reason: String) -> DecodeError {
    DecodeError::Schema {
        topic: channel.topic.clone(),
        type_name: schema.name.clone(),
        reason,
    }
}

#[cfg(feature = "ros1")]
fn compile_ros1(schema: &Schema) -> Compiled<robolog_ros1::Plan> {
    let text = std::str::from_utf8(&schema.data)
        .map_err(|e| format!("the definition is not UTF-8 text: {e}"))?;
    robolog_ros1::Plan::from_bundle(&schema.name, text)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// A ROS 2 plan from the schema, completed from (or, without a schema, taken from) the bundled
/// standard interfaces.
#[cfg(feature = "cdr")]
fn compile_cdr(schema: &Schema, hash: Option<&str>) -> Compiled<robolog_cdr::Plan> {
    let (registry, name) = cdr_registry(schema, hash)?;
    robolog_cdr::Plan::compile(&registry, &name)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// The definitions a `cdr` channel's messages are decoded with (see [`Decoder`]): a registry
/// holding the channel's type and every type it uses, and the type's name. For tools that
/// derive something else from the definition (columns, say) and must agree with the decoder.
///
/// ```
/// use std::collections::BTreeMap;
/// use std::sync::Arc;
/// use robolog::{Bytes, Channel, Schema};
///
/// // Recorded without a definition: the bundled standard one.
/// let channel = Channel {
///     id: 1,
///     topic: "/chatter".into(),
///     message_encoding: "cdr".into(),
///     schema: Some(Arc::new(Schema {
///         id: 1,
///         name: "std_msgs/msg/String".into(),
///         encoding: "".into(),
///         data: Bytes::new(),
///     })),
///     metadata: BTreeMap::new(),
/// };
/// let (registry, name) = robolog::cdr_definitions(&channel)?;
/// assert_eq!(registry.require(&name)?.fields[0].name, "data");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "cdr")]
pub fn cdr_definitions(
    channel: &Channel,
) -> Result<(robolog_msg::Registry, robolog_msg::TypeName), DecodeError> {
    let Some(schema) = &channel.schema else {
        return Err(not_decodable(channel));
    };
    if channel.message_encoding != CDR
        || !matches!(schema.encoding.as_str(), ROS2MSG | ROS2IDL | "" | "unknown")
    {
        return Err(not_decodable(channel));
    }
    let hash = channel.metadata.get(TOPIC_TYPE_HASH).map(String::as_str);
    let (mut registry, name) =
        cdr_registry(schema, hash).map_err(|reason| schema_error(channel, schema, reason))?;
    // The decoder's plan adds the builtin types a definition leaves out; so must this.
    if registry.dependencies(&name).is_err() {
        registry.add_ros2_builtins();
    }
    Ok((registry, name))
}

/// The ROS 2 definitions of a `cdr` channel's type (and the type): its `ros2msg` or `ros2idl`
/// schema, with what the schema lacks taken from the bundled standard interfaces; for a schema
/// without a definition (encoding `""` or `unknown`), the standard definition (see
/// [`Decoder`]).
#[cfg(feature = "cdr")]
pub(crate) fn cdr_registry(
    schema: &Schema,
    hash: Option<&str>,
) -> Result<(robolog_msg::Registry, robolog_msg::TypeName), String> {
    use robolog_msg::{Distro, Registry, TypeName};

    let name = TypeName::parse(&schema.name).map_err(|e| e.to_string())?;
    if matches!(schema.encoding.as_str(), "" | "unknown") {
        let Some(standard) = standard_registry(&name, hash) else {
            return Err(format!(
                "the recording has no definition of it (schema encoding {:?}), and it is not \
                 one of the standard ROS 2 interfaces robolog knows",
                schema.encoding
            ));
        };
        let mut registry = Registry::new();
        registry.fill_missing_from(standard, &name);
        return Ok((registry, name));
    }
    let text = std::str::from_utf8(&schema.data)
        .map_err(|e| format!("the definition is not UTF-8 text: {e}"))?;
    let mut registry = Registry::from_ros2_schema(&schema.name, &schema.encoding, text)
        .map_err(|e| e.to_string())?;
    // A schema that lacks a section: the standard interfaces may have it.
    if registry.dependencies(&name).is_err()
        && let Some(standard) = standard_registry(&name, hash)
            .or_else(|| Distro::ALL.last().map(|distro| Registry::standard(*distro)))
    {
        registry.fill_missing_from(standard, &name);
    }
    Ok((registry, name))
}

/// The bundled standard interfaces that define `name`: the newest distro whose RIHS01 hash of
/// it equals `hash`, else the newest that has it.
#[cfg(feature = "cdr")]
fn standard_registry(
    name: &robolog_msg::TypeName,
    hash: Option<&str>,
) -> Option<&'static robolog_msg::Registry> {
    use robolog_msg::{Distro, Registry};

    let having: Vec<&'static Registry> = Distro::ALL
        .iter()
        .rev()
        .map(|distro| Registry::standard(*distro))
        .filter(|registry| registry.contains(name))
        .collect();
    let matching = hash.and_then(|hash| {
        having
            .iter()
            .find(|registry| registry.type_hash(name).is_ok_and(|h| h == hash))
    });
    matching.or(having.first()).copied()
}

fn not_decodable(channel: &Channel) -> DecodeError {
    let encoding = channel.message_encoding.as_str();
    let schema_encoding = channel.schema.as_deref().map(|s| s.encoding.as_str());
    let reason = match encoding {
        ROS1 if !cfg!(feature = "ros1") => {
            "robolog was built without the `ros1` cargo feature".to_owned()
        }
        ROS1 => match &channel.schema {
            None => "the channel has no schema (ROS 1 messages need their definition)".to_owned(),
            Some(s) => format!(
                "its schema is encoded as {:?}; ROS 1 messages need a {ROS1MSG:?} definition",
                s.encoding
            ),
        },
        CDR if !cfg!(feature = "cdr") => {
            "robolog was built without the `cdr` cargo feature".to_owned()
        }
        CDR => match schema_encoding {
            None => "the channel has no schema, so its message type is unknown".to_owned(),
            Some(other) => format!(
                "its schema is encoded as {other:?}; ROS 2 messages need a \"ros2msg\" or \
                 \"ros2idl\" definition (or none, for a standard type)"
            ),
        },
        PROTOBUF => {
            "protobuf decoding is not supported (it needs the schema's FileDescriptorSet and a protobuf decoder)"
                .to_owned()
        }
        BDDF_POD => {
            "bddf-pod blocks are packed numbers, read them with robolog_bddf::PodSamples (see robolog::encodings)"
                .to_owned()
        }
        "" => "the channel declares no message encoding".to_owned(),
        other => format!("{other:?} is not an encoding robolog decodes (ros1, cdr and json are)"),
    };
    DecodeError::NotDecodable {
        topic: channel.topic.clone(),
        encoding: encoding.to_owned(),
        reason,
    }
}
