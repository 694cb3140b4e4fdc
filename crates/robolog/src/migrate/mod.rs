//! ROS 1 ↔ ROS 2 migration: what [`crate::convert`] and [`crate::merge`] do to the channels
//! and messages of one ROS version when the output wants the other, the way `rosbags-convert`
//! does it with a ROS 2 destination typestore.
//!
//! - Type names: `pkg/Type` ↔ `pkg/msg/Type`; `tf/tfMessage` becomes `tf2_msgs/msg/TFMessage`.
//! - Definitions (ROS 1 → ROS 2): the standard interfaces of the chosen [`Distro`] for the
//!   types ROS 2 has (so `sensor_msgs/CameraInfo` gets ROS 2's `d k r p`), the ROS 1
//!   definition translated for the others (`time`/`duration` become `builtin_interfaces/Time`
//!   and `Duration`). ROS 2 → ROS 1: the ROS 2 definition translated back (`std_msgs/Header`
//!   gets `seq`, bounded arrays and strings become unbounded).
//! - Messages: re-encoded between the ROS 1 wire format and CDR by a transcoder compiled
//!   once per pair of types. Fields are paired by name (a renamed field of the same type is
//!   found: `D` → `d`), dropped when the destination lacks them and zero when the source does
//!   (`Header.seq` is dropped, and 0 on the way back); `time` and `duration` bytes are copied
//!   into `sec`/`nanosec` as they are.
//! - Topics: a latched ROS 1 connection gets the transient-local QoS profile rosbags-convert
//!   gives it, and a ROS 2 topic with a transient-local profile comes back latched;
//!   connections that become identical channels (same topic, type, QoS) are one.
//! - A type of the other version's standard packages that the other version lacks
//!   (`rosgraph_msgs/Log`, actionlib's generated goals, ROS 2's `rcl_interfaces`) has no
//!   counterpart: the conversion is refused before anything is written, naming every such
//!   type, unless [`Migration::copy_unmatched_types`] carries their own definitions over (what
//!   rosbags-convert does).
//!
//! ```
//! use robolog::migrate::{Migration, RosVersion};
//! use robolog::{ConvertOptions, Format, Output, WriterOptions, convert, create_writer};
//!
//! let bag = robolog::open(robolog_testkit::testdata::path("bags/generated/ros_comm/ref_lz4.bag"))?;
//! let mut mcap = create_writer(Output::memory(), WriterOptions::default_for(Format::Mcap)?)?;
//! let options = ConvertOptions::new().migration(Migration::to(RosVersion::Ros2));
//! convert(&bag, &mut *mcap, options)?;
//! let ros2 = robolog::open_bytes(mcap.finish()?.data.unwrap())?;
//! let imu = ros2.channels().iter().find(|c| c.topic == "/imu").unwrap();
//! assert_eq!(imu.message_encoding, "cdr");
//! assert_eq!(imu.type_name(), "sensor_msgs/msg/Imu");
//! # Ok::<(), robolog::Error>(())
//! ```

mod definitions;
mod transcode;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use robolog_framing::Bytes;
pub use robolog_msg::Distro;
use robolog_msg::TypeName;

pub(crate) use transcode::{Transcoder, Wire};

use crate::decode::DecodeError;
use crate::encodings::{CDR, LATCHING, MD5SUM, ROS1, ROS1MSG, ROS2MSG, TOPIC_TYPE_HASH};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Channel, Message, Metadata, Schema};

/// A ROS version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RosVersion {
    /// ROS 1: `ros1` messages with `ros1msg` definitions.
    Ros1,
    /// ROS 2: `cdr` messages with `ros2msg` definitions.
    Ros2,
}

impl RosVersion {
    fn encoding(self) -> &'static str {
        match self {
            RosVersion::Ros1 => ROS1,
            RosVersion::Ros2 => CDR,
        }
    }
}

impl std::fmt::Display for RosVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RosVersion::Ros1 => "ROS 1",
            RosVersion::Ros2 => "ROS 2",
        })
    }
}

