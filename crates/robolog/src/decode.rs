//! Decoding messages through the facade: ROS 1 messages into the `robolog-ros1` value tree and
//! JSON, JSON messages passed through, everything else reported as not decodable with the
//! reason.

use std::collections::HashMap;
#[cfg(feature = "ros1")]
use std::sync::Arc;

use crate::encodings::{BDDF_POD, CDR, JSON, PROTOBUF, ROS1, ROS1MSG};
#[cfg(feature = "ros1")]
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
    /// The channel's ROS 1 definition could not be compiled.
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
    /// A JSON message, validated and passed through as it is.
    Json(&'a str),
}

impl Decoded<'_> {
    /// The message as JSON text. ROS 1 messages follow the `robolog-ros1` JSON rules (fields in
    /// definition order, times as `{"sec","nsec"}`, `uint8[]` as base64, non-finite floats as
    /// strings); JSON messages come out exactly as stored.
    pub fn to_json(&self) -> String {
        match self {
            #[cfg(feature = "ros1")]
            Decoded::Ros1(m) => m.root().to_json(),
            Decoded::Json(text) => (*text).to_owned(),
        }
    }

    /// Writes [`Decoded::to_json`] to `writer`.
    pub fn write_json(&self, mut writer: impl std::io::Write) -> std::io::Result<()> {
        match self {
            #[cfg(feature = "ros1")]
            Decoded::Ros1(m) => m.root().write_json(writer),
            Decoded::Json(text) => writer.write_all(text.as_bytes()),
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

#[cfg(feature = "ros1")]
type Compiled = Result<Arc<robolog_ros1::Plan>, String>;

/// Decodes messages, compiling each ROS 1 definition once.
///
/// Compiled plans are cached by (schema name, schema data): channels of different files that
/// share a type and definition share a plan, and a definition that fails to compile fails
/// once, not once per message. A per-schema fast path avoids hashing the definition for each
/// message.
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
/// # Ok::<(), robolog::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct Decoder {
    #[cfg(feature = "ros1")]
    by_schema: HashMap<usize, (Arc<Schema>, Compiled)>,
    #[cfg(feature = "ros1")]
    by_content: HashMap<(String, robolog_framing::Bytes), Compiled>,
    #[cfg(not(feature = "ros1"))]
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
            _ => Err(not_decodable(channel)),
        }
    }

    /// Decodes one message.
    pub fn decode<'a>(&mut self, message: &'a Message) -> Result<Decoded<'a>, DecodeError> {
        let channel = &message.channel;
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
                    .map_err(|e| DecodeError::Message {
                        topic: channel.topic.clone(),
                        type_name: channel.type_name().to_owned(),
                        log_time_ns: message.log_time_ns,
                        truncated: e.is_truncation(),
                        reason: e.to_string(),
                    })?;
                let trailing = decoded.trailing_bytes();
                let tree = decoded.into_tree();
                Ok(Decoded::Ros1(Ros1Message {
                    plan,
                    tree,
                    trailing,
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
        let key = Arc::as_ptr(schema) as usize;
        let compiled = match self.by_schema.get(&key) {
            Some((_, compiled)) => compiled.clone(),
            None => {
                let content = (schema.name.clone(), schema.data.clone());
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
        };
        compiled.map_err(|reason| DecodeError::Schema {
            topic: channel.topic.clone(),
            type_name: schema.name.clone(),
            reason,
        })
    }

    #[cfg(not(feature = "ros1"))]
    fn ros1_plan(&mut self, channel: &Channel) -> Result<(), DecodeError> {
        Err(not_decodable(channel))
    }
}

#[cfg(feature = "ros1")]
fn compile(schema: &Schema) -> Compiled {
    let text = std::str::from_utf8(&schema.data)
        .map_err(|e| format!("the definition is not UTF-8 text: {e}"))?;
    robolog_ros1::Plan::from_bundle(&schema.name, text)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn not_decodable(channel: &Channel) -> DecodeError {
    let encoding = channel.message_encoding.as_str();
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
        CDR => "ROS 2 CDR decoding is not supported yet".to_owned(),
        PROTOBUF => {
            "protobuf decoding is not supported (it needs the schema's FileDescriptorSet and a protobuf decoder)"
                .to_owned()
        }
        BDDF_POD => {
            "bddf-pod blocks are packed numbers, read them with robolog_bddf::PodSamples (see robolog::encodings)"
                .to_owned()
        }
        "" => "the channel declares no message encoding".to_owned(),
        other => format!("{other:?} is not an encoding robolog decodes (ros1 and json are)"),
    };
    DecodeError::NotDecodable {
        topic: channel.topic.clone(),
        encoding: encoding.to_owned(),
        reason,
    }
}
