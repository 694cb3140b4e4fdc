//! Queries over an open bag: which connections, which times, in which order; and the iterator
//! that decodes the chunks it needs (in parallel) and merges their messages.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::RangeBounds;
use std::sync::Arc;

use robolog_framing::{Bytes, InclusiveRange, ParallelMap, RecyclePool, default_threads};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk, decode_chunk_prefix};
use crate::connection::Connection;
use crate::error::Result;
use crate::format::framing::view_record;
use crate::format::records::{Header, parse_header};
use crate::format::time::RosTime;
use crate::open::{Bag, BagData, ChunkEntry, ChunkIndex, ChunkLayout};
use crate::scan::IndexEntry;
use crate::summary::ChunkInfo;

/// The records in uncompressed chunks from which a query walks them on worker threads: about
/// 2 ms of walking, against some 0.1 ms to start the threads.
const UNCOMPRESSED_RECORDS_FOR_THREADS: u64 = 64 * 1024;

/// The order messages come out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Order {
    /// By time; equal times by chunk position in the file, then by position in the chunk.
    #[default]
    Time,
    /// As stored in the file.
    File,
}

/// Where a message record is in the file, for diagnostics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Position {
    /// Absolute offset of the record in the file (format 1.2, and uncompressed chunks).
    File(u64),
    /// A record inside a compressed chunk.
    Chunk {
        /// Offset of the CHUNK record in the file.
        chunk: u64,
        /// Offset of the message record in the decompressed chunk data.
        offset: u32,
    },
}

/// One message: its connection, time and serialized bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The connection id (see [`Bag::connection`]).
    pub conn: u32,
    /// The record time in nanoseconds.
    pub time_ns: u64,
    /// The serialized ROS 1 message: a slice of the file for uncompressed chunks, of the
    /// decompressed chunk otherwise.
    pub data: Bytes,
    /// Where the record is.
    pub position: Position,
}

/// One message lent by [`Messages::next_ref`]: the same fields as [`Message`], its data borrowed
/// from the chunk instead of shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRef<'a> {
    /// The connection id (see [`Bag::connection`]).
    pub conn: u32,
    /// The record time in nanoseconds.
    pub time_ns: u64,
    /// The serialized ROS 1 message.
    pub data: &'a [u8],
    /// Where the record is.
    pub position: Position,
}

/// A query over a bag's messages, built with chained calls and run by iterating it.
///
/// The chunk infos and index records choose the chunks to read, and a compressed chunk is
/// decoded only up to the end of its last wanted message: the small topics ahead of the camera
/// image that closes a chunk cost none of the image's decoding.
///
/// ```no_run
/// use robolog_rosbag::{Bag, Order};
/// let bag = Bag::from_file("recording.bag")?;
/// let t0 = bag.summary().start_ns.unwrap_or(0);
/// let query = bag
///     .messages()
///     .topics(["/imu", "/gps"])
///     .time_range(t0..t0 + 10_000_000_000)
///     .order(Order::Time);
/// for message in query {
///     let message = message?;
///     println!("{} on connection {}", message.time_ns, message.conn);
/// }
/// # Ok::<(), robolog_rosbag::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Query {
    bag: Bag,
    topics: Option<Vec<String>>,
    connections: Option<Vec<u32>>,
    start: u64,
    end: u64,
    empty_range: bool,
    order: Order,
    threads: Option<usize>,
}

impl Query {
    pub(crate) fn new(bag: Bag) -> Self {
        Self {
            bag,
            topics: None,
            connections: None,
            start: 0,
            end: u64::MAX,
            empty_range: false,
            order: Order::Time,
            threads: None,
        }
    }

    /// Only messages on these topics (every connection of each topic).
    pub fn topics<S: Into<String>>(mut self, topics: impl IntoIterator<Item = S>) -> Self {
        self.topics = Some(topics.into_iter().map(Into::into).collect());
        self
    }

    /// Only messages on these connection ids.
    pub fn connections(mut self, ids: impl IntoIterator<Item = u32>) -> Self {
        self.connections = Some(ids.into_iter().collect());
        self
    }

    /// Only messages whose time (nanoseconds) is in `range`.
    pub fn time_range(mut self, range: impl RangeBounds<u64>) -> Self {
        let range = InclusiveRange::new(range);
        self.start = range.first;
        self.end = range.last;
        self.empty_range = range.empty;
        self
    }

