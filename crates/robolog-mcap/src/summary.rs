//! What an indexed reader knows before reading any message: schemas, channels, statistics and
//! the chunk, attachment and metadata indexes, from the summary section (footer → summary in
//! one read) or, when there is none or it is damaged, from a scan of the data section.

use std::collections::BTreeMap;
use std::sync::Arc;

use robolog_framing::{Bytes, Decompressor, crc32};
use robolog_query::Input;

use crate::chunk::{DEFAULT_CHUNK_LIMIT, decompress_into};
use crate::error::{McapError, Result};
use crate::linear::frame_at;
use crate::parse::{RecordSplitter, parse_record};
use crate::records::{
    AttachmentIndex, Channel, ChunkIndex, FOOTER_RECORD_LEN, Footer, Header, MAGIC, MetadataIndex,
    RECORD_PREFIX, Record, Schema, Statistics, SummaryOffset, op,
};
use crate::window::{Source, Window};

/// Where a [`Summary`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarySource {
    /// The file's summary section, found through the footer.
    SummarySection,
    /// A scan of the data section (no summary, a truncated file, or a summary without chunk
    /// indexes while the file has messages).
    Scan,
}

/// A message outside any chunk, found by a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LooseMessage {
    pub(crate) log_time: u64,
    pub(crate) channel_id: u16,
    /// File offset of the Message record.
    pub(crate) offset: u64,
    /// The record's length, opcode and length prefix included.
    pub(crate) length: u64,
}

/// The summary of a file.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The Header.
    pub header: Option<Header<'static>>,
    /// The Footer, when the file has one.
    pub footer: Option<Footer>,
    /// Schemas by id.
    pub schemas: BTreeMap<u16, Arc<Schema<'static>>>,
    /// Channels by id.
    pub channels: BTreeMap<u16, Arc<Channel<'static>>>,
    /// The Statistics record, when there is one.
    pub statistics: Option<Statistics>,
    /// One entry per chunk, in file order.
    pub chunk_indexes: Vec<ChunkIndex<'static>>,
    /// One entry per attachment.
    pub attachment_indexes: Vec<AttachmentIndex<'static>>,
    /// One entry per Metadata record.
    pub metadata_indexes: Vec<MetadataIndex<'static>>,
    /// The SummaryOffset records.
    pub summary_offsets: Vec<SummaryOffset>,
    /// Where this summary came from.
    pub source: SummarySource,
    /// Why a scan was needed, when it was (a damaged summary, say).
    pub scan_reason: Option<String>,
    /// The offset of the record a scan stopped at because it could not frame it (the file ends
    /// inside it, or its length is corrupt); `None` when nothing stopped the scan. What lies
    /// from there on is in no index: [`salvage_cut_chunk`](crate::salvage_cut_chunk) saves the
    /// complete messages of a cut chunk.
    pub scan_stopped_at: Option<u64>,
    pub(crate) loose_messages: Vec<LooseMessage>,
}

impl Summary {
    fn empty(source: SummarySource) -> Self {
        Self {
            header: None,
            footer: None,
            schemas: BTreeMap::new(),
            channels: BTreeMap::new(),
            statistics: None,
            chunk_indexes: Vec::new(),
            attachment_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
            summary_offsets: Vec::new(),
            source,
            scan_reason: None,
            scan_stopped_at: None,
            loose_messages: Vec::new(),
        }
    }

    /// The channel with `id`.
    pub fn channel(&self, id: u16) -> Option<&Arc<Channel<'static>>> {
        self.channels.get(&id)
    }

    /// The schema of channel `channel_id` (`None` for schemaless channels).
    pub fn schema_of(&self, channel_id: u16) -> Option<&Arc<Schema<'static>>> {
        let channel = self.channels.get(&channel_id)?;
        self.schemas.get(&channel.schema_id)
    }

    /// Messages outside chunks found by a scan (invisible to an index).
    pub fn loose_message_count(&self) -> usize {
        self.loose_messages.len()
    }

    fn add(&mut self, record: Record<'_>) {
        match record {
            Record::Header(h) => self.header = Some(h.into_owned()),
            Record::Schema(s) if s.id != 0 => {
                self.schemas
                    .entry(s.id)
                    .or_insert_with(|| Arc::new(s.into_owned()));
            }
            Record::Channel(c) => {
                self.channels
                    .entry(c.id)
                    .or_insert_with(|| Arc::new(c.into_owned()));
            }
            Record::Statistics(s) => self.statistics = Some(s),
            Record::ChunkIndex(c) => self.chunk_indexes.push(c.into_owned()),
            Record::AttachmentIndex(a) => self.attachment_indexes.push(a.into_owned()),
            Record::MetadataIndex(m) => self.metadata_indexes.push(m.into_owned()),
            Record::SummaryOffset(s) => self.summary_offsets.push(s),
            _ => {}
        }
    }
}

