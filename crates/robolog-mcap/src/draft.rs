//! The pre-ratification draft layout, read-only, mapped onto the ratified records.
//!
//! Draft files carry the same magic but different opcodes from 0x03 up (spec section 13). Each
//! draft record becomes the ratified record(s) that say the same thing, so that everything built
//! on ratified records (the readers, the writer, recovery) converts draft files:
//!
//! - Header → Header, plus a Metadata record named `header` when the draft header has metadata;
//! - Channel Info → a Schema (id = channel id + 1, absent for a channel without schema) and a
//!   Channel;
//! - Message → Message (its two times swapped back into ratified order);
//! - Chunk → Chunk without message times;
//! - Message Index, Chunk Index, Attachment, Attachment Index, Statistics → their ratified
//!   counterparts (fields the draft lacks are 0);
//! - Footer → Footer whose `summary_start` is the draft `index_offset`.
//!
//! The readers ask a `Dialect` whatever differs between the layouts (which opcode a chunk
//! has, whether a record is a message, how a record parses, which CRCs exist) instead of
//! branching on the layout themselves.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::Read;

use robolog_framing::{ByteReader, Crc32, Error as ByteError, crc32};
use robolog_query::Input;

use crate::error::{McapError, Result};
use crate::options::Layout;
use crate::record_source::{RecordSource, Slot};
use crate::records::{
    Attachment, AttachmentIndex, Channel, Chunk, ChunkIndex, Footer, Header, MAGIC, Message,
    MessageIndex, Metadata, RECORD_PREFIX, Record, Schema, Statistics, StringMap,
};

/// Draft opcodes.
pub mod op {
    /// Header (profile, library, metadata).
    pub const HEADER: u8 = 0x01;
    /// Footer (index_offset, index_crc).
    pub const FOOTER: u8 = 0x02;
    /// Channel Info (a channel and its schema together).
    pub const CHANNEL_INFO: u8 = 0x03;
    /// Message (publish_time before record_time).
    pub const MESSAGE: u8 = 0x04;
    /// Chunk (records run to the end of the record).
    pub const CHUNK: u8 = 0x05;
    /// Message Index.
    pub const MESSAGE_INDEX: u8 = 0x06;
    /// Chunk Index.
    pub const CHUNK_INDEX: u8 = 0x07;
    /// Attachment.
    pub const ATTACHMENT: u8 = 0x08;
    /// Attachment Index.
    pub const ATTACHMENT_INDEX: u8 = 0x09;
    /// Statistics.
    pub const STATISTICS: u8 = 0x0A;
}

/// Bytes of the whole draft Footer record.
pub const FOOTER_RECORD_LEN: usize = 9 + 12;

/// Tells the layout from the footer: `Some(Ratified)` or `Some(Draft)` when the file ends with
/// the magic and a footer of that layout, `None` when there is no recognisable footer (a
/// truncated file, which readers treat as ratified unless told otherwise).
pub fn detect(data: &[u8]) -> Option<Layout> {
    detect_tail(data, data.len() as u64)
}

/// [`detect`] of a file read by position, from its last 64 bytes (one read; of a remote
/// object, the tail fetched when it was opened).
///
/// ```
/// use robolog_mcap::{Input, Layout, WriteOptions, Writer, draft};
/// let file = Writer::new(Vec::new(), WriteOptions::default())?.finish()?;
/// assert_eq!(draft::detect_input(&Input::from(file))?, Some(Layout::Ratified));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn detect_input(input: &Input) -> std::io::Result<Option<Layout>> {
    const TAIL: u64 = 64;
    let tail = input.read_up_to(input.len().saturating_sub(TAIL), TAIL)?;
    Ok(detect_tail(&tail, input.len()))
}

/// [`detect`] from the last bytes of a file of `file_len` bytes (64 are enough).
pub(crate) fn detect_tail(tail: &[u8], file_len: u64) -> Option<Layout> {
    let len = tail.len();
    if file_len < 8 + 8 || len < 8 || tail[len - 8..] != MAGIC {
        return None;
    }
    let footer_is = |record_len: usize, content_len: u64| {
        file_len >= (8 + record_len + 8) as u64 && len >= record_len + 8 && {
            let at = len - 8 - record_len;
            tail[at] == 0x02 && tail[at + 1..at + 9] == content_len.to_le_bytes()
        }
    };
    if footer_is(29, 20) {
        Some(Layout::Ratified)
    } else if footer_is(FOOTER_RECORD_LEN, 12) {
        Some(Layout::Draft)
    } else {
        None
    }
}