    /// The order messages come out in (time order by default).
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Worker threads that load upcoming chunks: they decompress them, or walk the records of
    /// uncompressed ones (0 = everything on the calling thread). By default as many as the
    /// machine has cores once the query needs two compressed chunks, or uncompressed chunks
    /// holding 65,536 records or more.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    fn selection(&self) -> Selection {
        let data = &self.bag.inner;
        let mut conns: Option<Vec<u32>> = None;
        if let Some(topics) = &self.topics {
            conns = Some(
                data.connections
                    .iter()
                    .filter(|c| topics.contains(&c.topic))
                    .map(|c| c.id)
                    .collect(),
            );
        }
        if let Some(ids) = &self.connections {
            conns = Some(match conns {
                Some(by_topic) => by_topic.into_iter().filter(|id| ids.contains(id)).collect(),
                None => ids.clone(),
            });
        }
        if let Some(c) = &mut conns {
            c.sort_unstable();
            c.dedup();
        }
        if self.empty_range {
            conns = Some(Vec::new());
        }
        Selection {
            conns,
            start: self.start,
            end: self.end,
        }
    }

    /// Runs the query.
    pub fn iter(self) -> Messages {
        let selection = Arc::new(self.selection());
        let data = Arc::clone(&self.bag.inner);
        if !data.v12_messages.is_empty() || data.chunks.is_empty() {
            let mut picked: Vec<Message> = data
                .v12_messages
                .iter()
                .filter(|m| selection.wants(m.conn, m.time))
                .map(|m| Message {
                    conn: m.conn,
                    time_ns: m.time.to_ns(),
                    data: data.file.slice(m.data.clone()),
                    position: Position::File(m.offset),
                })
                .collect();
            if self.order == Order::Time {
                picked.sort_by_key(|m| (m.time_ns, position_key(m.position)));
            }
            return Messages {
                state: State::Ready {
                    messages: picked.into(),
                    lent: None,
                },
            };
        }
        let mut chunks: Vec<usize> = (0..data.chunks.len())
            .filter(|&i| selection.may_need(&data.chunks[i]))
            .collect();
        if self.order == Order::Time {
            chunks.sort_by_key(|&i| (data.chunks[i].info.start_ns, data.chunks[i].info.position));
        } else {
            chunks.sort_by_key(|&i| data.chunks[i].info.position);
        }
        // Reads the headers of the chunks the query needs (those it reads anyway); a damaged
        // one is reported when its turn comes.
        let compressed = chunks.iter().any(|&i| {
            data.chunks[i]
                .layout(&data.file, &data.chunk_section)
                .is_ok_and(|layout| layout.compression != ChunkCompression::None)
        });
        // Loading chunks ahead on workers pays when it means decompressing them, and for
        // uncompressed chunks once they hold many records: the workers then walk the records
        // (taking the page faults of a memory-mapped file) while the caller reads the chunk
        // before. For a few thousand records, starting the threads costs more than it saves.
        let worth_threads = if compressed {
            chunks.len() > 1
        } else {
            let records: u64 = chunks
                .iter()
                .flat_map(|&i| &data.chunks[i].info.message_counts)
                .map(|&(_, n)| u64::from(n))
                .sum();
            records >= UNCOMPRESSED_RECORDS_FOR_THREADS
        };
        let threads = self
            .threads
            .unwrap_or(if worth_threads { default_threads() } else { 0 });
        let starts: VecDeque<u64> = chunks
            .iter()
            .map(|&i| data.chunks[i].info.start_ns)
            .collect();
        let order = self.order;
        let job_data = Arc::clone(&data);
        let job_selection = Arc::clone(&selection);
        // At most a few chunks are loaded ahead at a time; idle values beyond that would only
        // hold memory.
        let pool = BufferPool::new(4);
        let job_pool = pool.clone();
        let lists = ListPool::new(8);
        let job_lists = lists.clone();
        let jobs = ParallelMap::new(
            chunks.into_iter(),
            threads,
            (threads * 2).max(1),
            move |i| {
                let recycled = (job_pool.take(), job_lists.take());
                load_chunk(&job_data, i, &job_selection, order, recycled)
            },
        );
        Messages {
            state: State::Chunks(Box::new(Pipeline {
                jobs,
                starts,
                order,
                heap: BinaryHeap::new(),
                batches: Vec::new(),
                free: Vec::new(),
                finished: None,
                stale_top: false,
                pool,
                lists,
                retired: Vec::new(),
            })),
        }
    }
}

