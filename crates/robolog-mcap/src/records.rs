//! The MCAP records as borrowed structs: what the sans-io parser produces and the writer consumes.
//!
//! Strings and byte fields borrow from the input (`Cow::Borrowed`) when parsed and can be turned
//! into owned `'static` values with `into_owned` when they must outlive the input (the summary of
//! an indexed reader keeps its schemas and channels that way).

use std::borrow::Cow;
use std::collections::BTreeMap;

/// Record opcodes of the ratified format.
pub mod op {
    /// Header: the first record.
    pub const HEADER: u8 = 0x01;
    /// Footer: the last record.
    pub const FOOTER: u8 = 0x02;
    /// Schema.
    pub const SCHEMA: u8 = 0x03;
    /// Channel.
    pub const CHANNEL: u8 = 0x04;
    /// Message.
    pub const MESSAGE: u8 = 0x05;
    /// Chunk.
    pub const CHUNK: u8 = 0x06;
    /// MessageIndex (after a chunk).
    pub const MESSAGE_INDEX: u8 = 0x07;
    /// ChunkIndex (summary).
    pub const CHUNK_INDEX: u8 = 0x08;
    /// Attachment.
    pub const ATTACHMENT: u8 = 0x09;
    /// AttachmentIndex (summary).
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    /// Statistics (summary).
    pub const STATISTICS: u8 = 0x0B;
    /// Metadata.
    pub const METADATA: u8 = 0x0C;
    /// MetadataIndex (summary).
    pub const METADATA_INDEX: u8 = 0x0D;
    /// SummaryOffset (summary offset section).
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    /// DataEnd: the end of the data section.
    pub const DATA_END: u8 = 0x0F;
}

/// The 8-byte magic at both ends of a file (`\x89MCAP0\r\n`).
pub const MAGIC: [u8; 8] = [0x89, b'M', b'C', b'A', b'P', b'0', b'\r', b'\n'];

/// Bytes of the opcode and length that precede every record's content.
pub const RECORD_PREFIX: u64 = 9;

/// Bytes of the whole Footer record (prefix and 20 bytes of content).
pub const FOOTER_RECORD_LEN: u64 = 29;

/// A string-to-string map (channel metadata, Metadata records). Duplicate keys keep the last.
pub type StringMap<'a> = BTreeMap<Cow<'a, str>, Cow<'a, str>>;

/// The name of a record kind for messages and errors ("Schema", "Chunk", "opcode 0x80").
pub fn record_name(opcode: u8) -> &'static str {
    match opcode {
        op::HEADER => "Header",
        op::FOOTER => "Footer",
        op::SCHEMA => "Schema",
        op::CHANNEL => "Channel",
        op::MESSAGE => "Message",
        op::CHUNK => "Chunk",
        op::MESSAGE_INDEX => "MessageIndex",
        op::CHUNK_INDEX => "ChunkIndex",
        op::ATTACHMENT => "Attachment",
        op::ATTACHMENT_INDEX => "AttachmentIndex",
        op::STATISTICS => "Statistics",
        op::METADATA => "Metadata",
        op::METADATA_INDEX => "MetadataIndex",
        op::SUMMARY_OFFSET => "SummaryOffset",
        op::DATA_END => "DataEnd",
        0x80..=0xFF => "private record",
        _ => "unknown record",
    }
}

fn own_map(map: StringMap<'_>) -> StringMap<'static> {
    map.into_iter()
        .map(|(k, v)| (Cow::Owned(k.into_owned()), Cow::Owned(v.into_owned())))
        .collect()
}

/// Header (0x01): the first record of a file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header<'a> {
    /// Profile: `""`, `ros1`, `ros2` or another.
    pub profile: Cow<'a, str>,
    /// Free-form identification of the writing library.
    pub library: Cow<'a, str>,
}