/// True when the draft record `opcode` maps to two ratified records (parts 0 and 1).
fn has_two_parts(opcode: u8) -> bool {
    matches!(opcode, op::HEADER | op::CHANNEL_INFO)
}

/// The layout a reader reads, and everything in which the draft layout differs from the
/// ratified one: the readers ask this type instead of branching on the layout themselves, so
/// that the draft rules live in this module alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Ratified MCAP.
    Ratified,
    /// The pre-ratification draft layout, read as the ratified records it maps to.
    Draft,
}

impl Dialect {
    /// The dialect of a file read with `layout`; `detect` tells what the file's footer says,
    /// and is called for [`Layout::Auto`] only.
    pub(crate) fn choose(layout: Layout, detect: impl FnOnce() -> Option<Layout>) -> Self {
        let draft = match layout {
            Layout::Draft => true,
            Layout::Ratified => false,
            Layout::Auto => detect() == Some(Layout::Draft),
        };
        if draft {
            Dialect::Draft
        } else {
            Dialect::Ratified
        }
    }

    /// The dialect of a stream read with `layout`: a stream cannot look at its footer first,
    /// so [`Layout::Auto`] reads ratified MCAP.
    pub(crate) fn of_stream(layout: Layout) -> Self {
        Self::choose(layout, || None)
    }

    /// True for the draft layout.
    pub(crate) fn is_draft(self) -> bool {
        self == Dialect::Draft
    }

    /// The opcode of a Chunk record.
    #[inline]
    pub(crate) fn chunk_op(self) -> u8 {
        match self {
            Dialect::Ratified => crate::records::op::CHUNK,
            Dialect::Draft => op::CHUNK,
        }
    }

    /// The opcode of an Attachment record.
    pub(crate) fn attachment_op(self) -> u8 {
        match self {
            Dialect::Ratified => crate::records::op::ATTACHMENT,
            Dialect::Draft => op::ATTACHMENT,
        }
    }

    /// True when `opcode` is a DataEnd record (the draft layout has none).
    #[inline]
    pub(crate) fn is_data_end(self, opcode: u8) -> bool {
        self == Dialect::Ratified && opcode == crate::records::op::DATA_END
    }

    /// Whether the data section and the attachments carry CRCs to check (the draft layout
    /// has no DataEnd, and its attachment CRCs are not checked).
    #[inline]
    pub(crate) fn has_data_crcs(self) -> bool {
        self == Dialect::Ratified
    }

    /// Whether a framed record of kind `opcode` is handed out as two ratified records
    /// (parts 0 and 1).
    #[inline]
    pub(crate) fn has_two_parts(self, opcode: u8) -> bool {
        self == Dialect::Draft && has_two_parts(opcode)
    }

    /// Parses part `part` of a framed record of kind `opcode` into the ratified record it
    /// reads as; `None` for a part that does not exist (a draft Header without metadata has
    /// no part 1, a draft channel without a schema no part 0). A ratified record has part 0
    /// only.
    pub(crate) fn parse_record(
        self,
        opcode: u8,
        content: &[u8],
        offset: u64,
        part: u8,
    ) -> Result<Option<Record<'_>>> {
        match self {
            Dialect::Ratified => crate::parse::parse_record(opcode, content, offset).map(Some),
            Dialect::Draft => parse_record(opcode, content, offset, part),
        }
    }

    /// True when the record `source` framed at `slot` reads as no ratified record and is
    /// skipped (a part of a draft record that does not exist; never in the ratified layout).
    #[inline]
    pub(crate) fn skips<S: RecordSource + ?Sized>(self, source: &S, slot: &Slot) -> bool {
        self == Dialect::Draft
            && matches!(
                parse_record(slot.opcode, source.content(slot), slot.offset, slot.part),
                Ok(None)
            )
    }

    /// The message in a framed record, `None` when the record is not a message.
    #[inline]
    pub(crate) fn message(
        self,
        opcode: u8,
        content: &[u8],
        offset: u64,
        part: u8,
    ) -> Result<Option<Message<'_>>> {
        match self {
            Dialect::Ratified if opcode == crate::records::op::MESSAGE => {
                crate::parse::message_fast(content)
                    .map(Some)
                    .ok_or_else(|| {
                        McapError::invalid(
                            offset,
                            "Message",
                            "content shorter than the 22-byte message header",
                        )
                    })
            }
            Dialect::Ratified => Ok(None),
            Dialect::Draft => match parse_record(opcode, content, offset, part)? {
                Some(Record::Message(m)) => Ok(Some(m)),
                _ => Ok(None),
            },
        }
    }

    /// True when the record `source` framed at `slot` is a message (told by its opcode alone
    /// in the ratified layout, without looking at its content).
    #[inline]
    pub(crate) fn is_message<S: RecordSource + ?Sized>(
        self,
        source: &S,
        slot: &Slot,
    ) -> Result<bool> {
        match self {
            Dialect::Ratified => Ok(slot.opcode == crate::records::op::MESSAGE),
            Dialect::Draft => Ok(matches!(
                parse_record(slot.opcode, source.content(slot), slot.offset, slot.part)?,
                Some(Record::Message(_))
            )),
        }
    }

    /// Parses the content of the Chunk record at `offset`.
    pub(crate) fn parse_chunk(self, content: &[u8], offset: u64) -> Result<Chunk<'_>> {
        match self {
            Dialect::Ratified => {
                match crate::parse::parse_record(crate::records::op::CHUNK, content, offset)? {
                    Record::Chunk(chunk) => Ok(chunk),
                    _ => Err(McapError::invalid(offset, "Chunk", "not a chunk")),
                }
            }
            Dialect::Draft => parse_chunk(content, offset),
        }
    }
}

