//! `metadata.yaml`: what a bag directory says about itself (versions 1–9), read from any of its
//! spellings and written the way rosbag2 writes it.

use std::collections::BTreeMap;

use crate::qos::{QosProfile, emit_profiles_list, profiles_from_node, profiles_to_string};
use crate::yaml::{At, Emitter, Node, YamlError, parse, quote};

/// The key everything in `metadata.yaml` sits under.
pub const TOP_KEY: &str = "rosbag2_bagfile_information";

/// The newest metadata version this crate knows (Jazzy and later).
pub const LATEST_VERSION: u32 = 9;

/// "No message was written": the starting time rosbag2 stores for an empty bag (INT64_MAX).
pub const NO_START: u64 = i64::MAX as u64;

/// A topic as the bag describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicMetadata {
    /// Topic name, such as `/chatter`.
    pub name: String,
    /// Message type, `pkg/msg/Type` (`pkg/srv/Foo_Event` for service events).
    pub type_name: String,
    /// How messages are serialized: `cdr`.
    pub serialization_format: String,
    /// The QoS of each publisher seen while recording (metadata v4 and later).
    pub offered_qos_profiles: Vec<QosProfile>,
    /// `RIHS01_<64 hex digits>`, or `""` (metadata v7 and later, and publishers that report one).
    pub type_description_hash: String,
}

/// A topic and how many messages it has.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicInformation {
    /// The topic.
    pub topic: TopicMetadata,
    /// Its messages in the bag.
    pub message_count: u64,
}

/// One storage file (metadata v5 and later).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileInformation {
    /// The file name before FILE compression (`x_0.db3` even when the file is `x_0.db3.zstd`).
    pub path: String,
    /// First receive time in the file, ns since the epoch.
    pub starting_time_ns: u64,
    /// Last minus first receive time, ns.
    pub duration_ns: u64,
    /// Messages in the file.
    pub message_count: u64,
}

/// Everything `metadata.yaml` holds. Missing optional keys read as their defaults; unknown
/// keys are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BagMetadata {
    /// Metadata version, 1–9.
    pub version: u32,
    /// `sqlite3` or `mcap`.
    pub storage_identifier: String,
    /// The storage files in order, as written (resolve them with the bag's rules, never by
    /// name).
    pub relative_file_paths: Vec<String>,
    /// Last minus first receive time, ns (0 for an empty bag).
    pub duration_ns: u64,
    /// First receive time, ns since the epoch ([`NO_START`] for an empty bag).
    pub starting_time_ns: u64,
    /// Messages in the bag.
    pub message_count: u64,
    /// Every topic, also those without messages.
    pub topics: Vec<TopicInformation>,
    /// `""` or `zstd` (v3 and later).
    pub compression_format: String,
    /// `""`, `FILE` or `MESSAGE` (v3 and later; any case).
    pub compression_mode: String,
    /// Per storage file (v5 and later).
    pub files: Vec<FileInformation>,
    /// User key-value pairs (v6 and later).
    pub custom_data: BTreeMap<String, String>,
    /// `$ROS_DISTRO` of the recorder (v8 and later).
    pub ros_distro: String,
}

impl BagMetadata {
    /// Reads the text of a `metadata.yaml` (the `rosbag2_bagfile_information` document).
    pub fn from_yaml(text: &str) -> Result<Self, MetadataError> {
        let doc = parse(text).map_err(MetadataError::from)?;
        let at = At::root();
        let root = at.node(&doc);
        let top = root
            .get(TOP_KEY)
            .ok_or_else(|| root.error(format!("no {TOP_KEY} key")))
            .map_err(MetadataError::from)?;
        let at = root.child_path(TOP_KEY);
        Self::from_node(at.node(top)).map_err(MetadataError::from)
    }

    /// Reads metadata serialized without the top key, as the MCAP `rosbag2` record's
    /// `serialized_metadata` and the sqlite `metadata` table hold it.
    pub fn from_serialized(text: &str) -> Result<Self, MetadataError> {
        let doc = parse(text).map_err(MetadataError::from)?;
        let at = At::root();
        Self::from_node(at.node(&doc)).map_err(MetadataError::from)
    }

