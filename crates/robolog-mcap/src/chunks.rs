//! An MCAP file's chunks as the query engine sees them: chunk indexes, message indexes, and
//! chunks read through the input and decoded.

use std::sync::{Arc, OnceLock};

use robolog_query::{ChunkMeta, Container, Decoded, Entry, Hit, Hits, Input, Want};

use crate::chunk::compression_from_name;
use crate::decode::{DecodeRules, chunk_in, decode_chunk};
use crate::draft::Dialect;
use crate::error::{McapError, Result};
use crate::linear::frame_at;
use crate::parse::{message_fast, parse_record};
use crate::records::{ChunkIndex, Record, op};
use crate::summary::Summary;

/// A message inside a decoded chunk (or, outside chunks, in the file).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MsgRef {
    pub(crate) log_time: u64,
    pub(crate) publish_time: u64,
    pub(crate) sequence: u32,
    pub(crate) channel_id: u16,
    /// Offset of the record inside its chunk (or in the file, outside chunks).
    pub(crate) offset: u64,
    pub(crate) data_start: usize,
    pub(crate) data_end: usize,
}

impl Entry for MsgRef {
    #[inline]
    fn time(&self) -> u64 {
        self.log_time
    }
    #[inline]
    fn channel(&self) -> u32 {
        u32::from(self.channel_id)
    }
    #[inline]
    fn offset(&self) -> u64 {
        self.offset
    }
}

/// The message record framed at `record_offset` of `data`, whose content is `data[start..end]`.
#[inline]
fn msg_ref(data: &[u8], record_offset: u64, start: usize, end: usize) -> Option<MsgRef> {
    let m = message_fast(data.get(start..end)?)?;
    Some(MsgRef {
        log_time: m.log_time,
        publish_time: m.publish_time,
        sequence: m.sequence,
        channel_id: m.channel_id,
        offset: record_offset,
        data_start: start + crate::parse::MESSAGE_HEADER_LEN,
        data_end: end,
    })
}

/// The Message record at `offset` of `data`, if one is there.
pub(crate) fn message_at(data: &[u8], offset: u64) -> Option<MsgRef> {
    let at = usize::try_from(offset).ok()?;
    match frame_at(data, at) {
        Ok(Some((op::MESSAGE, start, end))) => msg_ref(data, offset, start, end),
        _ => None,
    }
}

/// What a reader and its queries share: the input, the summary and the chunks as the engine
/// sees them.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) input: Input,
    pub(crate) summary: Summary,
    /// Built by the first query: opening a file for its summary alone does not pay for it.
    metas: OnceLock<Vec<ChunkMeta>>,
}

impl Shared {
    pub(crate) fn new(input: Input, summary: Summary) -> Self {
        Self {
            input,
            summary,
            metas: OnceLock::new(),
        }
    }

    /// The chunks as the engine sees them, in the order of the summary's chunk indexes.
    pub(crate) fn metas(&self) -> &[ChunkMeta] {
        self.metas
            .get_or_init(|| self.summary.chunk_indexes.iter().map(meta).collect())
    }
}

/// A chunk index as the engine sees it.
fn meta(index: &ChunkIndex<'_>) -> ChunkMeta {
    let offsets = &index.message_index_offsets;
    let channels = (!offsets.is_empty()).then(|| offsets.keys().map(|&id| u32::from(id)).collect());
    // Each MessageIndex record holds a 15-byte head and 16 bytes per message.
    let messages = (!offsets.is_empty()).then(|| {
        index
            .message_index_length
            .saturating_sub(15 * offsets.len() as u64)
            / 16
    });
    ChunkMeta {
        position: index.chunk_start_offset,
        start_ns: index.message_start_time,
        end_ns: index.message_end_time,
        channels,
        messages,
        compression: compression_from_name(&index.compression)
            .unwrap_or(robolog_query::Compression::None),
        uncompressed_size: index.uncompressed_size,
    }
}

/// The chunks of one query: the shared file and how this query decodes them.
#[derive(Debug)]
pub(crate) struct Chunks {
    pub(crate) shared: Arc<Shared>,
    pub(crate) rules: DecodeRules,
    /// Check the CRCs of uncompressed chunks too (compressed ones per `rules.verify_crc`).
    pub(crate) verify_uncompressed: bool,
}

impl Chunks {
    fn index_of(&self, chunk: usize) -> Option<&ChunkIndex<'static>> {
        self.shared.summary.chunk_indexes.get(chunk)
    }

    /// Reads the Chunk record a chunk index points at. The summary follows the chunks, so a
    /// Chunk record that does not fit in the file there means that the index is wrong (it points
    /// into the middle of a record, say), not that the file was cut: that is reported as damage,
    /// never as truncation.
    fn chunk_record(&self, index: &ChunkIndex<'_>) -> Result<robolog_query::Bytes> {
        let at = index.chunk_start_offset;
        let input = &self.shared.input;
        let misplaced = || {
            McapError::invalid(
                at,
                "ChunkIndex",
                format!("it points at byte {at}, where no complete Chunk record starts"),
            )
        };
        let read = |len: u64| match input.read(at..at.saturating_add(len)) {
            Ok(bytes) => Ok(bytes),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(misplaced()),
            Err(source) => Err(McapError::Io { offset: at, source }),
        };
        // The index's length, checked against the record's own: a record that says otherwise is
        // read as it says.
        let record = read(index.chunk_length.max(9))?;
        let own = record
            .get(1..9)
            .and_then(|b| <[u8; 8]>::try_from(b).ok())
            .map(|len| u64::from_le_bytes(len).saturating_add(9))
            .ok_or_else(misplaced)?;
        if own == record.len() as u64 {
            Ok(record)
        } else {
            read(own)
        }
    }
}