type Field<T> = std::result::Result<T, ByteError>;

fn string<'a>(r: &mut ByteReader<'a>, what: &'static str) -> Field<Cow<'a, str>> {
    r.read_str_u32(what).map(Cow::Borrowed)
}

/// Draft KeyValues: the u32 prefix is a byte length when the entries fill exactly that many
/// bytes (the ratified rule, which our draft writer follows), otherwise an entry count.
fn key_values<'a, K, V>(
    r: &mut ByteReader<'a>,
    what: &'static str,
    entry: impl Fn(&mut ByteReader<'a>) -> Field<(K, V)>,
) -> Field<Vec<(K, V)>> {
    let prefix_at = r.clone();
    let declared = r.read_u32(what)?;
    let as_bytes = (|| {
        let mut sub = r.clone();
        let at = sub.offset();
        let bytes = sub.read_bytes(sub.check_len(u64::from(declared), what)?, what)?;
        let mut m = ByteReader::with_base(bytes, at);
        let mut out = Vec::new();
        while !m.is_empty() {
            out.push(entry(&mut m)?);
        }
        Ok::<_, ByteError>((out, sub))
    })();
    match as_bytes {
        Ok((out, sub)) => {
            *r = sub;
            Ok(out)
        }
        Err(first) => {
            let mut sub = prefix_at;
            sub.read_u32(what)?;
            let mut out = Vec::new();
            for _ in 0..declared {
                match entry(&mut sub) {
                    Ok(kv) => out.push(kv),
                    Err(_) => return Err(first),
                }
            }
            *r = sub;
            Ok(out)
        }
    }
}

fn string_map<'a>(r: &mut ByteReader<'a>, what: &'static str) -> Field<StringMap<'a>> {
    let entries = key_values(r, what, |m| Ok((string(m, what)?, string(m, what)?)))?;
    Ok(entries.into_iter().collect())
}

fn u16_u64_map(r: &mut ByteReader<'_>, what: &'static str) -> Field<BTreeMap<u16, u64>> {
    let entries = key_values(r, what, |m| Ok((m.read_u16(what)?, m.read_u64(what)?)))?;
    Ok(entries.into_iter().collect())
}

/// The ratified schema id given to the schema of draft channel `channel_id`.
pub fn schema_id_for(channel_id: u16) -> u16 {
    channel_id.wrapping_add(1).max(1)
}

/// Guesses the ratified schema encoding from a draft channel's message encoding.
fn schema_encoding(message_encoding: &str) -> &'static str {
    match message_encoding {
        "ros1" => "ros1msg",
        "cdr" | "ros2" => "ros2msg",
        "protobuf" => "protobuf",
        "json" => "jsonschema",
        "flatbuffer" => "flatbuffer",
        _ => "unknown",
    }
}