    fn from_node(node: Node<'_, '_>) -> Result<Self, YamlError> {
        node.ensure_mapping()?;
        let opt = |key: &str| node.get(key).map(|v| (node.child_path(key), v));
        let version = match opt("version") {
            Some((at, v)) => {
                let v = at.node(v).u64()?;
                u32::try_from(v).map_err(|_| node.error(format!("version {v} is not a version")))?
            }
            None => return Err(node.error("no version key")),
        };
        let mut m = BagMetadata {
            version,
            ..Default::default()
        };
        if let Some((at, v)) = opt("storage_identifier") {
            m.storage_identifier = at.node(v).text()?;
        }
        if let Some((at, v)) = opt("relative_file_paths") {
            let list = at.node(v);
            for (i, item) in list.sequence()?.iter().enumerate() {
                m.relative_file_paths
                    .push(list.item_path(i).node(item).text()?);
            }
        }
        m.duration_ns = nested_u64(node, "duration", "nanoseconds")?.unwrap_or(0);
        m.starting_time_ns =
            nested_u64(node, "starting_time", "nanoseconds_since_epoch")?.unwrap_or(NO_START);
        if let Some((at, v)) = opt("message_count") {
            m.message_count = at.node(v).u64()?;
        }
        if let Some((at, v)) = opt("topics_with_message_count") {
            let list = at.node(v);
            for (i, item) in list.sequence()?.iter().enumerate() {
                let at = list.item_path(i);
                m.topics.push(topic_information(at.node(item))?);
            }
        }
        if let Some((at, v)) = opt("compression_format") {
            m.compression_format = at.node(v).text()?;
        }
        if let Some((at, v)) = opt("compression_mode") {
            m.compression_mode = at.node(v).text()?;
        }
        if let Some((at, v)) = opt("files") {
            let list = at.node(v);
            for (i, item) in list.sequence()?.iter().enumerate() {
                let at = list.item_path(i);
                m.files.push(file_information(at.node(item))?);
            }
        }
        if let Some((at, v)) = opt("custom_data") {
            let map = at.node(v);
            for (key, value) in map.entries()? {
                let text = map.child_path(&key).node(value).text()?;
                m.custom_data.insert(key, text);
            }
        }
        if let Some((at, v)) = opt("ros_distro") {
            m.ros_distro = at.node(v).text()?;
        }
        Ok(m)
    }

    /// The `metadata.yaml` text for [`BagMetadata::version`] (1–9), laid out as rosbag2's
    /// yaml-cpp writes it: its key order for that version, block style, no final newline.
    pub fn to_yaml(&self) -> String {
        let mut e = Emitter::new();
        e.key(0, false, TOP_KEY);
        self.emit(&mut e, 2);
        e.finish()
    }

    /// The metadata without the top key, as rosbag2 stores it in the MCAP `rosbag2` record and
    /// the sqlite `metadata` table.
    pub fn to_serialized(&self) -> String {
        let mut e = Emitter::new();
        self.emit(&mut e, 0);
        e.finish()
    }

