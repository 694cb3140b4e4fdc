//! Writing format 1.2 (for tests and for tools that still need it).

use std::io::{Seek, SeekFrom, Write};

use crate::error::{Error, Result};
use crate::format::framing::{
    OP_FILE_HEADER, OP_INDEX_DATA, OP_MSG_DATA, OP_MSG_DEF, build_header, write_record,
};
use crate::format::time::RosTime;
use crate::format::version::Version;

#[derive(Debug)]
struct Topic {
    topic: String,
    message_type: String,
    md5sum: String,
    definition: String,
    /// (time, position): the first entry points at the topic's MSG_DEF record.
    entries: Vec<(RosTime, u64)>,
}

/// Writes a ROS bag 1.2 with a file header and a per-topic index (ver 0, absolute offsets), as
/// the ROS 0.11 to 1.0 recorders did; the ros_comm 1.2 readers accept it.
///
/// ```
/// use std::io::Cursor;
/// use robolog_rosbag::{Bag, V12Writer, Version};
///
/// let mut writer = V12Writer::new(Cursor::new(Vec::new()))?;
/// let topic = writer.add_topic("/chatter", "std_msgs/String", "992ce8a1687cec8c8bd883ec73ca41d1", "string data\n")?;
/// writer.write(topic, 1_000_000_000, b"\x02\0\0\0hi")?;
/// let bag = Bag::open(writer.finish()?.into_inner())?;
/// assert_eq!((bag.version(), bag.summary().message_count), (Version::V1_2, 1));
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
#[derive(Debug)]
pub struct V12Writer<W: Write + Seek> {
    out: W,
    origin: u64,
    pos: u64,
    topics: Vec<Topic>,
    /// Topic ids in order of their first message (the order of the index records).
    first_use: Vec<usize>,
}

const FILE_HEADER_LEN: usize = 4096;

impl<W: Write + Seek> V12Writer<W> {
    /// Starts a 1.2 bag at the current position of `out`.
    pub fn new(mut out: W) -> Result<Self> {
        let origin = out.stream_position()?;
        let mut writer = Self {
            out,
            origin,
            pos: 0,
            topics: Vec::new(),
            first_use: Vec::new(),
        };
        writer.emit(Version::V1_2.line())?;
        let header = file_header(0)?;
        writer.emit(&header)?;
        Ok(writer)
    }

    fn emit(&mut self, bytes: &[u8]) -> Result<()> {
        self.out.write_all(bytes)?;
        self.pos += bytes.len() as u64;
        Ok(())
    }

    /// Declares a topic and returns its id for [`V12Writer::write`].
    pub fn add_topic(
        &mut self,
        topic: &str,
        message_type: &str,
        md5sum: &str,
        definition: &str,
    ) -> Result<u32> {
        if self.topics.iter().any(|t| t.topic == topic) {
            return Err(Error::InvalidInput(format!(
                "topic {topic} was already added"
            )));
        }
        self.topics.push(Topic {
            topic: topic.to_owned(),
            message_type: message_type.to_owned(),
            md5sum: md5sum.to_owned(),
            definition: definition.to_owned(),
            entries: Vec::new(),
        });
        Ok(self.topics.len() as u32 - 1)
    }

    /// Writes a message on topic `topic` (an id from [`V12Writer::add_topic`]); the topic's
    /// MSG_DEF record goes right before its first message.
    pub fn write(&mut self, topic: u32, time_ns: u64, data: &[u8]) -> Result<()> {
        let time = RosTime::from_ns(time_ns)?;
        let index = topic as usize;
        let t = self
            .topics
            .get(index)
            .ok_or(Error::UnknownConnection { conn: topic })?;
        let mut record = Vec::new();
        let first = t.entries.is_empty();
        if first {
            let header = build_header(&[
                (b"op", &[OP_MSG_DEF]),
                (b"topic", t.topic.as_bytes()),
                (b"md5", t.md5sum.as_bytes()),
                (b"type", t.message_type.as_bytes()),
                (b"def", t.definition.as_bytes()),
            ])?;
            write_record(&mut record, &header, b"")?;
        }
        let header = build_header(&[
            (b"op", &[OP_MSG_DATA]),
            (b"topic", t.topic.as_bytes()),
            (b"md5", t.md5sum.as_bytes()),
            (b"type", t.message_type.as_bytes()),
            (b"sec", &time.sec.to_le_bytes()),
            (b"nsec", &time.nsec.to_le_bytes()),
        ])?;
        write_record(&mut record, &header, data)?;
        let pos = self.pos;
        self.emit(&record)?;
        if first {
            self.first_use.push(index);
        }
        self.topics[index].entries.push((time, pos));
        Ok(())
    }

    /// Writes the per-topic index and fills in the file header. Returns the output,
    /// positioned after the bag.
    pub fn finish(mut self) -> Result<W> {
        let index_pos = self.pos;
        let mut index = Vec::new();
        for &i in &self.first_use {
            let t = &self.topics[i];
            let count = u32::try_from(t.entries.len()).map_err(|_| Error::TooLarge {
                what: "topic index",
                len: t.entries.len() as u64,
            })?;
            let header = build_header(&[
                (b"op", &[OP_INDEX_DATA]),
                (b"ver", &0u32.to_le_bytes()),
                (b"topic", t.topic.as_bytes()),
                (b"type", t.message_type.as_bytes()),
                (b"count", &count.to_le_bytes()),
            ])?;
            // In write order, so that the first entry keeps pointing at the MSG_DEF record.
            let mut data = Vec::with_capacity(16 * t.entries.len());
            for &(time, pos) in &t.entries {
                data.extend_from_slice(&time.to_le_bytes());
                data.extend_from_slice(&pos.to_le_bytes());
            }
            write_record(&mut index, &header, &data)?;
        }
        self.emit(&index)?;
        let header = file_header(index_pos)?;
        let line = Version::V1_2.line().len() as u64;
        self.out.seek(SeekFrom::Start(self.origin + line))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::Start(self.origin + self.pos))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn file_header(index_pos: u64) -> Result<Vec<u8>> {
    let header = build_header(&[
        (b"op", &[OP_FILE_HEADER]),
        (b"index_pos", &index_pos.to_le_bytes()),
    ])?;
    let padding = vec![b' '; FILE_HEADER_LEN.saturating_sub(header.len())];
    let mut record = Vec::new();
    write_record(&mut record, &header, &padding)?;
    Ok(record)
}