impl Header<'_> {
    /// A copy that owns its strings.
    pub fn into_owned(self) -> Header<'static> {
        Header {
            profile: Cow::Owned(self.profile.into_owned()),
            library: Cow::Owned(self.library.into_owned()),
        }
    }
}

/// Footer (0x02): the last record, pointing at the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footer {
    /// File offset of the first summary record, 0 when there is no summary.
    pub summary_start: u64,
    /// File offset of the first SummaryOffset record, 0 when there are none.
    pub summary_offset_start: u64,
    /// CRC-32 from the end of DataEnd through the Footer's `summary_offset_start`; 0 = not
    /// computed.
    pub summary_crc: u32,
}

/// Schema (0x03): how the messages of the channels that use it are described.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema<'a> {
    /// Id, never 0 (a schema with id 0 is invalid and ignored by readers).
    pub id: u16,
    /// Type name, e.g. `std_msgs/String`.
    pub name: Cow<'a, str>,
    /// Schema encoding, e.g. `ros1msg`; `""` means no schema.
    pub encoding: Cow<'a, str>,
    /// The schema itself.
    pub data: Cow<'a, [u8]>,
}

impl Schema<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> Schema<'static> {
        Schema {
            id: self.id,
            name: Cow::Owned(self.name.into_owned()),
            encoding: Cow::Owned(self.encoding.into_owned()),
            data: Cow::Owned(self.data.into_owned()),
        }
    }
}

/// Channel (0x04): a stream of messages on one topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Channel<'a> {
    /// Id (0 is allowed).
    pub id: u16,
    /// Schema id, 0 for schemaless channels.
    pub schema_id: u16,
    /// Topic.
    pub topic: Cow<'a, str>,
    /// Message encoding, e.g. `ros1`, `cdr`, `json`.
    pub message_encoding: Cow<'a, str>,
    /// Free-form metadata (ROS 1: `callerid`, `latching`, `md5sum`).
    pub metadata: StringMap<'a>,
}

impl Channel<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> Channel<'static> {
        Channel {
            id: self.id,
            schema_id: self.schema_id,
            topic: Cow::Owned(self.topic.into_owned()),
            message_encoding: Cow::Owned(self.message_encoding.into_owned()),
            metadata: own_map(self.metadata),
        }
    }
}

/// Message (0x05): one message, its payload borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The channel it was published on.
    pub channel_id: u16,
    /// Sequence number (0 if unused).
    pub sequence: u32,
    /// Recording time, nanoseconds.
    pub log_time: u64,
    /// Publishing time, nanoseconds.
    pub publish_time: u64,
    /// The serialized message.
    pub data: &'a [u8],
}

/// Chunk (0x06): a (compressed) run of Schema, Channel and Message records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// Earliest log time in the chunk (0 when it has no messages).
    pub message_start_time: u64,
    /// Latest log time in the chunk (0 when it has no messages).
    pub message_end_time: u64,
    /// Size of the records after decompression.
    pub uncompressed_size: u64,
    /// CRC-32 of the decompressed records; 0 = not computed.
    pub uncompressed_crc: u32,
    /// `""`, `lz4` or `zstd`.
    pub compression: &'a str,
    /// The (compressed) records.
    pub records: &'a [u8],
}

/// MessageIndex (0x07): where one channel's messages are inside the preceding chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageIndex {
    /// The channel.
    pub channel_id: u16,
    /// `(log_time, offset into the uncompressed chunk records)`, in message order.
    pub records: Vec<(u64, u64)>,
}

/// ChunkIndex (0x08): where a chunk is and what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkIndex<'a> {
    /// Earliest log time in the chunk.
    pub message_start_time: u64,
    /// Latest log time in the chunk.
    pub message_end_time: u64,
    /// File offset of the Chunk record's opcode.
    pub chunk_start_offset: u64,
    /// Length of the whole Chunk record, prefix included.
    pub chunk_length: u64,
    /// File offset of each channel's MessageIndex record; empty = no message index.
    pub message_index_offsets: BTreeMap<u16, u64>,
    /// Total bytes of the MessageIndex records after the chunk.
    pub message_index_length: u64,
    /// `""`, `lz4` or `zstd`.
    pub compression: Cow<'a, str>,
    /// Length of the chunk's `records` field.
    pub compressed_size: u64,
    /// Size of the records after decompression.
    pub uncompressed_size: u64,
}

