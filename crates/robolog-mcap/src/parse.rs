//! The sans-io record parser: bytes in, records out, nothing read from anywhere.
//!
//! [`RecordSplitter`] cuts a slice into framed records (`opcode, u64 length, content`) and
//! [`parse_record`] turns one record's content into a [`Record`] that borrows from it. Both the
//! readers over `Bytes` and the streaming reader over `Read` go through these two.

use std::borrow::Cow;
use std::collections::BTreeMap;

use robolog_framing::{ByteReader, Error as ByteError};

use crate::error::{McapError, Result};
use crate::records::{
    Attachment, AttachmentIndex, Channel, Chunk, ChunkIndex, DataEnd, Footer, Header, Message,
    MessageIndex, Metadata, MetadataIndex, RECORD_PREFIX, Record, Schema, Statistics, StringMap,
    SummaryOffset, op, record_name,
};

/// One framed record, not parsed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawRecord<'a> {
    /// The opcode.
    pub opcode: u8,
    /// Absolute offset of the opcode byte (in the file, or in the uncompressed chunk records).
    pub offset: u64,
    /// The content (after the 9-byte prefix).
    pub content: &'a [u8],
}

impl<'a> RawRecord<'a> {
    /// Bytes the record occupies, prefix included.
    pub fn len(&self) -> u64 {
        RECORD_PREFIX + self.content.len() as u64
    }

    /// Always false: a record has at least its 9-byte prefix.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Parses the content.
    pub fn parse(&self) -> Result<Record<'a>> {
        parse_record(self.opcode, self.content, self.offset)
    }
}

/// Splits a slice into framed records. Yields an error (and then stops) when the last record is
/// incomplete: [`McapError::Truncated`] for a file, [`McapError::Invalid`] inside a chunk, whose
/// length is known to be complete.
#[derive(Debug, Clone)]
pub struct RecordSplitter<'a> {
    data: &'a [u8],
    pos: usize,
    base: u64,
    inside_chunk: bool,
    failed: bool,
}

impl<'a> RecordSplitter<'a> {
    /// Splits `data`, whose first byte is at absolute offset `base` of a file.
    pub fn new(data: &'a [u8], base: u64) -> Self {
        Self {
            data,
            pos: 0,
            base,
            inside_chunk: false,
            failed: false,
        }
    }

    /// Splits the decompressed records of a chunk (offsets relative to the chunk records).
    pub fn chunk_records(data: &'a [u8]) -> Self {
        Self {
            inside_chunk: true,
            ..Self::new(data, 0)
        }
    }

    /// Relative position of the next record.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Absolute offset of the next record.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Moves to relative position `pos` (clamped to the end).
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.data.len());
    }

    fn incomplete(&self, record: &'static str, what: &'static str) -> McapError {
        if self.inside_chunk {
            McapError::invalid(
                self.offset(),
                "Chunk",
                format!("the chunk's records end inside a {record} ({what})"),
            )
        } else {
            McapError::Truncated {
                offset: self.offset(),
                record,
                what,
            }
        }
    }
}

impl<'a> Iterator for RecordSplitter<'a> {
    type Item = Result<RawRecord<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let Some(prefix) = rest.get(..9) else {
            self.failed = true;
            return Some(Err(self.incomplete("record", "opcode and length")));
        };
        let opcode = prefix[0];
        let mut len_bytes = [0u8; 8];
        len_bytes.copy_from_slice(&prefix[1..9]);
        let length = u64::from_le_bytes(len_bytes);
        let available = (rest.len() - 9) as u64;
        if length > available {
            self.failed = true;
            return Some(Err(self.incomplete(record_name(opcode), "record content")));
        }
        // length <= available <= usize::MAX.
        let length = length as usize;
        let record = RawRecord {
            opcode,
            offset: self.offset(),
            content: &rest[9..9 + length],
        };
        self.pos += 9 + length;
        Some(Ok(record))
    }
}

/// Parses the content of a record with `opcode` whose opcode byte is at absolute `offset`.
///
/// Fields are read in order and anything after the known fields is ignored (the format's
/// extension rule). Unknown and private opcodes give [`Record::Unknown`].
pub fn parse_record(opcode: u8, content: &[u8], offset: u64) -> Result<Record<'_>> {
    let mut r = ByteReader::with_base(content, offset + RECORD_PREFIX);
    let parsed = match opcode {
        op::HEADER => header(&mut r).map(Record::Header),
        op::FOOTER => footer(&mut r).map(Record::Footer),
        op::SCHEMA => schema(&mut r).map(Record::Schema),
        op::CHANNEL => channel(&mut r).map(Record::Channel),
        op::MESSAGE => message(&mut r).map(Record::Message),
        op::CHUNK => chunk(&mut r).map(Record::Chunk),
        op::MESSAGE_INDEX => message_index(&mut r).map(Record::MessageIndex),
        op::CHUNK_INDEX => chunk_index(&mut r).map(Record::ChunkIndex),
        op::ATTACHMENT => attachment(&mut r).map(Record::Attachment),
        op::ATTACHMENT_INDEX => attachment_index(&mut r).map(Record::AttachmentIndex),
        op::STATISTICS => statistics(&mut r).map(Record::Statistics),
        op::METADATA => metadata(&mut r).map(Record::Metadata),
        op::METADATA_INDEX => metadata_index(&mut r).map(Record::MetadataIndex),
        op::SUMMARY_OFFSET => summary_offset(&mut r).map(Record::SummaryOffset),
        op::DATA_END => data_end(&mut r).map(Record::DataEnd),
        _ => Ok(Record::Unknown { opcode, content }),
    };
    parsed.map_err(|e| McapError::malformed(offset, record_name(opcode), e))
}