impl IntoIterator for Query {
    type Item = Result<Message>;
    type IntoIter = Messages;

    fn into_iter(self) -> Messages {
        self.iter()
    }
}

fn position_key(p: Position) -> (u64, u64) {
    match p {
        Position::File(o) => (o, 0),
        Position::Chunk { chunk, offset } => (chunk, u64::from(offset)),
    }
}

#[derive(Debug)]
struct Selection {
    /// Sorted connection ids, or `None` for all.
    conns: Option<Vec<u32>>,
    start: u64,
    end: u64,
}

impl Selection {
    #[inline]
    fn wants_conn(&self, conn: u32) -> bool {
        self.conns
            .as_ref()
            .is_none_or(|c| c.binary_search(&conn).is_ok())
    }

    #[inline]
    fn wants(&self, conn: u32, time: RosTime) -> bool {
        let t = time.to_ns();
        t >= self.start && t <= self.end && self.wants_conn(conn)
    }

    /// From the chunk info alone: is every message of the chunk wanted?
    fn wants_whole(&self, chunk: &ChunkEntry) -> bool {
        self.conns.is_none() && self.start <= chunk.info.start_ns && chunk.info.end_ns <= self.end
    }

    /// From the chunk info alone: could the chunk hold a wanted message?
    fn may_need(&self, chunk: &ChunkEntry) -> bool {
        chunk.info.end_ns >= self.start
            && chunk.info.start_ns <= self.end
            && chunk
                .info
                .message_counts
                .iter()
                .any(|&(conn, n)| n > 0 && self.wants_conn(conn))
    }
}

/// A wanted message of a loaded chunk: where its record and its payload are in the chunk's
/// content. Offsets fit in `u32` because no chunk's content is larger (see [`load_chunk`]).
#[derive(Debug, Clone, Copy)]
struct Entry {
    time_ns: u64,
    conn: u32,
    /// Offset of the message record in the content.
    offset: u32,
    start: u32,
    end: u32,
}

/// The wanted messages of one chunk, sorted for the query's order, and the content they are in.
/// Messages are made from entries only when they are handed out, so that the jobs that load
/// chunks on other threads never touch the content's reference count, and [`Messages::next_ref`]
/// can lend them without touching it at all.
#[derive(Debug)]
struct Batch {
    chunk: u64,
    /// Where the content starts in the file, for uncompressed chunks (whose messages' positions
    /// are file offsets); `None` for decompressed content.
    file_offset: Option<u64>,
    content: Bytes,
    /// Whether `content` is a decode buffer of ours, to recycle once the batch is done.
    owned: bool,
    entries: Vec<Entry>,
    /// The next entry to hand out.
    cursor: usize,
}

impl Batch {
    /// A batch with nothing in it, for a free slot.
    fn empty() -> Self {
        Batch {
            chunk: 0,
            file_offset: None,
            content: Bytes::new(),
            owned: false,
            entries: Vec::new(),
            cursor: 0,
        }
    }

    fn head(&self) -> Option<&Entry> {
        self.entries.get(self.cursor)
    }

    /// The time-order heap key of the next entry, this batch being in `slot`: time, then
    /// position in the file.
    fn head_key(&self, slot: usize) -> Option<(u64, u64, u32, usize)> {
        self.head().map(|e| (e.time_ns, self.chunk, e.offset, slot))
    }

    fn position(&self, e: &Entry) -> Position {
        match self.file_offset {
            Some(start) => Position::File(start + u64::from(e.offset)),
            None => Position::Chunk {
                chunk: self.chunk,
                offset: e.offset,
            },
        }
    }

    fn message(&self, e: &Entry) -> Message {
        Message {
            conn: e.conn,
            time_ns: e.time_ns,
            data: self.content.slice(e.start as usize..e.end as usize),
            position: self.position(e),
        }
    }

