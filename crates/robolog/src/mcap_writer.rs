//! Writing MCAP from the model.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use robolog_framing::Bytes;
use robolog_mcap::WriteOptions;

use crate::encodings::ROS1;
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::writer::{Finished, LogWriter, Output};

/// The facade's MCAP defaults: the format crate's (zstd chunks, every index, CRCs), with
/// robolog named as the writing library.
pub(crate) fn default_options() -> WriteOptions {
    WriteOptions::new().library(concat!("robolog/", env!("CARGO_PKG_VERSION")))
}

enum State {
    /// Not started: the header (which names the profile) is written at the first message (or
    /// the end), once the channels are known; metadata records wait for it.
    Pending(Output),
    Open(Box<robolog_mcap::Writer<Output>>),
    Done,
}

/// Writes MCAP.
///
/// Channels keep their id and schemas theirs when free (so a bag converts with channel ids =
/// connection ids); schemas are shared between channels by content. An empty profile in the
/// options becomes `ros1` when every channel is a `ros1` channel. Messages without a publish
/// time get their log time, without a sequence number 0 (as upstream converters do).
/// An empty profile becomes `ros2` when every channel is a `cdr` channel.
pub struct McapWriter {
    state: State,
    options: WriteOptions,
    schemas: HashMap<(String, String, Bytes), u16>,
    schema_records: Vec<robolog_mcap::Schema<'static>>,
    channel_records: Vec<robolog_mcap::Channel<'static>>,
    used_channels: BTreeSet<u16>,
    /// Metadata records written before the header.
    pending_metadata: Vec<robolog_mcap::Metadata<'static>>,
    all_ros1: bool,
    all_cdr: bool,
    /// The inputs' profile ([`LogWriter::set_profile`]).
    inherited_profile: Option<String>,
}

impl std::fmt::Debug for McapWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapWriter")
            .field("channels", &self.channel_records.len())
            .field("schemas", &self.schema_records.len())
            .finish_non_exhaustive()
    }
}

impl McapWriter {
    /// A writer to `output` with `options` (see [`robolog_mcap::WriteOptions`]).
    pub fn new(output: Output, options: WriteOptions) -> Self {
        Self {
            state: State::Pending(output),
            options,
            schemas: HashMap::new(),
            schema_records: Vec::new(),
            channel_records: Vec::new(),
            used_channels: BTreeSet::new(),
            pending_metadata: Vec::new(),
            all_ros1: true,
            all_cdr: true,
            inherited_profile: None,
        }
    }

    fn writer(&mut self) -> Result<&mut robolog_mcap::Writer<Output>> {
        if let State::Pending(_) = self.state {
            let State::Pending(output) = std::mem::replace(&mut self.state, State::Done) else {
                return Err(Error::Usage("MCAP writer state".into()));
            };
            let mut options = self.options.clone();
            if let Some(profile) = self.inherited_profile.take()
                && options.get_profile().is_empty()
            {
                options = options.profile(profile);
            }
            if options.get_profile().is_empty() && !self.channel_records.is_empty() {
                if self.all_ros1 {
                    options = options.profile(ROS1);
                } else if self.all_cdr {
                    // What rosbag2 and rosbags require of an MCAP file.
                    options = options.profile("ros2");
                }
            }
            // Files stream their uncompressed chunks (one copy of each message less).
            let mut writer = if output.is_seekable() {
                robolog_mcap::Writer::new_seekable(output, options)?
            } else {
                robolog_mcap::Writer::new(output, options)?
            };
            for schema in &self.schema_records {
                writer.add_schema(schema)?;
            }
            for channel in &self.channel_records {
                writer.add_channel(channel)?;
            }
            for metadata in self.pending_metadata.drain(..) {
                writer.write_metadata(&metadata)?;
            }
            self.state = State::Open(Box::new(writer));
        }
        match &mut self.state {
            State::Open(writer) => Ok(writer),
            _ => Err(Error::Usage("the MCAP writer is finished".into())),
        }
    }

    /// The format crate's writer (started now if it was not), and the compression its chunks
    /// get, when it writes chunks: what [`crate::convert`] copies whole chunks into.
    pub(crate) fn chunk_target(
        &mut self,
    ) -> Result<Option<(&mut robolog_mcap::Writer<Output>, &'static str)>> {
        if self.options.get_chunk_size().is_none() {
            return Ok(None);
        }
        let compression = robolog_mcap::compression_name(self.options.get_compression());
        Ok(Some((self.writer()?, compression)))
    }

