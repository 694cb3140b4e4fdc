//! The indexed reader: footer → summary → chunk indexes, then only the chunks a query needs,
//! decompressed on worker threads and merged in log-time (or file) order.

use std::cmp::{Ordering, Reverse};
use std::collections::binary_heap::PeekMut;
use std::collections::{BTreeSet, BinaryHeap};
use std::path::Path;
use std::sync::Arc;

use robolog_framing::{Bytes, Compression, ParallelMap, RecyclePool, crc32, load_file};

use crate::chunk::compression_from_name;
use crate::decode::{BufferPool, DecodeRules, chunk_at, decode_chunk};
use crate::draft;
use crate::error::{McapError, Result};
use crate::linear::{LinearReader, frame_at};
use crate::message::OwnedMessage;
use crate::options::{Layout, ReadOptions};
use crate::parse::{attachment_crc_span, message_fast, parse_record};
use crate::records::{
    Attachment, AttachmentIndex, ChunkIndex, Message, Metadata, MetadataIndex, Record, op,
};
use crate::summary::{self, Summary, SummarySource};

/// Reads an MCAP file through its index.
///
/// ```
/// use robolog_mcap::{McapReader, Order, Writer, WriteOptions, Message};
/// let mut w = Writer::new(Vec::new(), WriteOptions::default())?;
/// let ch = w.register_channel("/a", "json", 0, Default::default())?;
/// for t in [3u64, 1, 2] {
///     w.write_message(&Message { channel_id: ch, sequence: 0, log_time: t, publish_time: t, data: b"{}" })?;
/// }
/// let reader = McapReader::open(w.finish()?.into())?;
/// let times: Vec<u64> = reader
///     .messages()
///     .topics(["/a"])
///     .time_range(1, 3)
///     .order(Order::LogTime)
///     .iter()?
///     .map(|m| m.map(|m| m.log_time))
///     .collect::<Result<_, _>>()?;
/// assert_eq!(times, [1, 2]);
/// # Ok::<(), robolog_mcap::McapError>(())
/// ```
#[derive(Debug, Clone)]
pub struct McapReader {
    data: Bytes,
    opts: ReadOptions,
    summary: Summary,
    draft: bool,
}

impl McapReader {
    /// Opens a file held in memory, with default options.
    pub fn open(data: Bytes) -> Result<Self> {
        Self::with_options(data, ReadOptions::default())
    }

    /// Memory-maps the file at `path` and opens it.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self> {
        let data = load_file(path).map_err(|source| McapError::Io { offset: 0, source })?;
        Self::open(data)
    }

    /// Opens a file held in memory.
    pub fn with_options(data: Bytes, opts: ReadOptions) -> Result<Self> {
        let draft = match opts.layout {
            Layout::Draft => true,
            Layout::Ratified => false,
            Layout::Auto => draft::detect(&data) == Some(Layout::Draft),
        };
        if opts.layout == Layout::Ratified && draft::detect(&data) == Some(Layout::Draft) {
            return Err(McapError::DraftLayout {
                offset: (data.len() - draft::FOOTER_RECORD_LEN - 8) as u64,
            });
        }
        let summary = if draft {
            draft_summary(&data, &opts)?
        } else {
            summary::load(&data, opts.verify_summary_crc)?
        };
        Ok(Self {
            data,
            opts,
            summary,
            draft,
        })
    }

    /// The summary: schemas, channels, statistics and indexes.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The whole file.
    pub fn data(&self) -> &Bytes {
        &self.data
    }

    /// True when the file is in the pre-ratification draft layout.
    pub fn is_draft(&self) -> bool {
        self.draft
    }

    /// Starts a message query (all messages in log-time order unless narrowed).
    pub fn messages(&self) -> MessageQuery<'_> {
        MessageQuery {
            reader: self,
            topics: None,
            channels: None,
            start: 0,
            end: u64::MAX,
            end_inclusive: true,
            order: Order::LogTime,
        }
    }

    /// The attachment indexes.
    pub fn attachments(&self) -> &[AttachmentIndex<'static>] {
        &self.summary.attachment_indexes
    }

    /// The metadata indexes.
    pub fn metadata_indexes(&self) -> &[MetadataIndex<'static>] {
        &self.summary.metadata_indexes
    }

    fn record_at(&self, offset: u64, length: u64, expected: u8) -> Result<Record<'_>> {
        let at = usize::try_from(offset).unwrap_or(usize::MAX);
        let (opcode, start, end) = frame_at(&self.data, at)?.ok_or(McapError::Truncated {
            offset,
            record: crate::records::record_name(expected),
            what: "record",
        })?;
        if opcode != expected || (length != 0 && (end - at) as u64 != length) {
            return Err(McapError::invalid(
                offset,
                crate::records::record_name(expected),
                format!(
                    "the index points at opcode {opcode:#04x} of {} bytes, expected {} of {length}",
                    end - at,
                    crate::records::record_name(expected)
                ),
            ));
        }
        if self.draft {
            draft::parse_record(opcode, &self.data[start..end], offset, 0)?
                .ok_or_else(|| McapError::invalid(offset, "record", "empty draft record"))
        } else {
            parse_record(opcode, &self.data[start..end], offset)
        }
    }

    /// Reads the attachment an index entry points at, checking its CRC.
    pub fn read_attachment(&self, index: &AttachmentIndex<'_>) -> Result<Attachment<'_>> {
        let expected = if self.draft {
            draft::op::ATTACHMENT
        } else {
            op::ATTACHMENT
        };
        match self.record_at(index.offset, index.length, expected)? {
            Record::Attachment(a) => {
                if self.opts.verify_attachment_crcs && a.crc != 0 && !self.draft {
                    let start = index.offset as usize + 9;
                    let covered = &self.data[start..start + attachment_crc_span(&a)];
                    let computed = crc32(covered);
                    if computed != a.crc {
                        return Err(McapError::CrcMismatch {
                            offset: index.offset,
                            what: "attachment",
                            stored: a.crc,
                            computed,
                        });
                    }
                }
                Ok(a)
            }
            _ => Err(McapError::invalid(
                index.offset,
                "Attachment",
                "not an attachment",
            )),
        }
    }

    /// Reads the Metadata record an index entry points at.
    pub fn read_metadata(&self, index: &MetadataIndex<'_>) -> Result<Metadata<'_>> {
        match self.record_at(index.offset, index.length, op::METADATA)? {
            Record::Metadata(m) => Ok(m),
            _ => Err(McapError::invalid(
                index.offset,
                "Metadata",
                "not a metadata record",
            )),
        }
    }
}

/// A summary for a draft file, from a linear pass (draft files are small and rare; their index
/// section is not trusted to match the ratified one).
fn draft_summary(data: &Bytes, opts: &ReadOptions) -> Result<Summary> {
    let mut reader = LinearReader::with_options(
        data.clone(),
        opts.clone().with_layout(Layout::Draft).with_threads(0),
    );
    let mut s = summary::scan(&[], 0, "draft layout")?;
    s.source = SummarySource::Scan;
    while let Some(record) = reader.next_record() {
        match record? {
            Record::Header(h) => s.header = Some(h.into_owned()),
            Record::Schema(x) => {
                s.schemas
                    .entry(x.id)
                    .or_insert_with(|| Arc::new(x.into_owned()));
            }
            Record::Channel(x) => {
                s.channels
                    .entry(x.id)
                    .or_insert_with(|| Arc::new(x.into_owned()));
            }
            Record::Statistics(x) => s.statistics = Some(x),
            Record::AttachmentIndex(x) => s.attachment_indexes.push(x.into_owned()),
            Record::Footer(f) => s.footer = Some(f),
            _ => {}
        }
    }
    Ok(s)
}

/// The order in which a query returns messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// By log time, earliest first; equal times in file order.
    LogTime,
    /// By log time, latest first (the exact reverse of [`Order::LogTime`]).
    ReverseLogTime,
    /// As stored in the file.
    File,
}