/// Parses part `part` (0 or 1) of the draft record. `None` when that part does not exist (a
/// Header without metadata has no part 1, a channel without a schema no part 0).
fn parse_record(opcode: u8, content: &[u8], offset: u64, part: u8) -> Result<Option<Record<'_>>> {
    let mut r = ByteReader::with_base(content, offset + RECORD_PREFIX);
    let name = record_name(opcode);
    let parsed = (|| -> Field<Option<Record<'_>>> {
        Ok(match opcode {
            op::HEADER => {
                let profile = string(&mut r, "profile")?;
                let library = string(&mut r, "library")?;
                if part == 0 {
                    Some(Record::Header(Header { profile, library }))
                } else {
                    let metadata = if r.is_empty() {
                        StringMap::new()
                    } else {
                        string_map(&mut r, "header metadata")?
                    };
                    (!metadata.is_empty()).then_some(Record::Metadata(Metadata {
                        name: Cow::Borrowed("header"),
                        metadata,
                    }))
                }
            }
            op::FOOTER => Some(Record::Footer(Footer {
                summary_start: r.read_u64("index_offset")?,
                summary_offset_start: 0,
                summary_crc: 0,
            })),
            op::CHANNEL_INFO => {
                let id = r.read_u16("channel id")?;
                let topic = string(&mut r, "topic_name")?;
                let encoding = string(&mut r, "encoding")?;
                let schema_name = string(&mut r, "schema_name")?;
                let schema = r.read_bytes_u32("schema")?;
                let schemaless = schema_name.is_empty() && schema.is_empty();
                if part == 0 {
                    (!schemaless).then(|| {
                        Record::Schema(Schema {
                            id: schema_id_for(id),
                            name: schema_name,
                            encoding: Cow::Borrowed(schema_encoding(&encoding)),
                            data: Cow::Borrowed(schema),
                        })
                    })
                } else {
                    let metadata = string_map(&mut r, "user_data")?;
                    Some(Record::Channel(Channel {
                        id,
                        schema_id: if schemaless { 0 } else { schema_id_for(id) },
                        topic,
                        message_encoding: encoding,
                        metadata,
                    }))
                }
            }
            op::MESSAGE => {
                let channel_id = r.read_u16("channel_id")?;
                let sequence = r.read_u32("sequence")?;
                let publish_time = r.read_u64("publish_time")?;
                let log_time = r.read_u64("record_time")?;
                Some(Record::Message(Message {
                    channel_id,
                    sequence,
                    log_time,
                    publish_time,
                    data: r.rest(),
                }))
            }
            op::CHUNK => Some(Record::Chunk(chunk(&mut r)?)),
            op::MESSAGE_INDEX => {
                let channel_id = r.read_u16("channel_id")?;
                let entries = key_values(&mut r, "records", |m| {
                    Ok((m.read_u64("record_time")?, m.read_u64("offset")?))
                })?;
                Some(Record::MessageIndex(MessageIndex {
                    channel_id,
                    records: entries,
                }))
            }
            op::CHUNK_INDEX => {
                let message_start_time = r.read_u64("start_time")?;
                let message_end_time = r.read_u64("end_time")?;
                let chunk_start_offset = r.read_u64("offset")?;
                let message_index_offsets = u16_u64_map(&mut r, "message_index_offsets")?;
                let message_index_length = r.read_u64("message_index_length")?;
                let compression = string(&mut r, "compression")?;
                let compressed_size = r.read_u64("compressed_size")?;
                let uncompressed_size = r.read_u64("uncompressed_size")?;
                // The draft does not store the chunk's length; it follows from its fields.
                let chunk_length = (RECORD_PREFIX + 8 + 4 + 4 + compression.len() as u64)
                    .saturating_add(compressed_size);
                Some(Record::ChunkIndex(ChunkIndex {
                    message_start_time,
                    message_end_time,
                    chunk_start_offset,
                    chunk_length,
                    message_index_offsets,
                    message_index_length,
                    compression,
                    compressed_size,
                    uncompressed_size,
                }))
            }
            op::ATTACHMENT => {
                let name = string(&mut r, "name")?;
                let log_time = r.read_u64("record_time")?;
                let media_type = string(&mut r, "content_type")?;
                let data = r.read_bytes_u64("data")?;
                let crc = r.read_u32("crc")?;
                Some(Record::Attachment(Attachment {
                    log_time,
                    create_time: 0,
                    name,
                    media_type,
                    data: Cow::Borrowed(data),
                    crc,
                }))
            }
            op::ATTACHMENT_INDEX => {
                let log_time = r.read_u64("record_time")?;
                let data_size = r.read_u64("data_size")?;
                let name = string(&mut r, "name")?;
                let media_type = string(&mut r, "content_type")?;
                let offset = r.read_u64("offset")?;
                Some(Record::AttachmentIndex(AttachmentIndex {
                    offset,
                    length: 0,
                    log_time,
                    create_time: 0,
                    data_size,
                    name,
                    media_type,
                }))
            }
            op::STATISTICS => {
                let message_count = r.read_u64("message_count")?;
                let channel_count = r.read_u32("channel_count")?;
                let attachment_count = r.read_u32("attachment_count")?;
                let chunk_count = r.read_u32("chunk_count")?;
                let channel_message_counts = u16_u64_map(&mut r, "channel_message_counts")?;
                Some(Record::Statistics(Statistics {
                    message_count,
                    schema_count: 0,
                    channel_count,
                    attachment_count,
                    metadata_count: 0,
                    chunk_count,
                    message_start_time: 0,
                    message_end_time: 0,
                    channel_message_counts,
                }))
            }
            _ => Some(Record::Unknown { opcode, content }),
        })
    })();
    parsed.map_err(|e| McapError::malformed(offset, name, e))
}

