//! Writing ROS bags 2.0 from the model: only `ros1` channels, with their connection header
//! rebuilt from the schema and the channel metadata.

use std::collections::BTreeSet;

use robolog_rosbag::{Connection, WriteOptions};

use crate::encodings::{LATCHING, MD5SUM, ROS1, ROS1MSG};
use crate::error::{Error, Result};
use crate::format::Format;
use crate::model::{Attachment, Channel, Message, Metadata};
use crate::writer::{Finished, LogWriter, Output};

/// Writes ROS bags (format 2.0).
///
/// A bag holds ROS 1 messages only: channels need message encoding `ros1` and a `ros1msg`
/// schema (the type name and full definition). The connection header gets `topic`, `type`,
/// `md5sum` (the channel's `md5sum` metadata, or computed from the definition with
/// `robolog-msg` when it is missing), `message_definition`, then `callerid` and `latching`
/// (`true`/`false` become `1`/`0`) and any other channel metadata as extra fields. Connection
/// ids are the channel ids when free.
///
/// Bags have no publish times, sequence numbers, attachments or metadata records: those are
/// dropped ([`LogWriter::write_attachment`] and [`LogWriter::write_metadata`] return
/// `Ok(false)`). Record times must be before 2106 (32-bit seconds).
pub struct BagWriter {
    writer: Option<robolog_rosbag::Writer<Output>>,
    used: BTreeSet<u32>,
}

impl std::fmt::Debug for BagWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BagWriter")
            .field("connections", &self.used.len())
            .finish_non_exhaustive()
    }
}

impl BagWriter {
    /// A writer to `output` (a file, memory or a seekable stream: bags need to seek back once,
    /// at the end).
    pub fn new(output: Output, options: WriteOptions) -> Result<Self> {
        if !output.is_seekable() {
            return Err(Error::Output(
                "a ROS bag cannot be written to a stream: its header is completed at the end; write to a file or a seekable stream"
                    .into(),
            ));
        }
        Ok(Self {
            writer: Some(robolog_rosbag::Writer::with_options(output, options)?),
            used: BTreeSet::new(),
        })
    }

    fn writer(&mut self) -> Result<&mut robolog_rosbag::Writer<Output>> {
        self.writer
            .as_mut()
            .ok_or_else(|| Error::Usage("the bag writer is finished".into()))
    }
}

/// The connection for `channel` with id `id`.
pub(crate) fn connection(id: u32, channel: &Channel) -> Result<Connection> {
    let Some(schema) = channel.schema.as_deref() else {
        return Err(unsupported(channel, "no schema"));
    };
    let definition = std::str::from_utf8(&schema.data)
        .map_err(|_| unsupported(channel, "its definition is not UTF-8 text"))?;
    let md5 = match channel.metadata.get(MD5SUM) {
        Some(md5) if is_md5(md5) => md5.clone(),
        _ => compute_md5(channel, &schema.name, definition)?,
    };
    let mut connection = Connection::new(id, &channel.topic, &schema.name, &md5, definition);
    for (key, value) in &channel.metadata {
        match key.as_str() {
            MD5SUM | "type" | "message_definition" => {}
            "topic" if *value == channel.topic => {}
            LATCHING => {
                let value = match value.as_str() {
                    "true" => "1",
                    "false" => "0",
                    other => other,
                };
                connection = connection.with_field(LATCHING, value);
            }
            _ => connection = connection.with_field(key, value.as_bytes()),
        }
    }
    Ok(connection)
}

fn is_md5(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(feature = "ros1")]
fn compute_md5(channel: &Channel, type_name: &str, definition: &str) -> Result<String> {
    let failed = |source| Error::Definition {
        topic: channel.topic.clone(),
        type_name: type_name.to_owned(),
        source: Box::new(source),
    };
    let name = robolog_msg::TypeName::parse(type_name).map_err(failed)?;
    robolog_msg::Registry::from_bundle(&name, definition, robolog_msg::Dialect::Ros1)
        .and_then(|registry| registry.md5(&name))
        .map_err(failed)
}

#[cfg(not(feature = "ros1"))]
fn compute_md5(channel: &Channel, _type_name: &str, _definition: &str) -> Result<String> {
    Err(unsupported(
        channel,
        "it has no md5sum metadata, and computing one needs the `ros1` cargo feature",
    ))
}