type Field<T> = std::result::Result<T, ByteError>;

fn string<'a>(r: &mut ByteReader<'a>, what: &'static str) -> Field<Cow<'a, str>> {
    r.read_str_u32(what).map(Cow::Borrowed)
}

/// A `u32` byte length, then that many bytes, as a reader with the right absolute offsets.
fn sub_reader<'a>(r: &mut ByteReader<'a>, what: &'static str) -> Field<ByteReader<'a>> {
    let at = r.offset() + 4;
    let bytes = r.read_bytes_u32(what)?;
    Ok(ByteReader::with_base(bytes, at))
}

/// Map<String, String>; duplicate keys keep the last value.
pub(crate) fn string_map<'a>(r: &mut ByteReader<'a>, what: &'static str) -> Field<StringMap<'a>> {
    let mut m = sub_reader(r, what)?;
    let mut map = BTreeMap::new();
    while !m.is_empty() {
        let key = string(&mut m, what)?;
        let value = string(&mut m, what)?;
        map.insert(key, value);
    }
    Ok(map)
}

fn u16_u64_map(r: &mut ByteReader<'_>, what: &'static str) -> Field<BTreeMap<u16, u64>> {
    let mut m = sub_reader(r, what)?;
    let mut map = BTreeMap::new();
    while !m.is_empty() {
        let key = m.read_u16(what)?;
        let value = m.read_u64(what)?;
        map.insert(key, value);
    }
    Ok(map)
}

fn header<'a>(r: &mut ByteReader<'a>) -> Field<Header<'a>> {
    Ok(Header {
        profile: string(r, "profile")?,
        library: string(r, "library")?,
    })
}

fn footer(r: &mut ByteReader<'_>) -> Field<Footer> {
    Ok(Footer {
        summary_start: r.read_u64("summary_start")?,
        summary_offset_start: r.read_u64("summary_offset_start")?,
        summary_crc: r.read_u32("summary_crc")?,
    })
}

fn schema<'a>(r: &mut ByteReader<'a>) -> Field<Schema<'a>> {
    Ok(Schema {
        id: r.read_u16("schema id")?,
        name: string(r, "schema name")?,
        encoding: string(r, "schema encoding")?,
        data: Cow::Borrowed(r.read_bytes_u32("schema data")?),
    })
}

fn channel<'a>(r: &mut ByteReader<'a>) -> Field<Channel<'a>> {
    Ok(Channel {
        id: r.read_u16("channel id")?,
        schema_id: r.read_u16("channel schema_id")?,
        topic: string(r, "channel topic")?,
        message_encoding: string(r, "channel message_encoding")?,
        metadata: string_map(r, "channel metadata")?,
    })
}

/// The fixed part of a Message before its data.
pub(crate) const MESSAGE_HEADER_LEN: usize = 22;

fn message<'a>(r: &mut ByteReader<'a>) -> Field<Message<'a>> {
    Ok(Message {
        channel_id: r.read_u16("message channel_id")?,
        sequence: r.read_u32("message sequence")?,
        log_time: r.read_u64("message log_time")?,
        publish_time: r.read_u64("message publish_time")?,
        data: r.rest(),
    })
}

/// Parses a Message's content without the general dispatch (the hot path of every reader).
#[inline]
pub(crate) fn message_fast(content: &[u8]) -> Option<Message<'_>> {
    let head = content.get(..MESSAGE_HEADER_LEN)?;
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&head[i..i + 8]);
        u64::from_le_bytes(b)
    };
    Some(Message {
        channel_id: u16::from_le_bytes([head[0], head[1]]),
        sequence: u32::from_le_bytes([head[2], head[3], head[4], head[5]]),
        log_time: u64_at(6),
        publish_time: u64_at(14),
        data: &content[MESSAGE_HEADER_LEN..],
    })
}

fn chunk<'a>(r: &mut ByteReader<'a>) -> Field<Chunk<'a>> {
    Ok(Chunk {
        message_start_time: r.read_u64("chunk message_start_time")?,
        message_end_time: r.read_u64("chunk message_end_time")?,
        uncompressed_size: r.read_u64("chunk uncompressed_size")?,
        uncompressed_crc: r.read_u32("chunk uncompressed_crc")?,
        compression: r.read_str_u32("chunk compression")?,
        records: r.read_bytes_u64("chunk records")?,
    })
}