    fn message_ref(&self, e: &Entry) -> MessageRef<'_> {
        MessageRef {
            conn: e.conn,
            time_ns: e.time_ns,
            data: self
                .content
                .get(e.start as usize..e.end as usize)
                .unwrap_or_default(),
            position: self.position(e),
        }
    }
}

/// Decode buffers of finished chunks, for the jobs that decode later ones.
type BufferPool = RecyclePool<Vec<u8>>;

/// Takes a chunk's buffer back when no message points into it any more.
fn recycle_buffer(pool: &BufferPool, decoded: Bytes) {
    if let Ok(buffer) = decoded.try_into_mut() {
        // Not cleared: the decoder reuses the initialised length without zero-filling it.
        pool.give(Vec::from(buffer));
    }
}

/// Entry lists of finished chunks, handed back empty for the jobs that load later ones.
type ListPool = RecyclePool<Vec<Entry>>;

/// Reads the chunk's INDEX_DATA records, `count` of them from `start`.
fn read_chunk_index(
    file: &[u8],
    start: usize,
    count: u32,
    chunk: &ChunkInfo,
) -> Option<Vec<IndexEntry>> {
    let mut entries = Vec::new();
    let mut per_conn: Vec<(u32, u32)> = Vec::new();
    let mut pos = start;
    for _ in 0..count {
        let record = view_record(file.get(pos..)?, pos as u64).ok()?;
        if !record.is_complete() {
            return None;
        }
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
    let mut announced = chunk.message_counts.clone();
    announced.sort_unstable();
    per_conn.sort_unstable();
    (announced == per_conn).then_some(entries)
}

fn load_chunk(
    data: &BagData,
    i: usize,
    selection: &Selection,
    order: Order,
    (recycled, list): (Vec<u8>, Vec<Entry>),
) -> Result<Batch> {
    let entry = &data.chunks[i];
    let chunk = Chunk {
        info: &entry.info,
        layout: entry.layout(&data.file, &data.chunk_section)?,
    };
    if selection.wants_whole(entry)
        && entry.salvaged.is_none()
        && matches!(entry.index, ChunkIndex::Records { .. })
    {
        // Every message of the chunk is wanted: walking its records in order is cheaper than
        // reading its index and resolving every entry, and needs no sort when, as usual, the
        // chunk is in time order. The walk is trusted only when it finds exactly the messages
        // the chunk info announces (so the index, which must agree with the chunk info, would
        // have given the same ones); otherwise the index decides, as below.
        let (content, _) = decode(data, chunk, None, recycled)?;
        let list = match walk_whole_chunk(&content, chunk, selection, list) {
            Ok(entries) => {
                // A walk finds the records in file order.
                let entries = match order {
                    Order::File => entries,
                    Order::Time => sorted(entries, order),
                };
                return Ok(batch(chunk, content, chunk.compressed(), entries));
            }
            Err(list) => list,
        };
        return load_indexed_chunk(data, entry, chunk, selection, order, Ok(content), list);
    }
    load_indexed_chunk(data, entry, chunk, selection, order, Err(recycled), list)
}

/// Decodes a chunk (uncompressed ones are sliced, not copied) into `recycled`'s allocation: all
/// of it, or with `up_to`, an offset from the chunk's index, only up to the end of the record
/// there (see [`decode_chunk_prefix`]). Says whether the content is the whole chunk.
fn decode(
    data: &BagData,
    chunk: Chunk<'_>,
    up_to: Option<u32>,
    recycled: Vec<u8>,
) -> Result<(Bytes, bool)> {
    // Entries address the content with `u32` offsets: the size comes from a `u32` field and
    // opening caps `max_chunk_size` at `u32::MAX`, so every content fits.
    let stored = data.file.slice(chunk.layout.data.clone());
    let (compression, size) = (chunk.layout.compression, chunk.layout.size);
    let (cap, position) = (data.max_chunk_size, chunk.info.position);
    match up_to {
        Some(last) => decode_chunk_prefix(
            compression,
            &stored,
            size,
            cap,
            position,
            last as usize,
            recycled,
        ),
        None => decode_chunk(compression, &stored, size, cap, position, recycled)
            .map(|content| (content, true)),
    }
}

fn batch(chunk: Chunk<'_>, content: Bytes, owned: bool, entries: Vec<Entry>) -> Batch {
    Batch {
        chunk: chunk.info.position,
        file_offset: (!chunk.compressed()).then_some(chunk.layout.data.start as u64),
        content,
        owned,
        entries,
        cursor: 0,
    }
}

/// A chunk whose header has been read.
#[derive(Debug, Clone, Copy)]
struct Chunk<'a> {
    info: &'a ChunkInfo,
    layout: &'a ChunkLayout,
}