/// Which messages a query returns, built with [`McapReader::messages`].
///
/// A query decodes only the chunks whose index entries (time range, and with a topic or channel
/// filter, their message indexes) say they hold wanted messages. With a topic or channel filter
/// and message indexes, each chunk is decoded only up to the end of its last wanted message
/// (unless that is most of the chunk, which is then decoded whole), and its CRC is checked only
/// when that is the whole chunk (see
/// [`ReadOptions::decode_whole_chunks`](crate::ReadOptions::decode_whole_chunks)).
/// Uncompressed chunks are served from the input unchecked unless
/// [`ReadOptions::verify_uncompressed_chunks`](crate::ReadOptions::verify_uncompressed_chunks)
/// is on.
#[derive(Debug, Clone)]
pub struct MessageQuery<'r> {
    reader: &'r McapReader,
    topics: Option<Vec<String>>,
    channels: Option<BTreeSet<u16>>,
    start: u64,
    end: u64,
    end_inclusive: bool,
    order: Order,
}

impl<'r> MessageQuery<'r> {
    /// Only messages on these topics (combined with [`MessageQuery::channel_ids`] as a union).
    pub fn topics<S: AsRef<str>>(mut self, topics: impl IntoIterator<Item = S>) -> Self {
        self.topics = Some(topics.into_iter().map(|t| t.as_ref().to_owned()).collect());
        self
    }

    /// Only messages on these channel ids.
    pub fn channel_ids(mut self, ids: impl IntoIterator<Item = u16>) -> Self {
        self.channels = Some(ids.into_iter().collect());
        self
    }

    /// Only messages with `start <= log_time < end`.
    pub fn time_range(mut self, start: u64, end: u64) -> Self {
        self.start = start;
        self.end = end;
        self.end_inclusive = false;
        self
    }

    /// Only messages with `log_time >= start`.
    pub fn start_time(mut self, start: u64) -> Self {
        self.start = start;
        self
    }