fn message_index(r: &mut ByteReader<'_>) -> Field<MessageIndex> {
    let channel_id = r.read_u16("message index channel_id")?;
    let mut entries = sub_reader(r, "message index records")?;
    let mut records = Vec::with_capacity(entries.remaining() / 16);
    while !entries.is_empty() {
        let log_time = entries.read_u64("message index log_time")?;
        let offset = entries.read_u64("message index offset")?;
        records.push((log_time, offset));
    }
    Ok(MessageIndex {
        channel_id,
        records,
    })
}

fn chunk_index<'a>(r: &mut ByteReader<'a>) -> Field<ChunkIndex<'a>> {
    Ok(ChunkIndex {
        message_start_time: r.read_u64("chunk index message_start_time")?,
        message_end_time: r.read_u64("chunk index message_end_time")?,
        chunk_start_offset: r.read_u64("chunk index chunk_start_offset")?,
        chunk_length: r.read_u64("chunk index chunk_length")?,
        message_index_offsets: u16_u64_map(r, "chunk index message_index_offsets")?,
        message_index_length: r.read_u64("chunk index message_index_length")?,
        compression: string(r, "chunk index compression")?,
        compressed_size: r.read_u64("chunk index compressed_size")?,
        uncompressed_size: r.read_u64("chunk index uncompressed_size")?,
    })
}

fn attachment<'a>(r: &mut ByteReader<'a>) -> Field<Attachment<'a>> {
    Ok(Attachment {
        log_time: r.read_u64("attachment log_time")?,
        create_time: r.read_u64("attachment create_time")?,
        name: string(r, "attachment name")?,
        media_type: string(r, "attachment media_type")?,
        data: Cow::Borrowed(r.read_bytes_u64("attachment data")?),
        crc: r.read_u32("attachment crc")?,
    })
}

/// Checks the CRC of the Attachment record at `offset` whose content is `content` (a stored 0
/// is not checked). A malformed attachment is left to the parser to report.
pub(crate) fn verify_attachment_crc(content: &[u8], offset: u64) -> Result<()> {
    if let Ok(Record::Attachment(a)) = parse_record(op::ATTACHMENT, content, offset)
        && a.crc != 0
    {
        let computed = robolog_framing::crc32(&content[..attachment_crc_span(&a)]);
        if computed != a.crc {
            return Err(McapError::CrcMismatch {
                offset,
                what: "attachment",
                stored: a.crc,
                computed,
            });
        }
    }
    Ok(())
}

/// The number of content bytes an attachment's CRC covers (everything before the CRC field),
/// given its parsed fields.
pub(crate) fn attachment_crc_span(a: &Attachment<'_>) -> usize {
    8 + 8 + 4 + a.name.len() + 4 + a.media_type.len() + 8 + a.data.len()
}

fn attachment_index<'a>(r: &mut ByteReader<'a>) -> Field<AttachmentIndex<'a>> {
    Ok(AttachmentIndex {
        offset: r.read_u64("attachment index offset")?,
        length: r.read_u64("attachment index length")?,
        log_time: r.read_u64("attachment index log_time")?,
        create_time: r.read_u64("attachment index create_time")?,
        data_size: r.read_u64("attachment index data_size")?,
        name: string(r, "attachment index name")?,
        media_type: string(r, "attachment index media_type")?,
    })
}

fn statistics(r: &mut ByteReader<'_>) -> Field<Statistics> {
    Ok(Statistics {
        message_count: r.read_u64("statistics message_count")?,
        schema_count: r.read_u16("statistics schema_count")?,
        channel_count: r.read_u32("statistics channel_count")?,
        attachment_count: r.read_u32("statistics attachment_count")?,
        metadata_count: r.read_u32("statistics metadata_count")?,
        chunk_count: r.read_u32("statistics chunk_count")?,
        message_start_time: r.read_u64("statistics message_start_time")?,
        message_end_time: r.read_u64("statistics message_end_time")?,
        channel_message_counts: u16_u64_map(r, "statistics channel_message_counts")?,
    })
}

fn metadata<'a>(r: &mut ByteReader<'a>) -> Field<Metadata<'a>> {
    Ok(Metadata {
        name: string(r, "metadata name")?,
        metadata: string_map(r, "metadata entries")?,
    })
}

fn metadata_index<'a>(r: &mut ByteReader<'a>) -> Field<MetadataIndex<'a>> {
    Ok(MetadataIndex {
        offset: r.read_u64("metadata index offset")?,
        length: r.read_u64("metadata index length")?,
        name: string(r, "metadata index name")?,
    })
}

fn summary_offset(r: &mut ByteReader<'_>) -> Field<SummaryOffset> {
    Ok(SummaryOffset {
        group_opcode: r.read_u8("summary offset group_opcode")?,
        group_start: r.read_u64("summary offset group_start")?,
        group_length: r.read_u64("summary offset group_length")?,
    })
}

fn data_end(r: &mut ByteReader<'_>) -> Field<DataEnd> {
    Ok(DataEnd {
        data_section_crc: r.read_u32("data_section_crc")?,
    })
}