impl ChunkIndex<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> ChunkIndex<'static> {
        // A summary holds one chunk index per chunk, nearly all naming the same codec: the
        // names MCAP defines cost no allocation.
        let compression = match &*self.compression {
            "" => Cow::Borrowed(""),
            "lz4" => Cow::Borrowed("lz4"),
            "zstd" => Cow::Borrowed("zstd"),
            other => Cow::Owned(other.to_owned()),
        };
        ChunkIndex {
            compression,
            message_index_offsets: self.message_index_offsets,
            ..self
        }
    }
}

/// Attachment (0x09): a named file stored beside the messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment<'a> {
    /// Time of recording.
    pub log_time: u64,
    /// Time of creation (0 if unknown).
    pub create_time: u64,
    /// File name.
    pub name: Cow<'a, str>,
    /// MIME type.
    pub media_type: Cow<'a, str>,
    /// The file's bytes.
    pub data: Cow<'a, [u8]>,
    /// CRC-32 of the content before it; 0 = not computed. Ignored by the writer, which computes it.
    pub crc: u32,
}

impl Attachment<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> Attachment<'static> {
        Attachment {
            name: Cow::Owned(self.name.into_owned()),
            media_type: Cow::Owned(self.media_type.into_owned()),
            data: Cow::Owned(self.data.into_owned()),
            ..self
        }
    }
}

/// AttachmentIndex (0x0A): where an attachment is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachmentIndex<'a> {
    /// File offset of the Attachment record.
    pub offset: u64,
    /// Length of the whole Attachment record, prefix included.
    pub length: u64,
    /// Time of recording.
    pub log_time: u64,
    /// Time of creation.
    pub create_time: u64,
    /// Bytes of attachment data.
    pub data_size: u64,
    /// File name.
    pub name: Cow<'a, str>,
    /// MIME type.
    pub media_type: Cow<'a, str>,
}

impl AttachmentIndex<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> AttachmentIndex<'static> {
        AttachmentIndex {
            name: Cow::Owned(self.name.into_owned()),
            media_type: Cow::Owned(self.media_type.into_owned()),
            ..self
        }
    }
}

/// Statistics (0x0B): counts and the time range of the file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Statistics {
    /// Messages in the file.
    pub message_count: u64,
    /// Unique schema ids (not counting 0).
    pub schema_count: u16,
    /// Unique channel ids.
    pub channel_count: u32,
    /// Attachments.
    pub attachment_count: u32,
    /// Metadata records.
    pub metadata_count: u32,
    /// Chunks.
    pub chunk_count: u32,
    /// Earliest log time (0 without messages).
    pub message_start_time: u64,
    /// Latest log time (0 without messages).
    pub message_end_time: u64,
    /// Messages per channel; empty = not available.
    pub channel_message_counts: BTreeMap<u16, u64>,
}

/// Metadata (0x0C): a named string map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata<'a> {
    /// Name.
    pub name: Cow<'a, str>,
    /// The entries.
    pub metadata: StringMap<'a>,
}

impl Metadata<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> Metadata<'static> {
        Metadata {
            name: Cow::Owned(self.name.into_owned()),
            metadata: own_map(self.metadata),
        }
    }
}

/// MetadataIndex (0x0D): where a Metadata record is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataIndex<'a> {
    /// File offset of the Metadata record.
    pub offset: u64,
    /// Length of the whole record, prefix included.
    pub length: u64,
    /// Name of the Metadata record.
    pub name: Cow<'a, str>,
}