/// The distro whose standard interfaces a migration to ROS 2 uses unless told otherwise: the
/// current long-term-support release.
pub const DEFAULT_DISTRO: Distro = Distro::Jazzy;

/// Whether and how a conversion migrates messages between ROS 1 and ROS 2.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Migration {
    target: Target,
    distro: Distro,
    copy_unmatched: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    /// As the output format needs: ROS 1 channels into a ROS 2 bag, ROS 2 channels into a bag.
    Auto,
    To(RosVersion),
    Off,
}

impl Default for Migration {
    fn default() -> Self {
        Migration::auto()
    }
}

impl Migration {
    /// Migrates only what the output format cannot hold otherwise: ROS 1 messages written to
    /// a ROS 2 bag, ROS 2 messages written to a ROS bag (the default).
    pub fn auto() -> Self {
        Migration {
            target: Target::Auto,
            distro: DEFAULT_DISTRO,
            copy_unmatched: false,
        }
    }

    /// Migrates every message of the other ROS version to `version` (for outputs that can
    /// hold both, such as MCAP: a ROS 1 bag becomes a ROS 2 MCAP file with profile `ros2`).
    pub fn to(version: RosVersion) -> Self {
        Migration {
            target: Target::To(version),
            ..Migration::auto()
        }
    }

    /// Never migrates: messages the output cannot hold are refused.
    pub fn off() -> Self {
        Migration {
            target: Target::Off,
            ..Migration::auto()
        }
    }

    /// The ROS 2 distro whose standard interfaces define the migrated types
    /// ([`DEFAULT_DISTRO`] unless set).
    pub fn distro(mut self, distro: Distro) -> Self {
        self.distro = distro;
        self
    }

    /// Types with no counterpart in the other ROS version are migrated with their own
    /// definition (translated) instead of refused (off by default).
    pub fn copy_unmatched_types(mut self, on: bool) -> Self {
        self.copy_unmatched = on;
        self
    }

    /// The version messages of `channel` are migrated to for an output of `format`, if any.
    fn target_for(&self, channel: &Channel, format: Format) -> Option<RosVersion> {
        let version = match channel.message_encoding.as_str() {
            ROS1 => RosVersion::Ros1,
            CDR => RosVersion::Ros2,
            _ => return None,
        };
        let other = match version {
            RosVersion::Ros1 => RosVersion::Ros2,
            RosVersion::Ros2 => RosVersion::Ros1,
        };
        match self.target {
            Target::Off => None,
            Target::To(target) => (target == other).then_some(other),
            Target::Auto => match (format, other) {
                (Format::Rosbag2, RosVersion::Ros2) | (Format::Bag, RosVersion::Ros1) => {
                    Some(other)
                }
                _ => None,
            },
        }
    }
}

/// A migrated channel and the program that translates its messages.
#[derive(Debug)]
struct Entry {
    channel: Arc<Channel>,
    transcoder: Transcoder,
    /// ROS 2 → ROS 1: the source type's CDR plan (see [`Compiled::cdr_source`]).
    cdr_source: Option<Arc<robolog_cdr::Plan>>,
}

/// The compiled migration of one type and definition.
#[derive(Debug)]
struct Compiled {
    schema: Arc<Schema>,
    transcoder: Transcoder,
    /// ROS 2 → ROS 1: the source type's CDR plan. The transcoder reads little-endian XCDR1,
    /// what every ROS 2 middleware writes; a message in another encapsulation robolog-cdr
    /// decodes (big-endian, plain XCDR2) is first re-encoded as that through this plan.
    cdr_source: Option<Arc<robolog_cdr::Plan>>,
    /// ROS 1 → ROS 2: the RIHS01 hash; ROS 2 → ROS 1: the md5sum.
    identity: String,
}

/// A compiled migration, or why the type cannot be migrated (`type (reason)`, one a type).
type CompileResult = std::result::Result<Arc<Compiled>, Vec<String>>;

