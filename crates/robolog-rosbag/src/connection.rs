//! Connections: what the messages of one publisher (or one topic) are.

use crate::error::{Error, RecordKind, Result};
use crate::format::fields::{for_each_field, write_field};

/// A connection: the messages of one publisher on one topic (ROS C++ recorder), or of one
/// topic (Python writers, format 1.2), with the type information the publisher announced.
///
/// Several connections may share a topic; key by [`Connection::id`], never by topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Connection {
    /// The connection id messages refer to. In format 1.2, a synthetic id (0, 1, … in order of
    /// first appearance of each distinct topic, type, md5 and definition).
    pub id: u32,
    /// The topic the bag stores the messages under (the CONNECTION record's `topic`).
    pub topic: String,
    /// The message type, `pkg/Name`.
    pub message_type: String,
    /// The ROS 1 md5sum of the type (32 hex digits).
    pub md5sum: String,
    /// The full message definition text (possibly empty).
    pub message_definition: String,
    /// The publishing node, when recorded.
    pub callerid: Option<String>,
    /// True when the publisher was latching (`latching=1`; an empty value counts as false).
    pub latching: bool,
    /// Every field of the connection header in file order, including the ones above and any
    /// others, so that they can be copied through when rewriting.
    pub fields: Vec<(String, Vec<u8>)>,
}

impl Connection {
    /// A connection with the four standard fields, written in the order the ros_comm Python
    /// writer uses (`topic`, `type`, `md5sum`, `message_definition`).
    pub fn new(
        id: u32,
        topic: &str,
        message_type: &str,
        md5sum: &str,
        message_definition: &str,
    ) -> Self {
        let fields = vec![
            ("topic".to_owned(), topic.as_bytes().to_vec()),
            ("type".to_owned(), message_type.as_bytes().to_vec()),
            ("md5sum".to_owned(), md5sum.as_bytes().to_vec()),
            (
                "message_definition".to_owned(),
                message_definition.as_bytes().to_vec(),
            ),
        ];
        Self {
            id,
            topic: topic.to_owned(),
            message_type: message_type.to_owned(),
            md5sum: md5sum.to_owned(),
            message_definition: message_definition.to_owned(),
            callerid: None,
            latching: false,
            fields,
        }
    }

    /// Builds a connection from connection-header fields (which must include `type` and
    /// `md5sum`), keeping their order. `topic` is the topic the bag stores it under.
    pub fn from_fields(id: u32, topic: &str, fields: Vec<(String, Vec<u8>)>) -> Result<Self> {
        let get = |name: &str| {
            fields
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
        };
        let missing = |name: &str| {
            Error::InvalidInput(format!(
                "connection {id} on {topic}: the connection header has no {name} field"
            ))
        };
        Ok(Self {
            id,
            topic: topic.to_owned(),
            message_type: get("type").ok_or_else(|| missing("type"))?,
            md5sum: get("md5sum").ok_or_else(|| missing("md5sum"))?,
            message_definition: get("message_definition").unwrap_or_default(),
            callerid: get("callerid"),
            latching: get("latching").as_deref() == Some("1"),
            fields,
        })
    }

    /// Returns this connection with an extra connection-header field appended (for example
    /// `callerid` or `latching`), keeping the typed fields in step.
    pub fn with_field(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
        let value = value.into();
        match name {
            "callerid" => self.callerid = Some(String::from_utf8_lossy(&value).into_owned()),
            "latching" => self.latching = value == b"1",
            "type" => self.message_type = String::from_utf8_lossy(&value).into_owned(),
            "md5sum" => self.md5sum = String::from_utf8_lossy(&value).into_owned(),
            "message_definition" => {
                self.message_definition = String::from_utf8_lossy(&value).into_owned();
            }
            _ => {}
        }
        self.fields.retain(|(n, _)| n != name);
        self.fields.push((name.to_owned(), value));
        self
    }

    /// The raw value of a connection-header field.
    pub fn field(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// Parses the data of a CONNECTION record (a header block) at absolute `offset`.
    pub(crate) fn parse(id: u32, record_topic: &[u8], data: &[u8], offset: u64) -> Result<Self> {
        let mut fields = Vec::with_capacity(6);
        for_each_field(data, offset, RecordKind::Connection, |f| {
            fields.push((
                String::from_utf8_lossy(f.name).into_owned(),
                f.value.to_vec(),
            ));
            Ok(())
        })?;
        let topic = String::from_utf8_lossy(record_topic);
        Self::from_fields(id, &topic, fields).map_err(|e| match e {
            Error::InvalidInput(message) => {
                Error::malformed(RecordKind::Connection, offset, message)
            }
            other => other,
        })
    }

    /// The connection header block, fields in order.
    pub(crate) fn encode_fields(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        for (name, value) in &self.fields {
            write_field(&mut out, name.as_bytes(), value)?;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_keeps_every_field_and_falls_back_to_the_record_topic() {
        let c = Connection::new(3, "/a", "std_msgs/String", "992c", "string data\n")
            .with_field("callerid", "/talker")
            .with_field("latching", "")
            .with_field("extra", vec![0u8, b'=', 1]);
        let data = c.encode_fields().unwrap();
        let back = Connection::parse(3, b"/a", &data, 0).unwrap();
        assert_eq!(back, c);
        assert!(!back.latching);
        assert_eq!(back.field("extra"), Some(&[0u8, b'=', 1][..]));
        // C++ connections from a publisher header have no topic field.
        let mut no_topic = c.clone();
        no_topic.fields.retain(|(n, _)| n != "topic");
        let back = Connection::parse(3, b"/a", &no_topic.encode_fields().unwrap(), 0).unwrap();
        assert_eq!(back.topic, "/a");
        let mut no_type = c;
        no_type.fields.retain(|(n, _)| n != "type");
        let err = Connection::parse(3, b"/a", &no_type.encode_fields().unwrap(), 77).unwrap_err();
        assert_eq!(err.offset(), Some(77));
    }
}