/// Bytes read from the start of a file to find its magic and Header (a Header is a few dozen
/// bytes; a longer one is read again whole).
const HEAD_LEN: u64 = 4096;

/// The ratified footer at the end of a file of `len` bytes whose last bytes are `tail`, with its
/// file offset, if there is one.
pub(crate) fn footer_of(tail: &[u8], len: u64) -> Option<(u64, Footer)> {
    let tail_len = tail.len() as u64;
    let footer_len = FOOTER_RECORD_LEN + MAGIC.len() as u64;
    let footer_at = len.checked_sub(footer_len)?;
    let rel = usize::try_from(tail_len.checked_sub(footer_len)?).ok()?;
    if footer_at < MAGIC.len() as u64 || tail[tail.len() - MAGIC.len()..] != MAGIC {
        return None;
    }
    let (opcode, start, end) = frame_at(tail, rel).ok()??;
    if opcode != op::FOOTER || end - start != 20 {
        return None;
    }
    match parse_record(opcode, &tail[start..end], footer_at).ok()? {
        Record::Footer(f) => Some((footer_at, f)),
        _ => None,
    }
}

/// Bytes read from the end of a file when it is opened: the footer, and the summary section of
/// most files, in one read (a remote input pays per request, not per byte, at this size).
pub(crate) const TAIL_LEN: u64 = 64 << 10;

/// The last bytes of an input, read once when it is opened: later reads within them are slices.
#[derive(Debug)]
pub(crate) struct Tail {
    /// Offset of `bytes` in the input.
    pub(crate) at: u64,
    pub(crate) bytes: Bytes,
}

impl Tail {
    /// The last [`TAIL_LEN`] bytes of `input` (all of them when it is shorter).
    pub(crate) fn read(input: &Input) -> std::io::Result<Self> {
        let at = input.len().saturating_sub(TAIL_LEN);
        Ok(Self {
            at,
            bytes: input.read(at..input.len())?,
        })
    }

    /// `range` of `input`, sliced from the tail when it lies within it.
    fn get(&self, input: &Input, range: std::ops::Range<u64>) -> std::io::Result<Bytes> {
        let end = self.at + self.bytes.len() as u64;
        if range.start >= self.at && range.start <= range.end && range.end <= end {
            let from = (range.start - self.at) as usize;
            return Ok(self
                .bytes
                .slice(from..from + (range.end - range.start) as usize));
        }
        input.read(range)
    }
}

/// Reads the summary through the footer, from `tail` when the summary lies within it (one read
/// of the head and none more for most files, otherwise one of the summary section), falling back
/// to a scan of the whole input.
pub(crate) fn load(input: &Input, tail: &Tail, verify_crc: bool) -> Result<Summary> {
    let io = |offset: u64| move |source| McapError::Io { offset, source };
    let len = input.len();
    let head = tail.get(input, 0..HEAD_LEN.min(len)).map_err(io(0))?;
    if head.len() < MAGIC.len() || head[..MAGIC.len()] != MAGIC {
        return Err(if MAGIC.starts_with(&head) {
            McapError::Truncated {
                offset: 0,
                record: "magic",
                what: "leading magic",
            }
        } else {
            McapError::BadMagic { offset: 0 }
        });
    }
    let header = header_of(input, &head);
    let footer_len = FOOTER_RECORD_LEN + MAGIC.len() as u64;
    let tail_start = len.saturating_sub(footer_len);
    let footer_tail = tail.get(input, tail_start..len).map_err(io(tail_start))?;
    let scan_all = |end: u64, reason: &str| -> Result<Summary> {
        let mut s = scan_input(input, end, reason)?;
        s.header = header.clone().or(s.header);
        Ok(s)
    };
    let Some((footer_at, footer)) = footer_of(&footer_tail, len) else {
        return scan_all(len, "the file has no footer (truncated?)");
    };
    if footer.summary_start == 0 {
        let mut s = scan_all(footer_at, "the file has no summary")?;
        s.footer = Some(footer);
        return Ok(s);
    }
    match from_summary_section(input, tail, footer_at, footer, verify_crc) {
        Ok(mut s) => {
            s.header = header.clone();
            let may_have_messages = s.statistics.as_ref().is_none_or(|st| st.message_count > 0);
            let chunked = !s.chunk_indexes.is_empty();
            // An unchunked file: its messages are only found by reading the data section. A
            // chunked one whose summary does not repeat its schemas and channels (it need not)
            // defines them only in its chunks, where a reader must find them before reading a
            // message.
            let reason = match (chunked, may_have_messages) {
                (true, _) if lacks_channels(&s) => "the summary does not repeat the channels",
                (false, true) => "the summary has no chunk indexes",
                _ => return Ok(s),
            };
            let scanned = scan_all(footer.summary_start.min(footer_at), reason)?;
            for (id, schema) in scanned.schemas {
                s.schemas.entry(id).or_insert(schema);
            }
            for (id, channel) in scanned.channels {
                s.channels.entry(id).or_insert(channel);
            }
            if !chunked {
                s.loose_messages = scanned.loose_messages;
                s.chunk_indexes = scanned.chunk_indexes;
                s.source = SummarySource::Scan;
                s.scan_reason = scanned.scan_reason;
            }
            Ok(s)
        }
        Err(e) if matches!(e, McapError::CrcMismatch { .. } | McapError::Io { .. }) => Err(e),
        Err(e) => {
            let mut s = scan_all(footer_at, &format!("the summary is damaged: {e}"))?;
            s.footer = Some(footer);
            Ok(s)
        }
    }
}