    fn emit(&self, e: &mut Emitter, i: usize) {
        let v = self.version;
        e.scalar(i, false, "version", &v.to_string());
        e.scalar(
            i,
            false,
            "storage_identifier",
            &quote(&self.storage_identifier),
        );
        if v < 5 {
            self.emit_paths(e, i);
        }
        e.key(i, false, "duration");
        e.scalar(i + 2, false, "nanoseconds", &self.duration_ns.to_string());
        e.key(i, false, "starting_time");
        e.scalar(
            i + 2,
            false,
            "nanoseconds_since_epoch",
            &self.starting_time_ns.to_string(),
        );
        e.scalar(i, false, "message_count", &self.message_count.to_string());
        if self.topics.is_empty() {
            e.scalar(i, false, "topics_with_message_count", "[]");
        } else {
            e.key(i, false, "topics_with_message_count");
        }
        for t in &self.topics {
            let j = i + 4;
            e.key(j, true, "topic_metadata");
            let k = j + 2;
            e.scalar(k, false, "name", &quote(&t.topic.name));
            e.scalar(k, false, "type", &quote(&t.topic.type_name));
            e.scalar(
                k,
                false,
                "serialization_format",
                &quote(&t.topic.serialization_format),
            );
            if v >= 9 {
                emit_profiles_list(e, k, "offered_qos_profiles", &t.topic.offered_qos_profiles);
            } else if v >= 4 {
                let text = profiles_to_string(&t.topic.offered_qos_profiles, false);
                e.scalar(k, false, "offered_qos_profiles", &quote_always(&text));
            }
            if v >= 7 {
                e.scalar(
                    k,
                    false,
                    "type_description_hash",
                    &quote(&t.topic.type_description_hash),
                );
            }
            e.scalar(j, false, "message_count", &t.message_count.to_string());
        }
        if v >= 3 {
            e.scalar(
                i,
                false,
                "compression_format",
                &quote(&self.compression_format),
            );
            e.scalar(i, false, "compression_mode", &quote(&self.compression_mode));
        }
        if v >= 5 {
            self.emit_paths(e, i);
            if self.files.is_empty() {
                e.scalar(i, false, "files", "[]");
            } else {
                e.key(i, false, "files");
            }
            for f in &self.files {
                let j = i + 4;
                e.scalar(j, true, "path", &quote(&f.path));
                e.key(j, false, "starting_time");
                e.scalar(
                    j + 2,
                    false,
                    "nanoseconds_since_epoch",
                    &f.starting_time_ns.to_string(),
                );
                e.key(j, false, "duration");
                e.scalar(j + 2, false, "nanoseconds", &f.duration_ns.to_string());
                e.scalar(j, false, "message_count", &f.message_count.to_string());
            }
        }
        if v >= 6 {
            if self.custom_data.is_empty() {
                e.scalar(i, false, "custom_data", "~");
            } else {
                e.key(i, false, "custom_data");
                for (key, value) in &self.custom_data {
                    e.scalar(i + 2, false, &quote(key), &quote(value));
                }
            }
        }
        if v >= 8 {
            e.scalar(i, false, "ros_distro", &quote(&self.ros_distro));
        }
    }

    fn emit_paths(&self, e: &mut Emitter, i: usize) {
        if self.relative_file_paths.is_empty() {
            e.scalar(i, false, "relative_file_paths", "[]");
            return;
        }
        e.key(i, false, "relative_file_paths");
        for path in &self.relative_file_paths {
            e.item(i + 2, &quote(path));
        }
    }

    /// The compression of the storage files, from `compression_format` and `compression_mode`.
    pub fn compression(&self) -> Result<CompressionMode, String> {
        CompressionMode::from_metadata(&self.compression_format, &self.compression_mode)
    }
}

/// A string double-quoted even when it could be plain (yaml-cpp quotes the multi-line QoS
/// strings, and `""`).
fn quote_always(s: &str) -> String {
    let q = quote(s);
    if q.starts_with('"') {
        q
    } else {
        format!("\"{q}\"")
    }
}

fn nested_u64(node: Node<'_, '_>, outer: &str, inner: &str) -> Result<Option<u64>, YamlError> {
    let Some(v) = node.get(outer) else {
        return Ok(None);
    };
    let at = node.child_path(outer);
    let map = at.node(v);
    map.ensure_mapping()?;
    match map.get(inner) {
        Some(v) => map.child_path(inner).node(v).u64().map(Some),
        None => Ok(None),
    }
}

