//! A bag's chunks as the query engine sees them: chunk infos, INDEX_DATA records, and chunks
//! read through the input and decoded.

use std::sync::Arc;

use robolog_query::{ChunkMeta, Compression, Container, Decoded, Entry, Hit, Hits, Want};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk, decode_chunk_prefix};
use crate::error::{Error, Result};
use crate::format::framing::view_record;
use crate::format::records::{Header, parse_header};
use crate::format::time::RosTime;
use crate::linear::IndexEntry;
use crate::open::{BagData, ChunkEntry, ChunkIndex};

/// A wanted message of a loaded chunk (or, in format 1.2, of the file): where its record and
/// its payload are.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BagEntry {
    pub(crate) time_ns: u64,
    /// Offset of the message record in the chunk's content (in the file, for format 1.2).
    pub(crate) offset: u64,
    pub(crate) conn: u32,
    /// Where the payload starts, from the record's start (the header is smaller than 4 GiB).
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl BagEntry {
    /// The entry of the message whose record starts at `offset`, its payload at `data`.
    pub(crate) fn new(
        offset: usize,
        conn: u32,
        time: RosTime,
        data: std::ops::Range<usize>,
    ) -> Self {
        Self {
            time_ns: time.to_ns(),
            offset: offset as u64,
            conn,
            start: (data.start - offset) as u32,
            len: data.len() as u32,
        }
    }

    /// Where the payload is in the content.
    #[inline]
    pub(crate) fn data(&self) -> std::ops::Range<usize> {
        let start = self.offset as usize + self.start as usize;
        start..start + self.len as usize
    }
}

impl Entry for BagEntry {
    #[inline]
    fn time(&self) -> u64 {
        self.time_ns
    }
    #[inline]
    fn channel(&self) -> u32 {
        self.conn
    }
    #[inline]
    fn offset(&self) -> u64 {
        self.offset
    }
}

/// The chunks of one query.
#[derive(Debug)]
pub(crate) struct Chunks {
    pub(crate) data: Arc<BagData>,
    metas: Vec<ChunkMeta>,
}

impl Chunks {
    /// The chunks as the engine sees them. A chunk info does not say how its chunk is
    /// compressed: the headers already read say, and the first chunk `want` needs is read for
    /// the others (a bag's chunks are compressed alike), which only guides the choice of
    /// worker threads.
    pub(crate) fn new(data: Arc<BagData>, want: &Want) -> Self {
        let layout = |c: &ChunkEntry| c.layout(&data.input, &data.chunk_section).ok().cloned();
        let guess = data
            .chunks
            .iter()
            .find(|c| want.may_need(&meta(c, None)))
            .and_then(layout);
        let metas = data
            .chunks
            .iter()
            .map(|c| meta(c, c.known_layout().or(guess.as_ref())))
            .collect();
        Self { data, metas }
    }

    fn entry(&self, chunk: usize) -> Result<&ChunkEntry> {
        self.data
            .chunks
            .get(chunk)
            .ok_or_else(|| Error::index_damaged(0, "no such chunk"))
    }
}

/// A chunk as the engine sees it, with its layout when known.
fn meta(chunk: &ChunkEntry, layout: Option<&crate::open::ChunkLayout>) -> ChunkMeta {
    let info = &chunk.info;
    let mut channels: Vec<u32> = info
        .message_counts
        .iter()
        .filter(|&&(_, n)| n > 0)
        .map(|&(c, _)| c)
        .collect();
    channels.sort_unstable();
    channels.dedup();
    ChunkMeta {
        position: info.position,
        start_ns: info.start_ns,
        end_ns: info.end_ns,
        channels: Some(channels),
        messages: Some(info.message_counts.iter().map(|&(_, n)| u64::from(n)).sum()),
        compression: layout.map_or(Compression::None, |l| l.compression.codec()),
        uncompressed_size: layout.map_or(0, |l| u64::from(l.size)),
    }
}

impl Container for Chunks {
    type Entry = BagEntry;
    type Error = Error;

    fn topic_order(&self) -> Vec<u32> {
        let mut connections: Vec<(&str, u32)> = self
            .data
            .connections
            .iter()
            .map(|c| (c.topic.as_str(), c.id))
            .collect();
        connections.sort_unstable();
        connections.dedup();
        connections.into_iter().map(|(_, id)| id).collect()
    }