impl MetadataIndex<'_> {
    /// A copy that owns its data.
    pub fn into_owned(self) -> MetadataIndex<'static> {
        MetadataIndex {
            name: Cow::Owned(self.name.into_owned()),
            ..self
        }
    }
}

/// SummaryOffset (0x0E): where one group of summary records is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryOffset {
    /// The opcode of the records in the group.
    pub group_opcode: u8,
    /// File offset of the group's first record.
    pub group_start: u64,
    /// Bytes of the group.
    pub group_length: u64,
}

/// DataEnd (0x0F): the end of the data section.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DataEnd {
    /// CRC-32 of every byte before the DataEnd record; 0 = not computed.
    pub data_section_crc: u32,
}

/// One parsed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record<'a> {
    /// Header.
    Header(Header<'a>),
    /// Footer.
    Footer(Footer),
    /// Schema.
    Schema(Schema<'a>),
    /// Channel.
    Channel(Channel<'a>),
    /// Message.
    Message(Message<'a>),
    /// Chunk (the linear readers flatten chunks and never yield this).
    Chunk(Chunk<'a>),
    /// MessageIndex.
    MessageIndex(MessageIndex),
    /// ChunkIndex.
    ChunkIndex(ChunkIndex<'a>),
    /// Attachment.
    Attachment(Attachment<'a>),
    /// AttachmentIndex.
    AttachmentIndex(AttachmentIndex<'a>),
    /// Statistics.
    Statistics(Statistics),
    /// Metadata.
    Metadata(Metadata<'a>),
    /// MetadataIndex.
    MetadataIndex(MetadataIndex<'a>),
    /// SummaryOffset.
    SummaryOffset(SummaryOffset),
    /// DataEnd.
    DataEnd(DataEnd),
    /// A private (0x80–0xFF) or not yet defined record, handed over unparsed.
    Unknown {
        /// The opcode.
        opcode: u8,
        /// The record content.
        content: &'a [u8],
    },
}

impl Record<'_> {
    /// The record's opcode.
    pub fn opcode(&self) -> u8 {
        match self {
            Record::Header(_) => op::HEADER,
            Record::Footer(_) => op::FOOTER,
            Record::Schema(_) => op::SCHEMA,
            Record::Channel(_) => op::CHANNEL,
            Record::Message(_) => op::MESSAGE,
            Record::Chunk(_) => op::CHUNK,
            Record::MessageIndex(_) => op::MESSAGE_INDEX,
            Record::ChunkIndex(_) => op::CHUNK_INDEX,
            Record::Attachment(_) => op::ATTACHMENT,
            Record::AttachmentIndex(_) => op::ATTACHMENT_INDEX,
            Record::Statistics(_) => op::STATISTICS,
            Record::Metadata(_) => op::METADATA,
            Record::MetadataIndex(_) => op::METADATA_INDEX,
            Record::SummaryOffset(_) => op::SUMMARY_OFFSET,
            Record::DataEnd(_) => op::DATA_END,
            Record::Unknown { opcode, .. } => *opcode,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk_index(compression: &str) -> ChunkIndex<'_> {
        ChunkIndex {
            message_start_time: 1,
            message_end_time: 2,
            chunk_start_offset: 8,
            chunk_length: 100,
            message_index_offsets: BTreeMap::from([(1, 108)]),
            message_index_length: 40,
            compression: Cow::Borrowed(compression),
            compressed_size: 50,
            uncompressed_size: 70,
        }
    }

    #[test]
    fn owned_chunk_indexes_keep_every_field_and_share_the_codec_names() {
        for name in ["", "lz4", "zstd", "brotli"] {
            let text = String::from(name);
            let owned = chunk_index(&text).into_owned();
            drop(text);
            assert_eq!(owned, chunk_index(name));
            let shared = matches!(owned.compression, Cow::Borrowed(_));
            assert_eq!(shared, name != "brotli", "{name}");
        }
    }
}