/// The migration of one conversion: channels as they are declared, messages as they are
/// written.
#[derive(Debug)]
pub(crate) struct Migrator {
    settings: Migration,
    format: Format,
    /// (input, channel id) → the migrated channel, `None` when the channel is not migrated.
    channels: HashMap<(usize, u32), Option<Arc<Entry>>>,
    /// Migrated channels by content, so that identical ones become one.
    shared: Vec<Arc<Entry>>,
    /// By (type name, definition, version): compiled once per type.
    compiled: HashMap<(String, Bytes, String), CompileResult>,
    schema_ids: u32,
    /// Set when a channel was migrated to ROS 2 (the output then names its distro).
    pub(crate) migrated_to_ros2: bool,
}

impl Migrator {
    pub(crate) fn new(settings: &Migration, format: Format) -> Self {
        Migrator {
            settings: settings.clone(),
            format,
            channels: HashMap::new(),
            shared: Vec::new(),
            compiled: HashMap::new(),
            schema_ids: 0,
            migrated_to_ros2: false,
        }
    }

    /// Whether channels of some encoding may be migrated (then the output's profile follows
    /// the migrated channels, not the inputs').
    pub(crate) fn may_migrate(&self) -> bool {
        match self.settings.target {
            Target::Off => false,
            Target::To(_) => true,
            Target::Auto => matches!(self.format, Format::Rosbag2 | Format::Bag),
        }
    }

    /// The record that tells readers which distro the migrated definitions are from: the
    /// `rosbag2` metadata record rosbag2's MCAP storage writes (a ROS 2 bag output takes its
    /// `ros_distro` from it).
    pub(crate) fn distro_record(&self) -> Option<Metadata> {
        self.migrated_to_ros2.then(|| Metadata {
            name: "rosbag2".to_owned(),
            entries: BTreeMap::from([(
                "ROS_DISTRO".to_owned(),
                self.settings.distro.name().to_owned(),
            )]),
        })
    }

    /// The channel that `channel` (of input `input`) becomes: itself when it is not migrated,
    /// the migrated channel otherwise, or why it cannot be migrated (`type: reason; …`).
    pub(crate) fn channel(
        &mut self,
        input: usize,
        channel: &Arc<Channel>,
    ) -> std::result::Result<Arc<Channel>, Vec<String>> {
        let key = (input, channel.id);
        if let Some(found) = self.channels.get(&key) {
            return Ok(found
                .as_ref()
                .map_or_else(|| Arc::clone(channel), |e| Arc::clone(&e.channel)));
        }
        let Some(target) = self.settings.target_for(channel, self.format) else {
            self.channels.insert(key, None);
            return Ok(Arc::clone(channel));
        };
        let compiled = self.compile(channel, target)?;
        let mut metadata = BTreeMap::new();
        match target {
            RosVersion::Ros2 => {
                self.migrated_to_ros2 = true;
                let latched = channel
                    .metadata
                    .get(LATCHING)
                    .is_some_and(|v| matches!(v.as_str(), "1" | "true"));
                metadata.insert(
                    crate::rosbag2_log::QOS_KEY.to_owned(),
                    robolog_rosbag2::qos::profiles_to_string(
                        &if latched {
                            vec![robolog_rosbag2::QosProfile::latched()]
                        } else {
                            Vec::new()
                        },
                        true,
                    ),
                );
                metadata.insert(TOPIC_TYPE_HASH.to_owned(), compiled.identity.clone());
            }
            RosVersion::Ros1 => {
                let latched = channel
                    .metadata
                    .get(crate::rosbag2_log::QOS_KEY)
                    .and_then(|text| robolog_rosbag2::qos::parse_profiles(text).ok())
                    .is_some_and(|profiles| {
                        profiles.iter().any(|p| {
                            p.durability == robolog_rosbag2::qos::Durability::TransientLocal
                        })
                    });
                metadata.insert(MD5SUM.to_owned(), compiled.identity.clone());
                metadata.insert(
                    LATCHING.to_owned(),
                    if latched { "1" } else { "0" }.to_owned(),
                );
            }
        }
        let migrated = Channel {
            id: channel.id,
            topic: channel.topic.clone(),
            message_encoding: target.encoding().to_owned(),
            schema: Some(Arc::clone(&compiled.schema)),
            metadata,
        };
        let entry = match self
            .shared
            .iter()
            .find(|e| e.channel.same_content(&migrated))
        {
            Some(existing) => Arc::clone(existing),
            None => {
                let entry = Arc::new(Entry {
                    channel: Arc::new(migrated),
                    transcoder: compiled.transcoder.clone(),
                    cdr_source: compiled.cdr_source.clone(),
                });
                self.shared.push(Arc::clone(&entry));
                entry
            }
        };
        let out = Arc::clone(&entry.channel);
        self.channels.insert(key, Some(entry));
        Ok(out)
    }