impl Chunk<'_> {
    fn compressed(self) -> bool {
        self.layout.compression != ChunkCompression::None
    }
}

/// Sorts a chunk's entries for the query's order (usually they already are).
fn sorted(mut entries: Vec<Entry>, order: Order) -> Vec<Entry> {
    match order {
        Order::Time => {
            let key = |e: &Entry| (e.time_ns, e.offset);
            if !entries.is_sorted_by_key(key) {
                entries.sort_by_key(key);
            }
        }
        Order::File => {
            if !entries.is_sorted_by_key(|e| e.offset) {
                entries.sort_by_key(|e| e.offset);
            }
        }
    }
    entries
}

/// The smallest message record: the two length fields and a header holding only `op`, `conn`
/// and `time` (each field is a 4-byte length, `name=` and the value: 8 + 13 + 17 bytes).
const MIN_MESSAGE_RECORD_LEN: u64 = 8 + 8 + 13 + 17;

/// Every message of a decoded chunk, in file order, appended to the empty `list`, when the
/// chunk's records are all well formed and hold exactly the messages its chunk info counts per
/// connection; otherwise the list back, empty.
fn walk_whole_chunk(
    content: &[u8],
    chunk: Chunk<'_>,
    selection: &Selection,
    mut list: Vec<Entry>,
) -> std::result::Result<Vec<Entry>, Vec<Entry>> {
    match walk_whole_chunk_into(content, chunk, selection, &mut list) {
        Some(()) => Ok(list),
        None => {
            list.clear();
            Err(list)
        }
    }
}