fn topic_information(node: Node<'_, '_>) -> Result<TopicInformation, YamlError> {
    node.ensure_mapping()?;
    let topic = node
        .get("topic_metadata")
        .ok_or_else(|| node.error("no topic_metadata key"))?;
    let at = node.child_path("topic_metadata");
    let t = at.node(topic);
    t.ensure_mapping()?;
    let text = |key: &str, required: bool| -> Result<String, YamlError> {
        match t.get(key) {
            Some(v) => t.child_path(key).node(v).text(),
            None if required => Err(t.error(format!("no {key} key"))),
            None => Ok(String::new()),
        }
    };
    let offered_qos_profiles = match t.get("offered_qos_profiles") {
        Some(v) => profiles_from_node(t.child_path("offered_qos_profiles").node(v))?,
        None => Vec::new(),
    };
    let message_count = match node.get("message_count") {
        Some(v) => node.child_path("message_count").node(v).u64()?,
        None => 0,
    };
    Ok(TopicInformation {
        topic: TopicMetadata {
            name: text("name", true)?,
            type_name: text("type", true)?,
            serialization_format: text("serialization_format", false)?,
            offered_qos_profiles,
            type_description_hash: text("type_description_hash", false)?,
        },
        message_count,
    })
}

fn file_information(node: Node<'_, '_>) -> Result<FileInformation, YamlError> {
    node.ensure_mapping()?;
    let path = match node.get("path") {
        Some(v) => node.child_path("path").node(v).text()?,
        None => return Err(node.error("no path key")),
    };
    Ok(FileInformation {
        path,
        starting_time_ns: nested_u64(node, "starting_time", "nanoseconds_since_epoch")?
            .unwrap_or(NO_START),
        duration_ns: nested_u64(node, "duration", "nanoseconds")?.unwrap_or(0),
        message_count: match node.get("message_count") {
            Some(v) => node.child_path("message_count").node(v).u64()?,
            None => 0,
        },
    })
}

/// rosbag2 compression of a bag's storage files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum CompressionMode {
    /// None (`""`, or `NONE`).
    #[default]
    None,
    /// Each closed storage file zstd-compressed as a whole (`x_0.db3.zstd`).
    File,
    /// Each message's data one zstd frame; the storage file itself plain.
    Message,
}

impl CompressionMode {
    /// From `compression_format` and `compression_mode` (any case).
    pub fn from_metadata(format: &str, mode: &str) -> Result<Self, String> {
        let mode_lower = mode.trim().to_ascii_lowercase();
        let format_lower = format.trim().to_ascii_lowercase();
        let parsed = match mode_lower.as_str() {
            "" | "none" => return Ok(CompressionMode::None),
            "file" => CompressionMode::File,
            "message" => CompressionMode::Message,
            _ => return Err(format!("unknown compression mode {mode:?}")),
        };
        if format_lower != "zstd" {
            return Err(format!(
                "compression format {format:?} (rosbag2 compresses with zstd only)"
            ));
        }
        Ok(parsed)
    }

    /// `compression_mode` as rosbag2 writes it: `""`, `FILE`, `MESSAGE`.
    pub fn metadata_name(self) -> &'static str {
        match self {
            CompressionMode::None => "",
            CompressionMode::File => "FILE",
            CompressionMode::Message => "MESSAGE",
        }
    }
}

/// `metadata.yaml` text that is not rosbag2 metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataError {
    /// Not YAML.
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A key has the wrong type or value.
    Key {
        /// The dotted key path.
        key: String,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for MetadataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MetadataError::Syntax {
                line,
                column,
                message,
            } => write!(f, "line {line}, column {column}: {message}"),
            MetadataError::Key { key, message } if key.is_empty() => f.write_str(message),
            MetadataError::Key { key, message } => write!(f, "{key}: {message}"),
        }
    }
}

impl std::error::Error for MetadataError {}

impl From<YamlError> for MetadataError {
    fn from(e: YamlError) -> Self {
        match e {
            YamlError::Syntax {
                line,
                column,
                message,
            } => MetadataError::Syntax {
                line,
                column,
                message,
            },
            YamlError::Shape { key, message } => MetadataError::Key { key, message },
        }
    }
}