/// Whether the summary section leaves out channels (or schemas) that its chunks use: the
/// statistics count more of them, a chunk's message indexes name an unknown channel, or it has
/// none at all for a file with messages.
fn lacks_channels(s: &Summary) -> bool {
    let counted = s.statistics.as_ref().is_some_and(|st| {
        u64::from(st.channel_count) > s.channels.len() as u64
            || usize::from(st.schema_count) > s.schemas.len()
    });
    let indexed = s.chunk_indexes.iter().any(|c| {
        c.message_index_offsets
            .keys()
            .any(|id| !s.channels.contains_key(id))
    });
    let schemaless = s
        .channels
        .values()
        .any(|c| c.schema_id != 0 && !s.schemas.contains_key(&c.schema_id));
    let has_messages = s.statistics.as_ref().is_none_or(|st| st.message_count > 0);
    counted || indexed || schemaless || (s.channels.is_empty() && has_messages)
}

/// The Header record after the magic, read from `head` (the first bytes of the input) or, when
/// it is longer, from the input.
fn header_of(input: &Input, head: &[u8]) -> Option<Header<'static>> {
    let at = MAGIC.len();
    if frame_at(head, at).is_ok() || head.len() as u64 == input.len() {
        return header_in(head, at);
    }
    let length = u64::from_le_bytes(head.get(at + 1..at + 9)?.try_into().ok()?);
    let end = (at as u64)
        .checked_add(RECORD_PREFIX)?
        .checked_add(length)?;
    header_in(&input.read(at as u64..end).ok()?, 0)
}

/// The Header record at `at` of `record`, which starts at file offset `MAGIC.len() - at`.
fn header_in(record: &[u8], at: usize) -> Option<Header<'static>> {
    let (opcode, start, end) = frame_at(record, at).ok()??;
    if opcode != op::HEADER {
        return None;
    }
    match parse_record(opcode, &record[start..end], MAGIC.len() as u64).ok()? {
        Record::Header(h) => Some(h.into_owned()),
        _ => None,
    }
}

/// The summary section from `footer.summary_start` to the footer at `footer_at`, read in one
/// piece with the footer (which its CRC covers).
fn from_summary_section(
    input: &Input,
    tail: &Tail,
    footer_at: u64,
    footer: Footer,
    verify_crc: bool,
) -> Result<Summary> {
    let start = footer.summary_start;
    if start < MAGIC.len() as u64 || start > footer_at {
        return Err(McapError::invalid(
            footer_at,
            "Footer",
            format!("summary_start {} is outside the file", footer.summary_start),
        ));
    }
    let crc_end = footer_at + FOOTER_RECORD_LEN - 4;
    let section = tail
        .get(input, start..crc_end)
        .map_err(|source| McapError::Io {
            offset: start,
            source,
        })?;
    if verify_crc && footer.summary_crc != 0 {
        let computed = crc32(&section);
        if computed != footer.summary_crc {
            return Err(McapError::CrcMismatch {
                offset: footer_at,
                what: "summary",
                stored: footer.summary_crc,
                computed,
            });
        }
    }
    let mut summary = Summary::empty(SummarySource::SummarySection);
    summary.footer = Some(footer);
    let records = &section[..(footer_at - start) as usize];
    for raw in RecordSplitter::new(records, start) {
        let raw = raw?;
        summary.add(raw.parse()?);
    }
    Ok(summary)
}