    /// The order of the results.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Runs the query.
    pub fn iter(self) -> Result<MessageIter> {
        let reader = self.reader;
        let filter = Filter {
            channels: self.wanted_channels(),
            start: self.start,
            end: self.end,
            end_inclusive: self.end_inclusive,
        };
        if reader.draft {
            return Ok(draft_iter(reader, filter, self.order));
        }
        let summary = &reader.summary;
        let mut chunks: Vec<ChunkIndex<'static>> = summary
            .chunk_indexes
            .iter()
            .filter(|c| filter.may_contain(c))
            .cloned()
            .collect();
        match self.order {
            Order::File => chunks.sort_by_key(|c| c.chunk_start_offset),
            Order::LogTime => {
                chunks.sort_by_key(|c| (c.message_start_time, c.chunk_start_offset));
            }
            Order::ReverseLogTime => {
                chunks.sort_by_key(|c| Reverse((c.message_end_time, c.chunk_start_offset)));
            }
        }
        let mut loose: Vec<MsgRef> = summary
            .loose_messages
            .iter()
            .filter(|m| filter.wants(m.channel_id, m.log_time))
            .filter_map(|m| loose_ref(&reader.data, m.offset))
            .collect();
        if self.order != Order::File {
            loose.sort_by_key(|m| m.log_time);
        }
        if self.order == Order::ReverseLogTime {
            loose.reverse();
        }
        let pending_starts = chunks.iter().map(|c| bound_of(c, self.order)).collect();
        // Worker threads pay for themselves only over enough decoding work.
        let work: u64 = chunks
            .iter()
            .map(decoding_work)
            .fold(0, u64::saturating_add);
        let threads = if chunks.len() < 2 || work < reader.opts.parallel_min_bytes {
            0
        } else {
            reader.opts.threads
        };
        let pool = BufferPool::default();
        let job_pool = pool.clone();
        let lists = ListPool::new(LIST_POOL_MAX);
        let job_lists = lists.clone();
        let data = reader.data.clone();
        let mut opts = reader.opts.clone();
        // A chunk's other half goes to any free thread of the process's pool, which may hold
        // more threads than this read asked for: so only a read that asked for two or more.
        opts.split_lz4_chunks &= threads > 1;
        let order = self.order;
        let job_filter = filter.clone();
        let jobs = chunks
            .into_iter()
            .map(move |c| (c, job_pool.take(), job_lists.take()));
        let decoded = ParallelMap::new(
            jobs,
            threads,
            reader.opts.in_flight(),
            move |(index, recycled, msgs)| {
                decode_job(&data, &index, &job_filter, order, &opts, recycled, msgs)
            },
        );
        let mut iter = MessageIter {
            order,
            decoded: Box::new(decoded),
            pending_starts,
            next_chunk: 0,
            heap: BinaryHeap::new(),
            cursors: Vec::new(),
            pool,
            lists,
            retired: None,
            cached: 0,
            cache_limit: reader.opts.cache_bytes,
            input: reader.data.clone(),
            opts: reader.opts.clone(),
            failed: false,
            stale_top: false,
        };
        if !loose.is_empty() {
            iter.push_cursor(Cursor {
                data: Some(reader.data.clone()),
                loose: true,
                chunk_offset: 0,
                prefix_to: None,
                msgs: loose,
                next: 0,
            });
        }
        Ok(iter)
    }

    fn wanted_channels(&self) -> Option<BTreeSet<u16>> {
        if self.topics.is_none() && self.channels.is_none() {
            return None;
        }
        let mut wanted = self.channels.clone().unwrap_or_default();
        if let Some(topics) = &self.topics {
            for channel in self.reader.summary.channels.values() {
                if topics.iter().any(|t| *t == channel.topic) {
                    wanted.insert(channel.id);
                }
            }
        }
        Some(wanted)
    }
}

/// What decoding a chunk costs, in bytes of LZ4 chunk decoded on one core: the unit of
/// `ReadOptions::parallel_min_bytes`. zstd decodes about 8 times slower than LZ4 here; an
/// uncompressed chunk counts a sixteenth: listing its messages reads every record's header,
/// which in chunks of small messages is work enough for the workers even with the CRC unchecked
/// (the benchmark's W1 log-time read: 36 ms on the reading thread, 23 ms on two workers).
fn decoding_work(chunk: &ChunkIndex<'_>) -> u64 {
    match compression_from_name(&chunk.compression) {
        Some(Compression::None) => chunk.uncompressed_size / 16,
        Some(Compression::Zstd) => chunk.uncompressed_size.saturating_mul(8),
        _ => chunk.uncompressed_size,
    }
}

#[derive(Debug, Clone)]
struct Filter {
    channels: Option<BTreeSet<u16>>,
    start: u64,
    end: u64,
    end_inclusive: bool,
}

impl Filter {
    #[inline]
    fn wants_time(&self, t: u64) -> bool {
        t >= self.start && (t < self.end || (self.end_inclusive && t == self.end))
    }

    #[inline]
    fn wants(&self, channel_id: u16, t: u64) -> bool {
        self.wants_time(t)
            && self
                .channels
                .as_ref()
                .is_none_or(|c| c.contains(&channel_id))
    }

    /// Whether a chunk may hold wanted messages (its index can rule it out).
    fn may_contain(&self, c: &ChunkIndex<'_>) -> bool {
        let overlaps = c.message_start_time <= c.message_end_time
            && c.message_end_time >= self.start
            && (c.message_start_time < self.end
                || (self.end_inclusive && c.message_start_time == self.end));
        let has_channel = match &self.channels {
            Some(wanted) if !c.message_index_offsets.is_empty() => {
                c.message_index_offsets.keys().any(|id| wanted.contains(id))
            }
            _ => true,
        };
        overlaps && has_channel
    }
}