impl Container for Chunks {
    type Entry = MsgRef;
    type Error = McapError;

    fn chunks(&self) -> &[ChunkMeta] {
        self.shared.metas()
    }

    fn index(&self, chunk: usize, want: &Want) -> Option<Hits> {
        let index = self.index_of(chunk)?;
        let offsets = &index.message_index_offsets;
        if offsets.is_empty() {
            return None;
        }
        // The MessageIndex records follow the chunk: one read for all of them.
        let start = index.chunk_start_offset.checked_add(index.chunk_length)?;
        let region = self
            .shared
            .input
            .read(start..start.checked_add(index.message_index_length)?)
            .ok()?;
        let mut hits = Hits::default();
        let mut every_channel = true;
        let mut last_message = 0;
        for (&channel, &at) in offsets {
            if !want.wants_channel(u32::from(channel)) {
                every_channel = false;
                continue;
            }
            let pos = usize::try_from(at.checked_sub(start)?).ok()?;
            let (opcode, content_start, content_end) = frame_at(&region, pos).ok()??;
            if opcode != op::MESSAGE_INDEX {
                return None;
            }
            match parse_record(opcode, &region[content_start..content_end], at).ok()? {
                Record::MessageIndex(mi) if mi.channel_id == channel => {
                    for &(time, offset) in &mi.records {
                        last_message = last_message.max(offset);
                        if want.wants_time(time) {
                            hits.wanted.push(Hit {
                                offset,
                                channel: u32::from(channel),
                                time,
                            });
                        }
                    }
                }
                _ => return None,
            }
        }
        hits.wanted.sort_unstable_by_key(|h| h.offset);
        hits.wanted.dedup_by_key(|h| h.offset);
        hits.last_message = every_channel.then_some(last_message);
        Some(hits)
    }

    fn read(&self, chunk: usize, prefix_to: Option<u64>, buffer: Vec<u8>) -> Result<Decoded> {
        let index = self
            .index_of(chunk)
            .ok_or_else(|| McapError::invalid(0, "ChunkIndex", "no such chunk"))?;
        let at = index.chunk_start_offset;
        let record = self.chunk_record(index)?;
        let parsed = chunk_in(&record, at, Dialect::Ratified)?;
        let uncompressed = parsed.compression.is_empty();
        let rules = DecodeRules {
            verify_crc: self.rules.verify_crc && (self.verify_uncompressed || !uncompressed),
            ..self.rules
        };
        let (content, whole) = decode_chunk(&record, &parsed, at, prefix_to, rules, buffer)?;
        // Where the records of an uncompressed chunk start in the file.
        let file_offset = uncompressed
            .then(|| at + (parsed.records.as_ptr() as usize - record.as_ptr() as usize) as u64);
        Ok(Decoded {
            content,
            whole,
            file_offset,
        })
    }

    fn topic_order(&self) -> Vec<u32> {
        let mut channels: Vec<(&str, u16)> = self
            .shared
            .summary
            .channels
            .values()
            .map(|c| (&*c.topic, c.id))
            .collect();
        channels.sort_unstable();
        channels.into_iter().map(|(_, id)| u32::from(id)).collect()
    }

    fn prefetch(&self, chunks: &[usize], want: &Want) {
        // Each chunk record, and the MessageIndex records right after it when the query will
        // read them (it does unless it wants every message of the chunk).
        let ranges: Vec<std::ops::Range<u64>> = chunks
            .iter()
            .filter_map(|&chunk| {
                let index = self.index_of(chunk)?;
                let meta = self.shared.metas().get(chunk)?;
                let start = index.chunk_start_offset;
                let mut end = start.checked_add(index.chunk_length)?;
                if !want.wants_whole(meta) && !index.message_index_offsets.is_empty() {
                    end = end.checked_add(index.message_index_length)?;
                }
                Some(start..end)
            })
            .collect();
        self.shared.input.prefetch(&ranges);
    }

    #[inline]
    fn message_at(&self, content: &[u8], offset: u64) -> Option<MsgRef> {
        message_at(content, offset)
    }

    fn walk(
        &self,
        chunk: usize,
        content: &[u8],
        want: &Want,
        out: &mut Vec<MsgRef>,
    ) -> Result<bool> {
        let mut pos = 0usize;
        loop {
            let frame = frame_at(content, pos).map_err(|_| {
                let at = self.index_of(chunk).map_or(0, |c| c.chunk_start_offset);
                McapError::invalid(
                    at,
                    "Chunk",
                    format!("its records end inside a record at uncompressed byte {pos}"),
                )
            })?;
            let Some((opcode, start, end)) = frame else {
                return Ok(true);
            };
            if opcode == op::MESSAGE
                && let Some(m) = msg_ref(content, pos as u64, start, end)
                && want.wants(u32::from(m.channel_id), m.log_time)
            {
                out.push(m);
            }
            pos = end;
        }
    }
}