/// Builds a summary from the data section `data[8..end]`: schemas and channels (also from
/// inside chunks), a ChunkIndex per chunk (with its message indexes when they follow it),
/// attachment and metadata indexes, and the messages outside chunks. Stops quietly at the first
/// damaged or truncated record: everything before it is usable.
pub(crate) fn scan(data: &[u8], end: usize, reason: &str) -> Result<Summary> {
    let data = Bytes::copy_from_slice(&data[..end.min(data.len())]);
    let end = data.len() as u64;
    scan_source(&mut Source::Slice(data), end, reason)
}

/// [`scan`] of the first `end` bytes of `input`: in place when it is in memory, otherwise
/// read once, front to back, through a window that holds a record at a time (a remote object
/// is never held whole).
pub(crate) fn scan_input(input: &Input, end: u64, reason: &str) -> Result<Summary> {
    if let Some(data) = input.in_memory() {
        let end = usize::try_from(end).unwrap_or(usize::MAX).min(data.len());
        return scan_source(&mut Source::Slice(data.slice(..end)), end as u64, reason);
    }
    let end = end.min(input.len());
    let window = Window::new(input.stream(0..end), Some(end), DEFAULT_CHUNK_LIMIT);
    scan_source(&mut Source::Stream(window), end, reason)
}

/// [`scan`] of `source`, which ends at `end`.
fn scan_source(source: &mut Source<'_>, end: u64, reason: &str) -> Result<Summary> {
    let mut summary = Summary::empty(SummarySource::Scan);
    summary.scan_reason = Some(reason.to_owned());
    let mut pos = MAGIC.len() as u64;
    let mut decompressor = Decompressor::new();
    let mut buffer = Vec::new();
    let mut last_chunk: Option<usize> = None;
    while pos < end {
        source.release(pos);
        let (opcode, start, record_end) = match source.frame_at(pos)? {
            Ok(Some(framed)) => framed,
            Ok(None) => break,
            Err(_) => {
                summary.scan_stopped_at = Some(pos);
                break;
            }
        };
        let offset = pos;
        pos = record_end;
        let content = source.bytes(start, record_end)?;
        let content = &content[..];
        if opcode == op::MESSAGE_INDEX {
            if let Some(i) = last_chunk
                && let Some(index) = summary.chunk_indexes.get_mut(i)
                && let Ok(Record::MessageIndex(mi)) = parse_record(opcode, content, offset)
            {
                index.message_index_offsets.insert(mi.channel_id, offset);
                index.message_index_length += RECORD_PREFIX + content.len() as u64;
            }
            continue;
        }
        last_chunk = None;
        let Ok(record) = parse_record(opcode, content, offset) else {
            continue;
        };
        match record {
            Record::Chunk(chunk) => {
                last_chunk = Some(summary.chunk_indexes.len());
                summary.chunk_indexes.push(ChunkIndex {
                    message_start_time: chunk.message_start_time,
                    message_end_time: chunk.message_end_time,
                    chunk_start_offset: offset,
                    chunk_length: RECORD_PREFIX + content.len() as u64,
                    message_index_offsets: BTreeMap::new(),
                    message_index_length: 0,
                    compression: std::borrow::Cow::Owned(chunk.compression.to_owned()),
                    compressed_size: chunk.records.len() as u64,
                    uncompressed_size: chunk.uncompressed_size,
                });
                // Channels defined only inside chunks are needed to filter by topic.
                if decompress_into(
                    &chunk,
                    offset,
                    DEFAULT_CHUNK_LIMIT,
                    &mut decompressor,
                    &mut buffer,
                )
                .is_ok()
                {
                    for raw in RecordSplitter::chunk_records(&buffer).flatten() {
                        if matches!(raw.opcode, op::SCHEMA | op::CHANNEL)
                            && let Ok(r) = raw.parse()
                        {
                            summary.add(r);
                        }
                    }
                }
            }
            Record::Message(m) => summary.loose_messages.push(LooseMessage {
                log_time: m.log_time,
                channel_id: m.channel_id,
                offset,
                length: record_end - offset,
            }),
            Record::Attachment(a) => summary.attachment_indexes.push(AttachmentIndex {
                offset,
                length: RECORD_PREFIX + content.len() as u64,
                log_time: a.log_time,
                create_time: a.create_time,
                data_size: a.data.len() as u64,
                name: std::borrow::Cow::Owned(a.name.into_owned()),
                media_type: std::borrow::Cow::Owned(a.media_type.into_owned()),
            }),
            Record::Metadata(m) => summary.metadata_indexes.push(MetadataIndex {
                offset,
                length: RECORD_PREFIX + content.len() as u64,
                name: std::borrow::Cow::Owned(m.name.into_owned()),
            }),
            Record::DataEnd(_) | Record::Footer(_) => break,
            other => summary.add(other),
        }
    }
    Ok(summary)
}
