//! Writing ROS 2 bag directories from the model.

use std::collections::HashMap;
use std::path::PathBuf;

use robolog_rosbag2::{Definition, TopicMetadata, WriteOptions, Writer};

use crate::encodings::CDR;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::rosbag2_log::{QOS_KEY, TYPE_HASH_KEY};
use crate::writer::{Finished, LogWriter, Output};

/// Writes a ROS 2 bag directory (sqlite3 or MCAP storage, see
/// [`robolog_rosbag2::WriteOptions`]).
///
/// Channels must be `cdr` channels; their schema (`ros2msg`/`ros2idl`) becomes the stored
/// definition, their `offered_qos_profiles` and `topic_type_hash` metadata (as rosbag2's MCAP
/// storage and [`crate::Log`] name them) the topic's QoS and type hash. Channels that share a
/// topic and type become one topic. Attachments and metadata records are dropped (a `rosbag2`
/// record's `ROS_DISTRO` names the bag's distro). The output must be a path
/// ([`Output::directory`], or [`Output::file`] whose path becomes the bag directory).
pub struct Rosbag2Writer {
    target: PathBuf,
    options: Option<WriteOptions>,
    writer: Option<Writer>,
    topics: HashMap<String, (String, u32)>,
}

impl std::fmt::Debug for Rosbag2Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rosbag2Writer")
            .field("target", &self.target)
            .field("topics", &self.topics.len())
            .finish_non_exhaustive()
    }
}

impl Rosbag2Writer {
    /// A writer of a bag directory at `output`'s path.
    pub fn new(output: Output, options: WriteOptions) -> Result<Self> {
        let target = output.into_directory().ok_or_else(|| {
            Error::Output("a ROS 2 bag is a directory: write it to a path".to_owned())
        })?;
        Ok(Self {
            target,
            options: Some(options),
            writer: None,
            topics: HashMap::new(),
        })
    }

    fn writer(&mut self) -> Result<&mut Writer> {
        if self.writer.is_none() {
            let options = self
                .options
                .take()
                .ok_or_else(|| Error::Usage("the ROS 2 bag writer is finished".into()))?;
            self.writer = Some(Writer::create(&self.target, options)?);
        }
        self.writer
            .as_mut()
            .ok_or_else(|| Error::Usage("the ROS 2 bag writer is finished".into()))
    }
}

/// The topic a `cdr` channel becomes.
pub(crate) fn topic_of(channel: &Channel) -> (TopicMetadata, Definition) {
    let qos = channel
        .metadata
        .get(QOS_KEY)
        .and_then(|text| robolog_rosbag2::qos::parse_profiles(text).ok())
        .unwrap_or_default();
    let hash = channel
        .metadata
        .get(TYPE_HASH_KEY)
        .or_else(|| channel.metadata.get("type_description_hash"))
        .cloned()
        .unwrap_or_default();
    let definition = match &channel.schema {
        Some(s) if matches!(s.encoding.as_str(), "ros2msg" | "ros2idl") && !s.data.is_empty() => {
            Definition::Stored {
                encoding: s.encoding.clone(),
                text: String::from_utf8_lossy(&s.data).into_owned(),
            }
        }
        Some(s) => Definition::NotFound {
            encoding: s.encoding.clone(),
        },
        None => Definition::NotFound {
            encoding: String::new(),
        },
    };
    (
        TopicMetadata {
            name: channel.topic.clone(),
            type_name: channel.type_name().to_owned(),
            serialization_format: CDR.to_owned(),
            offered_qos_profiles: qos,
            type_description_hash: hash,
        },
        definition,
    )
}

impl LogWriter for Rosbag2Writer {
    fn format(&self) -> Format {
        Format::Rosbag2
    }

    fn check_channel(&self, channel: &Channel) -> std::result::Result<(), String> {
        if !channel.message_encoding.eq_ignore_ascii_case(CDR) {
            return Err(format!(
                "a ROS 2 bag holds CDR messages, not {}",
                channel.message_encoding
            ));
        }
        if let Some((other, _)) = self.topics.get(&channel.topic)
            && other != channel.type_name()
        {
            return Err(format!(
                "the topic already has type {other}; a ROS 2 bag has one type per topic"
            ));
        }
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<u32> {
        if let Err(why) = self.check_channel(channel) {
            return Err(Error::UnsupportedChannels {
                target: Format::Rosbag2,
                channels: vec![format!("{} ({why})", channel.topic)],
            });
        }
        if let Some((_, id)) = self.topics.get(&channel.topic) {
            return Ok(*id);
        }
        let (topic, definition) = topic_of(channel);
        let type_name = topic.type_name.clone();
        let id = self.writer()?.add_topic(topic, definition)?;
        self.topics.insert(channel.topic.clone(), (type_name, id));
        Ok(id)
    }

    fn write_message(&mut self, channel: u32, message: &Message) -> Result<()> {
        let publish = message.publish_time_ns.unwrap_or(message.log_time_ns);
        self.writer()?
            .write_published(channel, message.log_time_ns, publish, &message.data)?;
        Ok(())
    }

    fn write_attachment(&mut self, _attachment: &Attachment) -> Result<bool> {
        Ok(false)
    }

    /// Takes the distro of the `rosbag2` record (what rosbag2's MCAP storage and a migration
    /// to ROS 2 write) for metadata.yaml, when it comes before the first channel.
    fn write_metadata(&mut self, metadata: &Metadata) -> Result<bool> {
        if metadata.name == "rosbag2"
            && let Some(distro) = metadata.entries.get("ROS_DISTRO")
            && let Some(options) = self.options.take()
        {
            self.options = Some(options.ros_distro(distro.clone()));
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<Finished> {
        self.writer()?;
        let writer = self
            .writer
            .take()
            .ok_or_else(|| Error::Usage("the ROS 2 bag writer is finished".into()))?;
        writer.finish()?;
        let bytes = std::fs::read_dir(&self.target)?
            .filter_map(|e| e.ok()?.metadata().ok())
            .map(|m| m.len())
            .sum();
        Ok(Finished {
            bytes,
            data: None,
            warnings: Vec::new(),
        })
    }
}