    fn schema_id(&mut self, channel: &Channel) -> Result<u16> {
        let Some(schema) = &channel.schema else {
            return Ok(0);
        };
        let key = (
            schema.name.clone(),
            schema.encoding.clone(),
            schema.data.clone(),
        );
        if let Some(&id) = self.schemas.get(&key) {
            return Ok(id);
        }
        let used: BTreeSet<u16> = self.schemas.values().copied().collect();
        let id = free_id(schema.id, &used, 1)
            .ok_or_else(|| Error::Usage("more than 65535 schemas".into()))?;
        let record = robolog_mcap::Schema {
            id,
            name: Cow::Owned(schema.name.clone()),
            encoding: Cow::Owned(schema.encoding.clone()),
            data: Cow::Owned(schema.data.to_vec()),
        };
        if let State::Open(writer) = &mut self.state {
            writer.add_schema(&record)?;
        }
        self.schema_records.push(record);
        self.schemas.insert(key, id);
        Ok(id)
    }
}

/// `wanted` when it fits in u16 and is free, otherwise the smallest free id from `first`.
fn free_id(wanted: u32, used: &BTreeSet<u16>, first: u16) -> Option<u16> {
    if let Ok(id) = u16::try_from(wanted)
        && id >= first
        && !used.contains(&id)
    {
        return Some(id);
    }
    (first..=u16::MAX).find(|id| !used.contains(id))
}

impl LogWriter for McapWriter {
    fn format(&self) -> Format {
        Format::Mcap
    }

    fn check_channel(&self, _channel: &Channel) -> std::result::Result<(), String> {
        Ok(())
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<u32> {
        let schema_id = self.schema_id(channel)?;
        let id = free_id(channel.id, &self.used_channels, 0)
            .ok_or_else(|| Error::Usage("more than 65536 channels".into()))?;
        let record = robolog_mcap::Channel {
            id,
            schema_id,
            topic: Cow::Owned(channel.topic.clone()),
            message_encoding: Cow::Owned(channel.message_encoding.clone()),
            metadata: channel
                .metadata
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), Cow::Owned(v.clone())))
                .collect::<BTreeMap<_, _>>(),
        };
        if let State::Open(writer) = &mut self.state {
            writer.add_channel(&record)?;
        }
        self.all_ros1 &= channel.message_encoding == ROS1;
        self.all_cdr &= channel.message_encoding == crate::encodings::CDR;
        self.used_channels.insert(id);
        self.channel_records.push(record);
        Ok(u32::from(id))
    }

    fn write_message(&mut self, channel: u32, message: &Message) -> Result<()> {
        let channel_id = u16::try_from(channel)
            .map_err(|_| Error::Usage(format!("unknown MCAP channel {channel}")))?;
        self.writer()?.write_message(&robolog_mcap::Message {
            channel_id,
            sequence: message.sequence.unwrap_or(0),
            log_time: message.log_time_ns,
            publish_time: message.publish_time_ns.unwrap_or(message.log_time_ns),
            data: &message.data,
        })?;
        Ok(())
    }

    fn write_attachment(&mut self, attachment: &Attachment) -> Result<bool> {
        self.writer()?.write_attachment(&robolog_mcap::Attachment {
            log_time: attachment.log_time_ns,
            create_time: attachment.create_time_ns,
            name: Cow::Borrowed(&attachment.name),
            media_type: Cow::Borrowed(&attachment.media_type),
            data: Cow::Borrowed(&attachment.data),
            crc: 0,
        })?;
        Ok(true)
    }

    fn write_metadata(&mut self, metadata: &Metadata) -> Result<bool> {
        let record = robolog_mcap::Metadata {
            name: Cow::Owned(metadata.name.clone()),
            metadata: metadata
                .entries
                .iter()
                .map(|(k, v)| (Cow::Owned(k.clone()), Cow::Owned(v.clone())))
                .collect(),
        };
        match &mut self.state {
            State::Pending(_) => self.pending_metadata.push(record),
            _ => self.writer()?.write_metadata(&record)?,
        }
        Ok(true)
    }

    fn as_mcap(&mut self) -> Option<&mut McapWriter> {
        Some(self)
    }

    fn set_profile(&mut self, profile: &str) {
        if matches!(self.state, State::Pending(_)) {
            self.inherited_profile = Some(profile.to_owned());
        }
    }

    fn finish(&mut self) -> Result<Finished> {
        self.writer()?;
        match std::mem::replace(&mut self.state, State::Done) {
            State::Open(writer) => writer.finish()?.finish(),
            _ => Err(Error::Usage("the MCAP writer is finished".into())),
        }
    }
}