/// A message inside a decoded buffer.
#[derive(Debug, Clone, Copy)]
struct MsgRef {
    log_time: u64,
    publish_time: u64,
    sequence: u32,
    channel_id: u16,
    /// Offset of the record inside its chunk (or in the file, for loose messages).
    offset: u64,
    data_start: usize,
    data_end: usize,
}

fn msg_ref(content_start: usize, record_offset: u64, content: &[u8]) -> Option<MsgRef> {
    let m = message_fast(content)?;
    Some(MsgRef {
        log_time: m.log_time,
        publish_time: m.publish_time,
        sequence: m.sequence,
        channel_id: m.channel_id,
        offset: record_offset,
        data_start: content_start + 22,
        data_end: content_start + content.len(),
    })
}

fn loose_ref(data: &[u8], offset: u64) -> Option<MsgRef> {
    let at = usize::try_from(offset).ok()?;
    let (_, start, end) = frame_at(data, at).ok()??;
    msg_ref(start, offset, &data[start..end])
}

struct Decoded {
    index: ChunkIndex<'static>,
    data: Bytes,
    /// The record up to whose end `data` was decoded, when only a prefix was.
    prefix_to: Option<u64>,
    msgs: Vec<MsgRef>,
}

/// The chunk a chunk index points at. The summary follows the chunks, so a Chunk record that
/// does not fit in the file there means that the index is wrong (it points into the middle of
/// a record, say), not that the file was cut: that is reported as damage, never as truncation.
fn indexed_chunk_at(input: &[u8], at: u64) -> Result<crate::records::Chunk<'_>> {
    chunk_at(input, at, false).map_err(|e| {
        if e.is_truncation() {
            McapError::invalid(
                at,
                "ChunkIndex",
                format!("it points at byte {at}, where no complete Chunk record starts"),
            )
        } else {
            e
        }
    })
}

/// Decodes one chunk and lists its wanted messages in the query's order, into `msgs` (an empty
/// list whose allocation is reused).
fn decode_job(
    input: &Bytes,
    index: &ChunkIndex<'static>,
    filter: &Filter,
    order: Order,
    opts: &ReadOptions,
    recycled: Vec<u8>,
    mut msgs: Vec<MsgRef>,
) -> Result<Decoded> {
    let at = index.chunk_start_offset;
    let indexed = match &filter.channels {
        Some(wanted) if !index.message_index_offsets.is_empty() => {
            message_index_offsets(input, index, wanted, filter)
        }
        _ => None,
    };
    // The chunk overlaps the query's time range, but its message indexes say that none of the
    // wanted channels' messages fall inside it (the chunks at either end of a range, say): it
    // is not read at all.
    if indexed.as_ref().is_some_and(|o| o.wanted.is_empty()) {
        return Ok(Decoded {
            index: index.clone(),
            // Empty, but holding the recycled allocation, which goes back to the pool with
            // the chunk: dropped here, the next query would allocate (and fault in) a new one.
            data: Bytes::from(recycled),
            prefix_to: None,
            msgs,
        });
    }
    // In a sound chunk, every wanted message ends by the end of the last one the indexes list.
    let mut prefix_to = match &indexed {
        Some(Offsets {
            wanted,
            last_message,
        }) if !opts.decode_whole_chunks => wanted
            .last()
            .copied()
            .filter(|&last| !prefix_is_most_of_chunk(index, last, *last_message)),
        _ => None,
    };
    let mut data = decode_records(input, at, prefix_to, opts, recycled)?;
    match indexed.map(|o| o.wanted) {
        Some(offsets) => {
            let mut listed = list_indexed(&data, &offsets, filter, &mut msgs);
            // A damaged length can make an earlier wanted record reach past the last one's
            // end, over records the prefix left out: read such a chunk whole, as a whole-chunk
            // query would.
            if let (Err(Unlisted { framed: false, .. }), Some(_)) = (&listed, prefix_to) {
                let recycled = crate::chunk::recycle(data).unwrap_or_default();
                prefix_to = None;
                data = decode_records(input, at, None, opts, recycled)?;
                msgs.clear();
                listed = list_indexed(&data, &offsets, filter, &mut msgs);
            }
            if let Err(Unlisted { offset, .. }) = listed {
                return Err(McapError::invalid(
                    at,
                    "MessageIndex",
                    format!(
                        "an index entry points at uncompressed byte {offset}, which is not a message"
                    ),
                ));
            }
        }
        None => {
            let mut pos = 0usize;
            while let Some((opcode, start, end)) = frame_at(&data, pos).map_err(|_| {
                McapError::invalid(
                    at,
                    "Chunk",
                    format!("its records end inside a record at uncompressed byte {pos}"),
                )
            })? {
                if opcode == op::MESSAGE
                    && let Some(m) = msg_ref(start, pos as u64, &data[start..end])
                    && filter.wants(m.channel_id, m.log_time)
                {
                    msgs.push(m);
                }
                pos = end;
            }
        }
    }
    // Messages are usually written in log-time order already; a stable sort would still
    // allocate scratch space for half the list.
    let sorted = order == Order::File || msgs.is_sorted_by_key(|m| m.log_time);
    if !sorted {
        msgs.sort_by_key(|m| m.log_time);
    }
    if order == Order::ReverseLogTime {
        msgs.reverse();
    }
    Ok(Decoded {
        index: index.clone(),
        data,
        prefix_to,
        msgs,
    })
}