fn chunk<'a>(r: &mut ByteReader<'a>) -> Field<Chunk<'a>> {
    Ok(Chunk {
        message_start_time: 0,
        message_end_time: 0,
        uncompressed_size: r.read_u64("uncompressed_size")?,
        uncompressed_crc: r.read_u32("uncompressed_crc")?,
        compression: r.read_str_u32("compression")?,
        records: r.rest(),
    })
}

/// Parses a draft Chunk record's content.
fn parse_chunk(content: &[u8], offset: u64) -> Result<Chunk<'_>> {
    let mut r = ByteReader::with_base(content, offset + RECORD_PREFIX);
    chunk(&mut r).map_err(|e| McapError::malformed(offset, "Chunk", e))
}

/// Checks the draft footer's `index_crc` (from `index_offset` through the byte before the CRC).
pub(crate) fn verify_footer(data: &[u8], footer_offset: usize) -> Result<()> {
    let content = data
        .get(footer_offset + 9..footer_offset + FOOTER_RECORD_LEN)
        .ok_or(footer_truncated(footer_offset as u64))?;
    verify_index_crc(footer_offset as u64, content, |covered| {
        let range = usize::try_from(covered.start).unwrap_or(usize::MAX)
            ..usize::try_from(covered.end).unwrap_or(usize::MAX);
        Ok(data.get(range).map(crc32))
    })
}

/// [`verify_footer`] of a file read by position: the section the CRC covers is read as a
/// stream, never held whole.
pub(crate) fn verify_footer_input(input: &Input, footer_offset: u64) -> Result<()> {
    let io = |offset: u64| move |source| McapError::Io { offset, source };
    let start = footer_offset + 9;
    let content = input.read_up_to(start, 12).map_err(io(start))?;
    if content.len() < 12 {
        return Err(footer_truncated(footer_offset));
    }
    verify_index_crc(footer_offset, &content, |covered| {
        if covered.start > covered.end || covered.end > input.len() {
            return Ok(None);
        }
        let mut crc = Crc32::new();
        let mut stream = input.stream(covered.clone());
        let mut piece = vec![0u8; 64 << 10];
        loop {
            let at = covered.start + stream.position();
            let n = stream.read(&mut piece).map_err(io(at))?;
            if n == 0 {
                return Ok(Some(crc.value()));
            }
            crc.update(&piece[..n]);
        }
    })
}

fn footer_truncated(footer_offset: u64) -> McapError {
    McapError::Truncated {
        offset: footer_offset,
        record: "Footer",
        what: "draft footer",
    }
}

/// Compares the `index_crc` of the draft footer at `footer_offset`, whose 12 content bytes are
/// `content`, with the CRC `crc_of` computes of the bytes it covers (`None`: they are not in
/// the file).
fn verify_index_crc(
    footer_offset: u64,
    content: &[u8],
    crc_of: impl FnOnce(std::ops::Range<u64>) -> Result<Option<u32>>,
) -> Result<()> {
    let index_offset = u64::from_le_bytes(content[..8].try_into().unwrap_or([0; 8]));
    let stored = u32::from_le_bytes(content[8..12].try_into().unwrap_or([0; 4]));
    let end = footer_offset + 9 + 8;
    if stored == 0 || index_offset == 0 {
        return Ok(());
    }
    let Some(computed) = crc_of(index_offset..end)? else {
        return Err(McapError::invalid(
            footer_offset,
            "Footer",
            format!("index_offset {index_offset} is past the footer"),
        ));
    };
    if computed != stored {
        return Err(McapError::CrcMismatch {
            offset: footer_offset,
            what: "draft index",
            stored,
            computed,
        });
    }
    Ok(())
}

/// The name of a draft record kind.
pub fn record_name(opcode: u8) -> &'static str {
    match opcode {
        op::HEADER => "Header",
        op::FOOTER => "Footer",
        op::CHANNEL_INFO => "Channel Info",
        op::MESSAGE => "Message",
        op::CHUNK => "Chunk",
        op::MESSAGE_INDEX => "Message Index",
        op::CHUNK_INDEX => "Chunk Index",
        op::ATTACHMENT => "Attachment",
        op::ATTACHMENT_INDEX => "Attachment Index",
        op::STATISTICS => "Statistics",
        _ => "unknown draft record",
    }
}