fn unsupported(channel: &Channel, why: &str) -> Error {
    Error::UnsupportedChannels {
        target: Format::Bag,
        channels: vec![format!(
            "{} ({}: {why})",
            channel.topic, channel.message_encoding
        )],
    }
}

impl LogWriter for BagWriter {
    fn format(&self) -> Format {
        Format::Bag
    }

    fn check_channel(&self, channel: &Channel) -> std::result::Result<(), String> {
        if channel.message_encoding != ROS1 {
            return Err("a bag holds only ROS 1 (ros1) messages".into());
        }
        match &channel.schema {
            Some(s) if s.encoding == ROS1MSG => Ok(()),
            Some(s) => Err(format!(
                "its schema is {:?}, a bag needs a ros1msg definition",
                s.encoding
            )),
            None => Err("it has no schema (a bag needs the type and definition)".into()),
        }
    }

    fn add_channel(&mut self, channel: &Channel) -> Result<u32> {
        if let Err(why) = self.check_channel(channel) {
            return Err(unsupported(channel, &why));
        }
        let id = if self.used.contains(&channel.id) {
            (0..=u32::MAX)
                .find(|id| !self.used.contains(id))
                .ok_or_else(|| Error::Usage("no connection id left".into()))?
        } else {
            channel.id
        };
        let connection = connection(id, channel)?;
        self.writer()?.insert_connection(connection)?;
        self.used.insert(id);
        Ok(id)
    }

    fn write_message(&mut self, channel: u32, message: &Message) -> Result<()> {
        self.writer()?
            .write(channel, message.log_time_ns, &message.data)
            .map_err(|e| match e {
                robolog_rosbag::Error::TimeOutOfRange { time_ns } => Error::TimeOutOfRange {
                    topic: message.channel.topic.clone(),
                    time_ns,
                    target: Format::Bag,
                    reason: "bag times have 32-bit seconds (until 2106-02-07)",
                },
                other => other.into(),
            })
    }

    fn write_attachment(&mut self, _attachment: &Attachment) -> Result<bool> {
        Ok(false)
    }

    fn write_metadata(&mut self, _metadata: &Metadata) -> Result<bool> {
        Ok(false)
    }

    fn finish(&mut self) -> Result<Finished> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| Error::Usage("the bag writer is finished".into()))?;
        writer.finish()?.finish()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use super::*;
    use crate::model::Schema;

    fn channel(metadata: &[(&str, &str)]) -> Channel {
        Channel {
            id: 3,
            topic: "/chatter".into(),
            message_encoding: "ros1".into(),
            schema: Some(Arc::new(Schema {
                id: 1,
                name: "std_msgs/String".into(),
                encoding: "ros1msg".into(),
                data: robolog_framing::Bytes::from_static(b"string data\n"),
            })),
            metadata: metadata
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn connection_header_from_metadata() {
        let c = connection(
            3,
            &channel(&[
                ("callerid", "/talker"),
                ("latching", "true"),
                ("md5sum", "992ce8a1687cec8c8bd883ec73ca41d1"),
                ("topic", "/chatter"),
            ]),
        )
        .unwrap();
        assert_eq!(c.md5sum, "992ce8a1687cec8c8bd883ec73ca41d1");
        assert_eq!(c.callerid.as_deref(), Some("/talker"));
        assert!(c.latching);
        assert_eq!(c.field("latching"), Some(&b"1"[..]));
        let names: Vec<&str> = c.fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "topic",
                "type",
                "md5sum",
                "message_definition",
                "callerid",
                "latching"
            ]
        );
    }

    #[cfg(feature = "ros1")]
    #[test]
    fn missing_md5_is_computed() {
        // std_msgs/String's md5sum as genmsg computes it (testdata/msg/std_msgs_String.md5).
        let c = connection(0, &channel(&[])).unwrap();
        assert_eq!(c.md5sum, "992ce8a1687cec8c8bd883ec73ca41d1");
        let c = connection(0, &channel(&[("md5sum", "*")])).unwrap();
        assert_eq!(c.md5sum, "992ce8a1687cec8c8bd883ec73ca41d1");
    }
}