/// An index entry that does not point at a message: `framed` is false when no complete record
/// starts there.
struct Unlisted {
    offset: u64,
    framed: bool,
}

/// Appends the wanted messages at `offsets` in `data` to `msgs`.
fn list_indexed(
    data: &[u8],
    offsets: &[u64],
    filter: &Filter,
    msgs: &mut Vec<MsgRef>,
) -> std::result::Result<(), Unlisted> {
    for &offset in offsets {
        let pos = usize::try_from(offset).unwrap_or(usize::MAX);
        match frame_at(data, pos) {
            Ok(Some((op::MESSAGE, start, end))) => {
                if let Some(m) = msg_ref(start, offset, &data[start..end])
                    && filter.wants(m.channel_id, m.log_time)
                {
                    msgs.push(m);
                }
            }
            framed => {
                return Err(Unlisted {
                    offset,
                    framed: framed.is_ok(),
                });
            }
        }
    }
    Ok(())
}

/// The records of the chunk at `at`: all of them, or with `prefix_to`, those up to the end of
/// the record at that offset.
fn decode_records(
    input: &Bytes,
    at: u64,
    prefix_to: Option<u64>,
    opts: &ReadOptions,
    recycled: Vec<u8>,
) -> Result<Bytes> {
    let chunk = indexed_chunk_at(input, at)?;
    let verify = opts.verify_chunk_crcs
        && (opts.verify_uncompressed_chunks || !chunk.compression.is_empty());
    let rules = DecodeRules {
        limit: opts.record_limit,
        verify_crc: verify,
        in_halves: opts.split_lz4_chunks,
    };
    decode_chunk(input, &chunk, at, prefix_to, rules, recycled)
}

/// What a chunk's message indexes say about a query's messages in it.
struct Offsets {
    /// Offsets of the wanted messages, ascending.
    wanted: Vec<u64>,
    /// The offset of the chunk's last message, when the query wants every channel in the chunk
    /// (so that every message index was read).
    last_message: Option<u64>,
}

/// Whether decoding a chunk up to the end of the message at `last` costs about as much as
/// decoding all of it, which is then the better choice: one pass over the whole chunk is the
/// decoder's fastest path, and lets the CRC be checked. That is so when `last` is the chunk's
/// last message, and for zstd when it starts in the chunk's last eighth: stopping a zstd frame
/// early needs its streaming decoder, which costs about a fifth more per byte than one call
/// into a buffer that holds the whole frame (measured on the benchmark's W2 images: 15 % more
/// time in the sequence decoder, plus 5 % copying out of its window).
fn prefix_is_most_of_chunk(index: &ChunkIndex<'_>, last: u64, last_message: Option<u64>) -> bool {
    last_message == Some(last)
        || (compression_from_name(&index.compression) == Some(Compression::Zstd)
            && last >= index.uncompressed_size - index.uncompressed_size / 8)
}

/// Offsets (in file order) of the wanted channels' messages from the MessageIndex records, or
/// `None` when they cannot be read (then the chunk is scanned).
fn message_index_offsets(
    input: &[u8],
    index: &ChunkIndex<'_>,
    wanted: &BTreeSet<u16>,
    filter: &Filter,
) -> Option<Offsets> {
    let mut offsets = Vec::new();
    let mut every_channel = true;
    let mut last_message = 0;
    for (channel, &at) in &index.message_index_offsets {
        if !wanted.contains(channel) {
            every_channel = false;
            continue;
        }
        let pos = usize::try_from(at).ok()?;
        let (opcode, start, end) = frame_at(input, pos).ok()??;
        if opcode != op::MESSAGE_INDEX {
            return None;
        }
        match parse_record(opcode, &input[start..end], at).ok()? {
            Record::MessageIndex(mi) if mi.channel_id == *channel => {
                for &(t, o) in &mi.records {
                    last_message = last_message.max(o);
                    if filter.wants_time(t) {
                        offsets.push(o);
                    }
                }
            }
            _ => return None,
        }
    }
    offsets.sort_unstable();
    offsets.dedup();
    Some(Offsets {
        wanted: offsets,
        last_message: every_channel.then_some(last_message),
    })
}

/// Message lists handed back by the merge for decode jobs to fill again: a list of a chunk's
/// messages is about a third of the chunk's size, and a fresh one per chunk costs its growth,
/// page faults and giving the memory back to the system.
type ListPool = RecyclePool<Vec<MsgRef>>;

/// Lists a pool keeps: more than the chunks in flight and the cursors of a time-ordered read
/// need at once in the usual case.
const LIST_POOL_MAX: usize = 64;

/// The time before which (in the query's order) a chunk cannot contribute.
fn bound_of(c: &ChunkIndex<'_>, order: Order) -> u64 {
    match order {
        Order::ReverseLogTime => c.message_end_time,
        Order::LogTime => c.message_start_time,
        Order::File => c.chunk_start_offset,
    }
}

struct Cursor {
    /// The decoded chunk, or `None` while evicted from the cache (decoded again when due).
    data: Option<Bytes>,
    /// Messages outside chunks, whose offsets are file offsets (their data is the input).
    loose: bool,
    chunk_offset: u64,
    /// How much of the chunk was decoded (see [`Decoded::prefix_to`]).
    prefix_to: Option<u64>,
    msgs: Vec<MsgRef>,
    next: usize,
}