    fn chunks(&self) -> &[ChunkMeta] {
        &self.metas
    }

    fn index(&self, chunk: usize, want: &Want) -> Option<Hits> {
        let entry = self.data.chunks.get(chunk)?;
        let read;
        let all: &[IndexEntry] = match &entry.index {
            ChunkIndex::Records { count } => {
                read = read_chunk_index(&self.data, entry, *count)?;
                &read
            }
            ChunkIndex::Entries(entries) => entries,
        };
        let mut hits = Hits {
            wanted: Vec::with_capacity(all.len()),
            last_message: all.iter().map(|e| u64::from(e.offset)).max(),
        };
        for e in all {
            let time = e.time.to_ns();
            if want.wants(e.conn, time) {
                hits.wanted.push(Hit {
                    offset: u64::from(e.offset),
                    channel: e.conn,
                    time,
                });
            }
        }
        // Entries come per connection: in file order, they are merged here.
        if !hits.wanted.is_sorted_by_key(|h| h.offset) {
            hits.wanted.sort_unstable_by_key(|h| h.offset);
        }
        Some(hits)
    }

    fn read(&self, chunk: usize, prefix_to: Option<u64>, buffer: Vec<u8>) -> Result<Decoded> {
        let entry = self.entry(chunk)?;
        let data = &self.data;
        let layout = entry.layout(&data.input, &data.chunk_section)?;
        // An uncompressed chunk's records are where they are in the file.
        let file_offset =
            (layout.compression == ChunkCompression::None).then_some(layout.data.start as u64);
        if let Some(content) = &entry.salvaged {
            // The records a scan kept of a damaged chunk.
            return Ok(Decoded {
                content: content.clone(),
                whole: true,
                file_offset,
            });
        }
        let position = entry.info.position;
        let stored = data
            .input
            .read(layout.data.start as u64..layout.data.end as u64)
            .map_err(|source| Error::Read {
                offset: layout.data.start as u64,
                source,
            })?;
        // Entries address the content with `u32` offsets: the size comes from a `u32` field and
        // opening caps `max_chunk_size` at `u32::MAX`, so every content fits.
        let (compression, size, cap) = (layout.compression, layout.size, data.max_chunk_size);
        let (content, whole) = match prefix_to.and_then(|at| usize::try_from(at).ok()) {
            Some(last) => {
                decode_chunk_prefix(compression, &stored, size, cap, position, last, buffer)?
            }
            None => (
                decode_chunk(compression, &stored, size, cap, position, buffer)?,
                true,
            ),
        };
        Ok(Decoded {
            content,
            whole,
            file_offset,
        })
    }

    #[inline]
    fn message_at(&self, content: &[u8], offset: u64) -> Option<BagEntry> {
        message_at(content, usize::try_from(offset).ok()?)
    }

    fn walk(
        &self,
        chunk: usize,
        content: &[u8],
        want: &Want,
        out: &mut Vec<BagEntry>,
    ) -> Result<bool> {
        let info = &self.entry(chunk)?.info;
        let mut announced: Vec<(u32, u32)> = info
            .message_counts
            .iter()
            .copied()
            .filter(|&(_, n)| n > 0)
            .collect();
        let total: u64 = announced.iter().map(|&(_, n)| u64::from(n)).sum();
        // The count comes from the file: it sizes the list only as far as the content could hold
        // that many messages.
        let room = content.len() as u64 / MIN_MESSAGE_RECORD_LEN;
        out.reserve(usize::try_from(total.min(room)).unwrap_or(0).min(1 << 20));
        let mut counts: Vec<(u32, u32)> = Vec::with_capacity(announced.len());
        let mut offset = 0;
        while offset < content.len() {
            // Almost every record is a message in the usual layout: read it on the short path.
            let (conn, time, data, next) = match InnerWalker::message_at(content, offset) {
                Some(message) => message,
                None => match InnerWalker::record_at(content, offset)? {
                    (
                        InnerRecord::Message {
                            conn, time, data, ..
                        },
                        next,
                    ) => (conn, time, data, next),
                    (_, next) => {
                        offset = next;
                        continue;
                    }
                },
            };
            let at = std::mem::replace(&mut offset, next);
            match counts.iter_mut().find(|(c, _)| *c == conn) {
                Some((_, n)) => *n = n.saturating_add(1),
                None => counts.push((conn, 1)),
            }
            let time_ns = time.to_ns();
            if want.wants(conn, time_ns) {
                out.push(BagEntry::new(at, conn, time, data));
            }
        }
        announced.sort_unstable();
        counts.sort_unstable();
        // Connections the chunk info announces are defined (opening checks that), so equal
        // counts also mean that no message is on an undefined connection.
        let agrees = announced == counts;
        if !agrees {
            // Messages on connections that no CONNECTION record defines are left out, as the
            // scan of unindexed bags and the streaming reader leave them out: nothing could say
            // what they are.
            let connections = &self.data.connections;
            out.retain(|e| connections.binary_search_by_key(&e.conn, |c| c.id).is_ok());
        }
        Ok(agrees)
    }
}