fn walk_whole_chunk_into(
    content: &[u8],
    chunk: Chunk<'_>,
    selection: &Selection,
    entries: &mut Vec<Entry>,
) -> Option<()> {
    let announced: u64 = chunk
        .info
        .message_counts
        .iter()
        .map(|&(_, n)| u64::from(n))
        .sum();
    // The count comes from the file: a chunk that cannot hold that many messages lies (the walk
    // could never match it), and must not size an allocation.
    if announced > content.len() as u64 / MIN_MESSAGE_RECORD_LEN {
        return None;
    }
    entries.reserve(usize::try_from(announced).ok()?.min(1 << 20));
    let mut counts: Vec<(u32, u32)> = Vec::with_capacity(chunk.info.message_counts.len());
    let mut offset = 0;
    while offset < content.len() {
        // Almost every record is a message in the usual layout: read it on the short path.
        let (conn, time, data, next) = match InnerWalker::message_at(content, offset) {
            Some(message) => message,
            None => match InnerWalker::record_at(content, offset).ok()? {
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
            Some((_, n)) => *n = n.checked_add(1)?,
            None => counts.push((conn, 1)),
        }
        if selection.wants(conn, time) {
            entries.push(entry_at(at, conn, time, data));
        }
    }
    // Connections the chunk info announces are defined (opening checks that), so equal counts
    // also mean that no message is on an undefined connection.
    let mut announced = chunk.info.message_counts.clone();
    announced.retain(|&(_, n)| n > 0);
    announced.sort_unstable();
    counts.sort_unstable();
    (announced == counts).then_some(())
}

/// The entry of the message whose record starts at `offset` in a chunk's content, its payload
/// at `data`. Contents are smaller than 4 GiB (see [`decode`]).
fn entry_at(offset: usize, conn: u32, time: RosTime, data: std::ops::Range<usize>) -> Entry {
    Entry {
        time_ns: time.to_ns(),
        conn,
        offset: offset as u32,
        start: data.start as u32,
        end: data.end as u32,
    }
}

fn load_indexed_chunk(
    data: &BagData,
    entry: &ChunkEntry,
    chunk: Chunk<'_>,
    selection: &Selection,
    order: Order,
    decoded: std::result::Result<Bytes, Vec<u8>>,
    mut list: Vec<Entry>,
) -> Result<Batch> {
    let indexed = match &entry.index {
        ChunkIndex::Records { count } => {
            read_chunk_index(&data.file, chunk.layout.index_start, *count, chunk.info)
        }
        ChunkIndex::Entries(entries) => Some(entries.to_vec()),
    };
    let wanted: Option<Vec<IndexEntry>> = indexed.map(|all| {
        all.into_iter()
            .filter(|e| selection.wants(e.conn, e.time))
            .collect()
    });
    if wanted.as_ref().is_some_and(Vec::is_empty) {
        // The index proves there is nothing to decompress.
        return Ok(batch(chunk, Bytes::new(), false, list));
    }
    // The wanted messages all end by the end of the record the last index entry points at.
    let last = wanted
        .as_ref()
        .and_then(|w| w.iter().map(|e| e.offset).max());
    let (mut content, whole) = match (&entry.salvaged, decoded, last) {
        (Some(content), _, _) => (content.clone(), true),
        (None, Ok(content), _) => (content, true),
        (None, Err(recycled), last) => decode(data, chunk, last, recycled)?,
    };
    let resolve = |content: &[u8], list: &mut Vec<Entry>| {
        wanted.as_ref().is_some_and(|wanted| {
            list.reserve(wanted.len());
            wanted.iter().all(|e| {
                resolve_entry(content, e)
                    .map(|(offset, range)| list.push(entry_at(offset, e.conn, e.time, range)))
                    .is_some()
            })
        })
    };
    let mut resolved = resolve(&content, &mut list);
    if !resolved && !whole {
        // An entry that points at a connection record has its message after the record the
        // prefix ends with: decode the whole chunk and try again.
        list.clear();
        let recycled = content.try_into_mut().map(Vec::from).unwrap_or_default();
        (content, _) = decode(data, chunk, None, recycled)?;
        resolved = resolve(&content, &mut list);
    }
    if !resolved {
        // No usable index: walk the chunk. The scan that built the entries of unindexed bags
        // walked it already, so this is only reached when the file's index is inconsistent.
        list.clear();
        walk_chunk(&content, selection, &data.connections, &mut list)?;
    }
    let owned = entry.salvaged.is_none() && chunk.compressed();
    Ok(batch(chunk, content, owned, sorted(list, order)))
}

/// Finds the message an index entry points at (skipping connection records, as ROS does) and
/// checks that it is the one the entry describes.
fn resolve_entry(content: &[u8], entry: &IndexEntry) -> Option<(usize, std::ops::Range<usize>)> {
    let mut at = entry.offset as usize;
    if let Some((conn, time, data, _)) = InnerWalker::message_at(content, at) {
        return (conn == entry.conn && time == entry.time).then_some((at, data));
    }
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
            ) => {
                return (conn == entry.conn && time == entry.time).then_some((offset, data));
            }
            (InnerRecord::Other { .. }, _) => return None,
        }
    }
}

/// Every wanted message of a chunk, found by walking its records, appended to `entries`.
/// Messages on connections that no CONNECTION record defines are left out, as the scan of
/// unindexed bags and the streaming reader leave them out: nothing could say what they are.
fn walk_chunk(
    content: &[u8],
    selection: &Selection,
    connections: &[Connection],
    entries: &mut Vec<Entry>,
) -> Result<()> {
    for record in InnerWalker::new(content) {
        if let InnerRecord::Message {
            offset,
            conn,
            time,
            data,
        } = record?
            && selection.wants(conn, time)
            && connections.binary_search_by_key(&conn, |c| c.id).is_ok()
        {
            entries.push(entry_at(offset, conn, time, data));
        }
    }
    Ok(())
}

/// The iterator over a query's messages.
///
/// Besides iterating (each [`Message`] shares the chunk it is in), [`Messages::next_ref`] lends
/// the messages one at a time, which saves the reference counting per message when the caller
/// only looks at each message before taking the next.
#[derive(Debug)]
pub struct Messages {
    state: State,
}

#[derive(Debug)]
enum State {
    Ready {
        messages: VecDeque<Message>,
        /// The message [`Messages::next_ref`] lent last.
        lent: Option<Message>,
    },
    Chunks(Box<Pipeline>),
}