/// Heap key. Time order: log time, then file position (chunk offset, offset inside the
/// chunk). File order: the file position alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    primary: u64,
    secondary: u64,
    tertiary: u64,
    cursor: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HeapEntry {
    key: Key,
    reverse: bool,
}

impl Ord for HeapEntry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: forward order pops the smallest key.
        if self.reverse {
            self.key.cmp(&other.key)
        } else {
            other.key.cmp(&self.key)
        }
    }
}

impl PartialOrd for HeapEntry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

type DecodedStream = Box<dyn Iterator<Item = Result<Decoded>> + Send>;

/// The messages of a query, their data as `Bytes` slices of the decoded chunks.
///
/// Chunks are decoded a few ahead on worker threads. In time order a chunk is decoded only when
/// the merge reaches its start time, and its buffer is released (and recycled) as soon as its
/// last wanted message has been handed out. When chunks overlap in time so much that the decoded
/// ones exceed [`ReadOptions::cache_bytes`], the chunk needed last is dropped and decoded again
/// when its turn comes: memory stays bounded by the cache, never by the file.
pub struct MessageIter {
    order: Order,
    decoded: DecodedStream,
    pending_starts: Vec<u64>,
    next_chunk: usize,
    heap: BinaryHeap<HeapEntry>,
    cursors: Vec<Option<Cursor>>,
    pool: BufferPool,
    lists: ListPool,
    /// A finished chunk buffer, recycled on the next call, once the caller has (usually) dropped
    /// the last message that pointed into it.
    retired: Option<Bytes>,
    /// Bytes of decoded chunks held, and the most allowed (at least one chunk is always kept).
    cached: usize,
    cache_limit: usize,
    /// For decoding evicted chunks again.
    input: Bytes,
    opts: ReadOptions,
    failed: bool,
    /// The heap's only entry is behind its cursor: [`MessageIter::next_from_only_chunk`] took
    /// messages without updating it.
    stale_top: bool,
}

impl std::fmt::Debug for MessageIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MessageIter")
            .field("order", &self.order)
            .field("next_chunk", &self.next_chunk)
            .field("chunks", &self.pending_starts.len())
            .finish_non_exhaustive()
    }
}

/// The heap entry of `cursor`'s next message, or `None` when it has none left.
fn entry_of(cursors: &[Option<Cursor>], order: Order, cursor: usize) -> Option<HeapEntry> {
    let c = cursors.get(cursor)?.as_ref()?;
    let m = c.msgs.get(c.next)?;
    // A loose message's own file offset is its position; a chunked one sits at its chunk's.
    let (major, minor) = if c.loose {
        (m.offset, 0)
    } else {
        (c.chunk_offset, m.offset)
    };
    let key = match order {
        Order::File => Key {
            primary: major,
            secondary: minor,
            tertiary: 0,
            cursor,
        },
        _ => Key {
            primary: m.log_time,
            secondary: major,
            tertiary: minor,
            cursor,
        },
    };
    Some(HeapEntry {
        key,
        reverse: order == Order::ReverseLogTime,
    })
}

impl MessageIter {
    fn key(&self, cursor: usize) -> Option<HeapEntry> {
        entry_of(&self.cursors, self.order, cursor)
    }

    fn push_cursor(&mut self, cursor: Cursor) {
        if cursor.msgs.is_empty() {
            if let Some(data) = cursor.data {
                self.pool.give(data);
            }
            self.lists.give_cleared(cursor.msgs);
            return;
        }
        if !cursor.loose {
            self.cached += cursor.data.as_ref().map_or(0, Bytes::len);
        }
        let slot = match self.cursors.iter().position(Option::is_none) {
            Some(free) => {
                self.cursors[free] = Some(cursor);
                free
            }
            None => {
                self.cursors.push(Some(cursor));
                self.cursors.len() - 1
            }
        };
        if let Some(entry) = self.key(slot) {
            self.heap.push(entry);
        }
        self.evict(None);
    }

    /// Keeps the decoded chunks within the cache limit: while over it, drops the buffer of the
    /// chunk whose next message is due last (it is decoded again when its turn comes). `keep`
    /// is the cursor about to be read.
    fn evict(&mut self, keep: Option<usize>) {
        while self.cached > self.cache_limit {
            let victim = self
                .cursors
                .iter()
                .enumerate()
                .filter(|(i, c)| {
                    Some(*i) != keep && c.as_ref().is_some_and(|c| !c.loose && c.data.is_some())
                })
                .filter_map(|(i, _)| self.key(i))
                .min()
                .map(|entry| entry.key.cursor);
            let Some(victim) = victim else { return };
            if let Some(c) = self.cursors.get_mut(victim).and_then(Option::as_mut)
                && let Some(data) = c.data.take()
            {
                self.cached -= data.len();
                self.pool.give(data);
            }
        }
    }

    /// Decodes an evicted chunk again.
    fn reload(&mut self, cursor: usize) -> Result<()> {
        let Some(c) = self.cursors.get(cursor).and_then(Option::as_ref) else {
            return Ok(());
        };
        if c.data.is_some() || c.loose {
            return Ok(());
        }
        let data = decode_records(
            &self.input,
            c.chunk_offset,
            c.prefix_to,
            &self.opts,
            self.pool.take(),
        )?;
        self.cached += data.len();
        if let Some(c) = self.cursors.get_mut(cursor).and_then(Option::as_mut) {
            c.data = Some(data);
        }
        self.evict(Some(cursor));
        Ok(())
    }