    fn compile(
        &mut self,
        channel: &Channel,
        target: RosVersion,
    ) -> std::result::Result<Arc<Compiled>, Vec<String>> {
        let schema = channel.schema.as_deref();
        let cache_key = (
            schema.map(|s| s.name.clone()).unwrap_or_default(),
            schema.map(|s| s.data.clone()).unwrap_or_default(),
            format!(
                "{}\0{}",
                schema.map_or("", |s| s.encoding.as_str()),
                channel
                    .metadata
                    .get(TOPIC_TYPE_HASH)
                    .map_or("", String::as_str)
            ),
        );
        if let Some(found) = self.compiled.get(&cache_key) {
            return found.clone();
        }
        let result = compile(channel, target, &self.settings, self.schema_ids + 1);
        if result.is_ok() {
            self.schema_ids += 1;
        }
        self.compiled.insert(cache_key, result.clone());
        result
    }

    /// `message` as the output gets it: translated when its channel is migrated (declare the
    /// channel with [`Migrator::channel`] first).
    pub(crate) fn message(&mut self, input: usize, message: Message) -> Result<Message> {
        let entry = match self.channels.get(&(input, message.channel.id)) {
            Some(Some(entry)) => Arc::clone(entry),
            Some(None) => return Ok(message),
            None => {
                self.channel(input, &message.channel)
                    .map_err(|refused| self.error(&message.channel, refused))?;
                return self.message(input, message);
            }
        };
        let fail = |truncated: bool, offset: Option<usize>, reason: String| {
            Error::Decode(DecodeError::Message {
                topic: message.channel.topic.clone(),
                type_name: message.channel.type_name().to_owned(),
                log_time_ns: message.log_time_ns,
                truncated,
                offset: offset.map(|o| o as u64),
                reason,
            })
        };
        let little_endian_xcdr1;
        let data: &[u8] = match &entry.cdr_source {
            Some(plan) if message.data.get(..2).is_some_and(|kind| kind != [0, 1]) => {
                little_endian_xcdr1 = plan
                    .decode(&message.data)
                    .and_then(|decoded| plan.encode(decoded.tree()))
                    .map_err(|e| fail(e.is_truncation(), e.offset(), e.to_string()))?;
                &little_endian_xcdr1
            }
            _ => &message.data,
        };
        let mut out = Vec::with_capacity(data.len() + data.len() / 4 + 16);
        entry
            .transcoder
            .transcode(data, &mut out)
            .map_err(|e| fail(e.is_truncation(), e.offset(), e.to_string()))?;
        Ok(Message {
            channel: Arc::clone(&entry.channel),
            log_time_ns: message.log_time_ns,
            publish_time_ns: message.publish_time_ns,
            sequence: message.sequence,
            data: Bytes::from(out),
        })
    }

    /// The error for a channel that cannot be migrated, with the types refused.
    pub(crate) fn error(&self, channel: &Channel, refused: Vec<String>) -> Error {
        self.errors(
            refused
                .into_iter()
                .map(|r| format!("{}: {r}", channel.topic))
                .collect(),
        )
    }