/// The smallest message record: the two length fields and a header holding only `op`, `conn`
/// and `time` (each field is a 4-byte length, `name=` and the value: 8 + 13 + 17 bytes).
const MIN_MESSAGE_RECORD_LEN: u64 = 8 + 8 + 13 + 17;

/// The message record at `offset` of a chunk's content, skipping the connection records before
/// it (an index entry may point at one, as ROS writes them).
fn message_at(content: &[u8], offset: usize) -> Option<BagEntry> {
    if let Some((conn, time, data, _)) = InnerWalker::message_at(content, offset) {
        return Some(BagEntry::new(offset, conn, time, data));
    }
    let mut at = offset;
    loop {
        match InnerWalker::record_at(content, at).ok()? {
            (InnerRecord::Connection { .. }, next) => at = next,
            (
                InnerRecord::Message {
                    offset,
                    conn,
                    time,
                    data,
                },
                _,
            ) => return Some(BagEntry::new(offset, conn, time, data)),
            (InnerRecord::Other { .. }, _) => return None,
        }
    }
}

/// Reads a chunk's INDEX_DATA records (`count` of them, right after the chunk record); `None`
/// when they cannot be read or do not account for every message the chunk info announces.
fn read_chunk_index(data: &BagData, chunk: &ChunkEntry, count: u32) -> Option<Vec<IndexEntry>> {
    let layout = chunk.layout(&data.input, &data.chunk_section).ok()?;
    let start = layout.index_start as u64;
    // The records end before the next chunk (or the index section): read what they should
    // take, and the rest only if they take more.
    let end = data.next_chunk_after(chunk.info.position);
    let messages: u64 = chunk
        .info
        .message_counts
        .iter()
        .map(|&(_, n)| u64::from(n))
        .sum();
    let expected = u64::from(count) * 96 + 12 * messages;
    let mut region = data
        .input
        .read(start..end.min(start.saturating_add(expected)))
        .ok()?;
    let mut entries = Vec::new();
    let mut per_conn: Vec<(u32, u32)> = Vec::new();
    let mut pos = 0usize;
    for _ in 0..count {
        let mut record = view_record(region.get(pos..)?, start + pos as u64).ok();
        if !record.is_some_and(|r| r.is_complete()) && (start + region.len() as u64) < end {
            region = data.input.read(start..end).ok()?;
            record = view_record(region.get(pos..)?, start + pos as u64).ok();
        }
        let record = record.filter(|r| r.is_complete())?;
        let Ok(Header::IndexData(index)) = parse_header(record.header, record.header_offset())
        else {
            return None;
        };
        if index.ver != 1 || (record.data.len() as u64) < 12 * u64::from(index.count) {
            return None;
        }
        for e in record.data[..12 * index.count as usize].chunks_exact(12) {
            entries.push(IndexEntry {
                conn: index.conn,
                time: RosTime::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]),
                offset: u32::from_le_bytes([e[8], e[9], e[10], e[11]]),
            });
        }
        per_conn.push((index.conn, index.count));
        pos += record.len();
    }
    // The index must account for every message the chunk info announces.
    let mut announced = chunk.info.message_counts.clone();
    announced.sort_unstable();
    per_conn.sort_unstable();
    (announced == per_conn).then_some(entries)
}