    /// Loads the next chunk in load order.
    fn load_next(&mut self) -> Result<bool> {
        if self.next_chunk >= self.pending_starts.len() {
            return Ok(false);
        }
        self.next_chunk += 1;
        match self.decoded.next() {
            Some(Ok(decoded)) => {
                self.push_cursor(Cursor {
                    data: Some(decoded.data),
                    loose: false,
                    chunk_offset: decoded.index.chunk_start_offset,
                    prefix_to: decoded.prefix_to,
                    msgs: decoded.msgs,
                    next: 0,
                });
                Ok(true)
            }
            Some(Err(e)) => Err(e),
            None => Ok(false),
        }
    }

    /// Whether the next chunk to load might hold a message that sorts before the heap's top.
    fn must_load(&self) -> bool {
        match self.heap.peek() {
            Some(top) => self.loads_before(top.key.primary),
            None => self.next_chunk < self.pending_starts.len(),
        }
    }

    /// Whether the next chunk to load might hold a message that sorts before one whose key
    /// starts with `primary`.
    #[inline]
    fn loads_before(&self, primary: u64) -> bool {
        let Some(&bound) = self.pending_starts.get(self.next_chunk) else {
            return false;
        };
        match self.order {
            Order::File | Order::LogTime => bound <= primary,
            Order::ReverseLogTime => bound >= primary,
        }
    }

    /// Takes the heap's next message: its entry, and the cursor it came from, or `None` when
    /// that cursor has finished (its buffer then waits in `retired` until the next call).
    fn pop(&mut self) -> Option<Result<(MsgRef, Option<usize>)>> {
        let cursor = self.heap.peek()?.key.cursor;
        if let Err(e) = self.reload(cursor) {
            return Some(Err(e));
        }
        // The cursor's next entry replaces its current one at the top of the heap, which sinks
        // it only as far as it belongs: when chunks do not overlap in time (the usual case) the
        // heap holds one entry and that is no work at all, where a pop and a push would sift
        // twice.
        let mut top = self.heap.peek_mut()?;
        let c = self.cursors.get_mut(cursor)?.as_mut()?;
        let m = *c.msgs.get(c.next)?;
        c.next += 1;
        if c.next < c.msgs.len()
            && let Some(next) = entry_of(&self.cursors, self.order, cursor)
        {
            *top = next;
            return Some(Ok((m, Some(cursor))));
        }
        PeekMut::pop(top);
        if let Some(done) = self.cursors[cursor].take() {
            self.lists.give_cleared(done.msgs);
            if let Some(data) = done.data {
                if !done.loose {
                    self.cached -= data.len();
                }
                if let Some(old) = self.retired.replace(data) {
                    self.pool.give(old);
                }
            }
        }
        Some(Ok((m, None)))
    }

    /// The next message's entry and where its data is, after recycling the buffer the previous
    /// call finished with.
    fn advance(&mut self) -> Option<Result<(MsgRef, Option<usize>)>> {
        if self.failed {
            return None;
        }
        if let Some(old) = self.retired.take() {
            self.pool.give(old);
        }
        if let Some(found) = self.next_from_only_chunk() {
            return Some(Ok(found));
        }
        if self.stale_top {
            self.stale_top = false;
            let cursor = self.heap.peek().map(|top| top.key.cursor);
            if let Some(entry) = cursor.and_then(|c| self.key(c))
                && let Some(mut top) = self.heap.peek_mut()
            {
                *top = entry;
            }
        }
        let result = loop {
            if self.must_load() {
                match self.load_next() {
                    Ok(_) => continue,
                    Err(e) => break Some(Err(e)),
                }
            }
            break self.pop();
        };
        if matches!(result, Some(Err(_))) {
            self.failed = true;
        }
        result
    }

    /// The usual case, on a short path: one chunk is open (chunks that do not overlap in time
    /// come one after the other), its next message is not its last, and no chunk still to load
    /// can hold an earlier one. Then that message is next, and the heap is not touched: its
    /// entry is brought up to date when the general path runs again.
    #[inline]
    fn next_from_only_chunk(&mut self) -> Option<(MsgRef, Option<usize>)> {
        if self.heap.len() != 1 {
            return None;
        }
        let cursor = self.heap.peek()?.key.cursor;
        let c = self.cursors.get(cursor)?.as_ref()?;
        if c.data.is_none() || c.next + 1 >= c.msgs.len() {
            return None;
        }
        let next = self.key(cursor)?;
        if self.loads_before(next.key.primary) {
            return None;
        }
        let c = self.cursors.get_mut(cursor)?.as_mut()?;
        let m = *c.msgs.get(c.next)?;
        c.next += 1;
        self.stale_top = true;
        Some((m, Some(cursor)))
    }

    /// The buffer holding the data of a message that [`MessageIter::pop`] took from `cursor`.
    fn buffer(&self, cursor: Option<usize>) -> Option<&Bytes> {
        match cursor {
            Some(c) => self.cursors.get(c)?.as_ref()?.data.as_ref(),
            None => self.retired.as_ref(),
        }
    }