    /// The error for channels that cannot be migrated: each as `topic: type (reason)`.
    pub(crate) fn errors(&self, refused: Vec<String>) -> Error {
        let to_ros1 = match self.settings.target {
            Target::To(version) => version == RosVersion::Ros1,
            _ => self.format == Format::Bag,
        };
        Error::Migration {
            target: if to_ros1 {
                "ROS 1".to_owned()
            } else {
                format!("ROS 2 ({})", self.settings.distro)
            },
            refused,
        }
    }
}

/// Compiles the migration of `channel`'s type to `target`.
fn compile(
    channel: &Channel,
    target: RosVersion,
    settings: &Migration,
    schema_id: u32,
) -> std::result::Result<Arc<Compiled>, Vec<String>> {
    let schema = channel.schema.as_deref();
    let type_name = schema.map_or("", |s| s.name.as_str());
    let fail = |reason: String| vec![format!("{type_name} ({reason})")];
    let name = TypeName::parse(type_name).map_err(|e| fail(e.to_string()))?;
    let mut cdr_source = None;
    let migrated = match target {
        RosVersion::Ros2 => {
            let Some(schema) = schema.filter(|s| s.encoding == ROS1MSG) else {
                return Err(fail(
                    "a ROS 1 channel without a ros1msg definition".to_owned(),
                ));
            };
            let text = std::str::from_utf8(&schema.data)
                .map_err(|_| fail("its definition is not UTF-8 text".to_owned()))?;
            definitions::to_ros2(&name, text, settings.distro, settings.copy_unmatched)
        }
        RosVersion::Ros1 => {
            let hash = channel.metadata.get(TOPIC_TYPE_HASH).map(String::as_str);
            let Some(schema) = schema else {
                return Err(fail("a ROS 2 channel without a schema".to_owned()));
            };
            let (registry, top) = crate::decode::cdr_registry(schema, hash).map_err(fail)?;
            // A type the transcoder takes but robolog-cdr cannot plan keeps the transcoder's
            // own refusal of other encapsulations.
            cdr_source = robolog_cdr::Plan::compile(&registry, &top)
                .ok()
                .map(Arc::new);
            definitions::to_ros1(&top, registry, settings.copy_unmatched)
        }
    }
    .map_err(|refused| {
        refused
            .into_iter()
            .map(|r| format!("{} ({})", r.type_name, r.reason))
            .collect::<Vec<_>>()
    })?;
    let (src_wire, dst_wire) = match target {
        RosVersion::Ros2 => (Wire::Ros1, Wire::Cdr),
        RosVersion::Ros1 => (Wire::Cdr, Wire::Ros1),
    };
    let transcoder = Transcoder::compile(
        &migrated.src,
        src_wire,
        &migrated.src_top,
        &migrated.dst_wire,
        dst_wire,
        &migrated.dst_top,
    )
    .map_err(|e| fail(e.to_string()))?;
    let (schema_name, encoding, text, identity) = match target {
        RosVersion::Ros2 => (
            migrated.dst_top.ros2_name(),
            ROS2MSG,
            migrated.dst.bundle_text(&migrated.dst_top),
            migrated.dst.type_hash(&migrated.dst_top),
        ),
        RosVersion::Ros1 => (
            migrated.dst_top.to_string(),
            ROS1MSG,
            migrated.dst.bundle_text(&migrated.dst_top),
            migrated.dst.md5(&migrated.dst_top),
        ),
    };
    let text = text.map_err(|e| fail(e.to_string()))?;
    let identity = identity.map_err(|e| fail(e.to_string()))?;
    Ok(Arc::new(Compiled {
        schema: Arc::new(Schema {
            id: schema_id,
            name: schema_name,
            encoding: encoding.to_owned(),
            data: Bytes::from(text.into_bytes()),
        }),
        transcoder,
        cdr_source,
        identity,
    }))
}