type Jobs = ParallelMap<std::vec::IntoIter<usize>, Result<Batch>>;

struct Pipeline {
    jobs: Jobs,
    /// Start times of the chunks not received yet, in dispatch order.
    starts: VecDeque<u64>,
    order: Order,
    /// Time order: the next entry of each open batch, keyed by (time, chunk, offset, slot).
    heap: BinaryHeap<Reverse<(u64, u64, u32, usize)>>,
    /// Open batches; in file order only the first is used (and retired when it runs out, on
    /// the call after its last message).
    batches: Vec<Batch>,
    /// Slots of `batches` free for the next batch.
    free: Vec<usize>,
    /// Time order: the slot whose last entry was handed out. Its batch stays until the next
    /// call, because [`Messages::next_ref`] lends from it.
    finished: Option<usize>,
    /// Time order: the heap's only entry is behind its batch, which
    /// [`Pipeline::next_in_only_batch`] advanced without updating it.
    stale_top: bool,
    pool: BufferPool,
    lists: ListPool,
    /// Decoded chunks whose messages have all been handed out; recycled before the next chunk
    /// is decoded (by then the caller has usually dropped those messages).
    retired: Vec<Bytes>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("pending_chunks", &self.starts.len())
            .field("open_batches", &self.heap.len())
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    fn receive(&mut self) -> Option<Result<Batch>> {
        for decoded in self.retired.drain(..) {
            recycle_buffer(&self.pool, decoded);
        }
        self.starts.pop_front();
        self.jobs.next()
    }

    /// Gives a finished batch's content and list back for later chunks.
    fn retire(&mut self, batch: Batch) {
        if batch.owned {
            self.retired.push(batch.content);
        }
        self.lists.give_cleared(batch.entries);
    }

    /// Puts `batch` in a free slot.
    fn open(&mut self, batch: Batch) -> usize {
        match self.free.pop() {
            Some(slot) => {
                self.batches[slot] = batch;
                slot
            }
            None => {
                self.batches.push(batch);
                self.batches.len() - 1
            }
        }
    }

    /// In file order, the current batch's next entry: the path of almost every message, kept
    /// small enough to inline. (A batch that runs out is retired by the next call's
    /// [`Pipeline::advance`], after the caller is done with the message lent from it.)
    #[inline]
    fn next_in_current_batch(&mut self) -> Option<Entry> {
        if self.order != Order::File {
            return None;
        }
        let batch = self.batches.first_mut()?;
        let e = *batch.entries.get(batch.cursor)?;
        batch.cursor += 1;
        Some(e)
    }

    /// In time order, the usual case on a short path: one batch is open (chunks that do not
    /// overlap in time come one after the other), its next entry is not its last, and no chunk
    /// still to come starts before that entry. Then it is next, and the heap is left alone: its
    /// entry is brought up to date by the next [`Pipeline::advance`].
    #[inline]
    fn next_in_only_batch(&mut self) -> Option<(usize, Entry)> {
        if self.order != Order::Time || self.heap.len() != 1 || self.finished.is_some() {
            return None;
        }
        let slot = self.heap.peek()?.0.3;
        let batch = self.batches.get(slot)?;
        if batch.cursor + 1 >= batch.entries.len() {
            return None;
        }
        let e = *batch.head()?;
        if self.receives_before(e.time_ns) {
            return None;
        }
        self.batches.get_mut(slot)?.cursor += 1;
        self.stale_top = true;
        Some((slot, e))
    }

    /// Time order: whether the next chunk still to come must be received before a message at
    /// `time` is handed out (it starts at or before it).
    #[inline]
    fn receives_before(&self, time: u64) -> bool {
        self.starts.front().is_some_and(|&start| start <= time)
    }

    /// The slot and entry of the next message: in file order usually from the current batch,
    /// inline; otherwise through [`Pipeline::next_entry_by_call`].
    #[inline]
    fn next_entry(&mut self) -> Option<Result<(usize, Entry)>> {
        if let Some(e) = self.next_in_current_batch() {
            return Some(Ok((0, e)));
        }
        self.next_entry_by_call()
    }