    /// Lends the next message: like [`Iterator::next`], but the message's data is borrowed from
    /// its chunk until the next call, which saves a reference count per message when each one
    /// is only looked at once.
    ///
    /// ```no_run
    /// use robolog_mcap::McapReader;
    /// let reader = McapReader::from_file("recording.mcap")?;
    /// let mut messages = reader.messages().iter()?;
    /// let mut bytes = 0;
    /// while let Some(message) = messages.next_ref() {
    ///     bytes += message?.data.len();
    /// }
    /// # Ok::<(), robolog_mcap::McapError>(())
    /// ```
    pub fn next_ref(&mut self) -> Option<Result<Message<'_>>> {
        let (m, cursor) = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        let data = self.buffer(cursor)?.get(m.data_start..m.data_end)?;
        Some(Ok(Message {
            channel_id: m.channel_id,
            sequence: m.sequence,
            log_time: m.log_time,
            publish_time: m.publish_time,
            data,
        }))
    }
}

impl Iterator for MessageIter {
    type Item = Result<OwnedMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        let (m, cursor) = match self.advance()? {
            Ok(found) => found,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(OwnedMessage {
            channel_id: m.channel_id,
            sequence: m.sequence,
            log_time: m.log_time,
            publish_time: m.publish_time,
            data: self.buffer(cursor)?.slice(m.data_start..m.data_end),
        }))
    }
}

/// Draft files: a linear pass, filtered and sorted in memory.
fn draft_iter(reader: &McapReader, filter: Filter, order: Order) -> MessageIter {
    let opts = reader.opts.clone().with_layout(Layout::Draft);
    let all: Vec<Result<OwnedMessage>> = LinearReader::with_options(reader.data.clone(), opts)
        .into_messages()
        .filter(|m| match m {
            Ok(m) => filter.wants(m.channel_id, m.log_time),
            Err(_) => true,
        })
        .collect();
    let mut msgs: Vec<Result<OwnedMessage>> = all;
    if order != Order::File {
        msgs.sort_by_key(|m| m.as_ref().map(|m| m.log_time).unwrap_or(u64::MAX));
    }
    if order == Order::ReverseLogTime {
        msgs.reverse();
    }
    let stream = DraftStream {
        msgs: msgs.into_iter(),
    };
    MessageIter {
        order: Order::File,
        decoded: Box::new(std::iter::empty()),
        pending_starts: Vec::new(),
        next_chunk: 0,
        heap: BinaryHeap::new(),
        cursors: Vec::new(),
        pool: BufferPool::default(),
        lists: ListPool::new(LIST_POOL_MAX),
        retired: None,
        cached: 0,
        cache_limit: usize::MAX,
        input: Bytes::new(),
        opts: reader.opts.clone(),
        failed: false,
        stale_top: false,
    }
    .with_draft(stream)
}

struct DraftStream {
    msgs: std::vec::IntoIter<Result<OwnedMessage>>,
}

impl MessageIter {
    fn with_draft(mut self, stream: DraftStream) -> Self {
        // Each draft message becomes a one-message cursor over its own buffer, in the final
        // order, keyed by its position.
        for (i, m) in stream.msgs.enumerate() {
            let Ok(m) = m else { continue };
            let len = m.data.len();
            self.push_cursor(Cursor {
                data: Some(m.data.clone()),
                loose: true,
                chunk_offset: i as u64 + 1,
                prefix_to: None,
                msgs: vec![MsgRef {
                    log_time: m.log_time,
                    publish_time: m.publish_time,
                    sequence: m.sequence,
                    channel_id: m.channel_id,
                    offset: i as u64,
                    data_start: 0,
                    data_end: len,
                }],
                next: 0,
            });
        }
        self
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::collections::{BTreeMap, BTreeSet};

    use super::{Filter, decode_job};
    use crate::chunk::recycle;
    use crate::{Bytes, McapReader, Message, Order, ReadOptions, WriteOptions, Writer};

    #[test]
    fn a_skipped_chunk_hands_its_recycled_buffer_back() {
        let mut w = Writer::new(Vec::new(), WriteOptions::default()).unwrap();
        let channel = w.register_channel("/a", "raw", 0, BTreeMap::new()).unwrap();
        for t in [100, 200] {
            w.write_message(&Message {
                channel_id: channel,
                sequence: 0,
                log_time: t,
                publish_time: t,
                data: b"x",
            })
            .unwrap();
        }
        let file = Bytes::from(w.finish().unwrap());
        let reader = McapReader::open(file.clone()).unwrap();
        let index = reader.summary().chunk_indexes[0].clone();
        // The chunk spans 100..=200; its only channel has nothing in 150..180.
        let filter = Filter {
            channels: Some(BTreeSet::from([channel])),
            start: 150,
            end: 180,
            end_inclusive: false,
        };
        let buffer = Vec::with_capacity(1 << 20);
        let opts = ReadOptions::default();
        let decoded = decode_job(
            &file,
            &index,
            &filter,
            Order::LogTime,
            &opts,
            buffer,
            Vec::new(),
        )
        .unwrap();
        assert!(decoded.msgs.is_empty());
        assert!(decoded.data.is_empty());
        let back = recycle(decoded.data).unwrap();
        assert!(back.capacity() >= 1 << 20, "capacity {}", back.capacity());
    }
}