    /// The rest of [`Pipeline::next_entry`], out of line so that the file-order step stays
    /// small enough to inline: in time order usually from the only open batch, otherwise
    /// through [`Pipeline::advance`].
    #[inline(never)]
    fn next_entry_by_call(&mut self) -> Option<Result<(usize, Entry)>> {
        if let Some(found) = self.next_in_only_batch() {
            return Some(Ok(found));
        }
        self.advance()
    }

    /// The slot and entry of the next message.
    fn advance(&mut self) -> Option<Result<(usize, Entry)>> {
        if self.stale_top {
            self.stale_top = false;
            if let Some(mut top) = self.heap.peek_mut() {
                let slot = top.0.3;
                if let Some(key) = self.batches.get(slot).and_then(|b| b.head_key(slot)) {
                    top.0 = key;
                }
            }
        }
        if let Some(slot) = self.finished.take() {
            let done = std::mem::replace(&mut self.batches[slot], Batch::empty());
            self.retire(done);
            self.free.push(slot);
        }
        match self.order {
            Order::Time => self.next_by_time(),
            Order::File => self.next_in_file_order(),
        }
    }

    fn next_by_time(&mut self) -> Option<Result<(usize, Entry)>> {
        loop {
            let head_time = self.heap.peek().map(|Reverse(k)| k.0);
            match (self.starts.front(), head_time) {
                (Some(_), head) if head.is_none_or(|t| self.receives_before(t)) => {
                    match self.receive()? {
                        Ok(batch) => {
                            if batch.head().is_none() {
                                self.retire(batch);
                                continue;
                            }
                            let slot = self.open(batch);
                            if let Some(key) = self.batches[slot].head_key(slot) {
                                self.heap.push(Reverse(key));
                            }
                        }
                        Err(e) => return Some(Err(e)),
                    }
                }
                (_, None) => return None,
                (_, Some(_)) => {
                    // Replace the top entry by its batch's next message in place: one sift
                    // down instead of a pop and a push (usually a single batch is open).
                    let mut top = self.heap.peek_mut()?;
                    let slot = top.0.3;
                    let batch = &mut self.batches[slot];
                    let e = *batch.head()?;
                    batch.cursor += 1;
                    match batch.head_key(slot) {
                        Some(next) => top.0 = next,
                        None => {
                            PeekMut::pop(top);
                            self.finished = Some(slot);
                        }
                    }
                    return Some(Ok((slot, e)));
                }
            }
        }
    }

    fn next_in_file_order(&mut self) -> Option<Result<(usize, Entry)>> {
        loop {
            if let Some(e) = self.next_in_current_batch() {
                return Some(Ok((0, e)));
            }
            // The current batch has run out, and the caller is done with the message lent from
            // it: give it back.
            if let Some(done) = self.batches.pop() {
                self.retire(done);
            }
            match self.receive()? {
                Ok(batch) => self.batches.push(batch),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Messages {
    /// Lends the next message: like [`Iterator::next`], but the message's data is borrowed from
    /// its chunk until the next call, which makes reading every message of a bag cheaper.
    ///
    /// ```no_run
    /// use robolog_rosbag::Bag;
    /// let bag = Bag::from_file("recording.bag")?;
    /// let mut messages = bag.messages().iter();
    /// let mut bytes = 0;
    /// while let Some(message) = messages.next_ref() {
    ///     bytes += message?.data.len();
    /// }
    /// # Ok::<(), robolog_rosbag::Error>(())
    /// ```
    pub fn next_ref(&mut self) -> Option<Result<MessageRef<'_>>> {
        match &mut self.state {
            State::Ready { messages, lent } => {
                let m = lent.insert(messages.pop_front()?);
                Some(Ok(MessageRef {
                    conn: m.conn,
                    time_ns: m.time_ns,
                    data: &m.data,
                    position: m.position,
                }))
            }
            State::Chunks(pipeline) => Some(
                pipeline
                    .next_entry()?
                    .map(|(slot, e)| pipeline.batches[slot].message_ref(&e)),
            ),
        }
    }
}

impl Iterator for Messages {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        match &mut self.state {
            State::Ready { messages, .. } => messages.pop_front().map(Ok),
            State::Chunks(pipeline) => Some(
                pipeline
                    .next_entry()?
                    .map(|(slot, e)| pipeline.batches[slot].message(&e)),
            ),
        }
    }
}
