//! Queries over an open bag: which connections, which times, in which order; and the iterator
//! that decodes the chunks it needs (in parallel) and merges their messages.

use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, VecDeque};
use std::ops::RangeBounds;
use std::sync::Arc;

use robolog_framing::{Bytes, InclusiveRange, ParallelMap, RecyclePool, default_threads};

use crate::chunk::{ChunkCompression, InnerRecord, InnerWalker, decode_chunk};
use crate::connection::Connection;
use crate::error::Result;
use crate::format::framing::view_record;
use crate::format::records::{Header, parse_header};
use crate::format::time::RosTime;
use crate::open::{Bag, BagData, ChunkEntry, ChunkIndex, ChunkLayout};
use crate::scan::IndexEntry;
use crate::summary::ChunkInfo;

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

/// A query over a bag's messages, built with chained calls and run by iterating it.
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

    /// Worker threads that decompress upcoming chunks (0 = decompress on the calling thread).
    /// By default: as many as the machine has cores when chunks are compressed, none when they
    /// are not.
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
                state: State::Ready(picked.into()),
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
        let threads = self.threads.unwrap_or(if compressed && chunks.len() > 1 {
            default_threads()
        } else {
            0
        });
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
                current: VecDeque::new(),
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

/// The wanted messages of one chunk, sorted for the query's order.
#[derive(Debug)]
struct Batch {
    chunk: u64,
    messages: VecDeque<Message>,
    /// The decompressed chunk the messages point into, to recycle once they are all gone.
    decoded: Option<Bytes>,
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

/// Lists of a chunk's messages, handed back empty once the caller has taken every message.
type ListPool = RecyclePool<Vec<Message>>;

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
    (recycled, list): (Vec<u8>, Vec<Message>),
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
        let content = decode_chunk(
            chunk.layout.compression,
            &data.file.slice(chunk.layout.data.clone()),
            chunk.layout.size,
            data.max_chunk_size,
            chunk.info.position,
            recycled,
        )?;
        let list = match walk_whole_chunk(&content, chunk, selection, list) {
            Ok(messages) => {
                // A walk finds the records in file order.
                let messages = match order {
                    Order::File => messages,
                    Order::Time => sorted(messages, order),
                };
                return Ok(Batch {
                    chunk: chunk.info.position,
                    messages: messages.into(),
                    decoded: chunk.compressed().then_some(content),
                });
            }
            Err(list) => list,
        };
        return load_indexed_chunk(data, entry, chunk, selection, order, Ok(content), list);
    }
    load_indexed_chunk(data, entry, chunk, selection, order, Err(recycled), list)
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

/// Sorts a chunk's messages for the query's order (usually they already are).
fn sorted(mut messages: Vec<Message>, order: Order) -> Vec<Message> {
    match order {
        Order::Time => {
            let key = |m: &Message| (m.time_ns, position_key(m.position));
            if !messages.is_sorted_by_key(key) {
                messages.sort_by_key(key);
            }
        }
        Order::File => {
            if !messages.is_sorted_by_key(|m| position_key(m.position)) {
                messages.sort_by_key(|m| position_key(m.position));
            }
        }
    }
    messages
}

/// The smallest message record: the two length fields and a header holding only `op`, `conn`
/// and `time` (each field is a 4-byte length, `name=` and the value: 8 + 13 + 17 bytes).
const MIN_MESSAGE_RECORD_LEN: u64 = 8 + 8 + 13 + 17;

/// Every message of a decoded chunk, in file order, appended to the empty `list`, when the
/// chunk's records are all well formed and hold exactly the messages its chunk info counts per
/// connection; otherwise the list back, empty.
fn walk_whole_chunk(
    content: &Bytes,
    chunk: Chunk<'_>,
    selection: &Selection,
    mut list: Vec<Message>,
) -> std::result::Result<Vec<Message>, Vec<Message>> {
    match walk_whole_chunk_into(content, chunk, selection, &mut list) {
        Some(()) => Ok(list),
        None => {
            list.clear();
            Err(list)
        }
    }
}

fn walk_whole_chunk_into(
    content: &Bytes,
    chunk: Chunk<'_>,
    selection: &Selection,
    messages: &mut Vec<Message>,
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
    messages.reserve(usize::try_from(announced).ok()?.min(1 << 20));
    let mut counts: Vec<(u32, u32)> = Vec::with_capacity(chunk.info.message_counts.len());
    for record in InnerWalker::new(content) {
        let InnerRecord::Message {
            offset,
            conn,
            time,
            data,
        } = record.ok()?
        else {
            continue;
        };
        match counts.iter_mut().find(|(c, _)| *c == conn) {
            Some((_, n)) => *n = n.checked_add(1)?,
            None => counts.push((conn, 1)),
        }
        if selection.wants(conn, time) {
            messages.push(message_in_chunk(chunk, content, offset, conn, time, data));
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

fn load_indexed_chunk(
    data: &BagData,
    entry: &ChunkEntry,
    chunk: Chunk<'_>,
    selection: &Selection,
    order: Order,
    decoded: std::result::Result<Bytes, Vec<u8>>,
    mut list: Vec<Message>,
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
        return Ok(Batch {
            chunk: chunk.info.position,
            messages: list.into(),
            decoded: None,
        });
    }
    let content = match (&entry.salvaged, decoded) {
        (Some(content), _) => content.clone(),
        (None, Ok(content)) => content,
        (None, Err(recycled)) => decode_chunk(
            chunk.layout.compression,
            &data.file.slice(chunk.layout.data.clone()),
            chunk.layout.size,
            data.max_chunk_size,
            chunk.info.position,
            recycled,
        )?,
    };
    let make = |offset: usize, conn: u32, time: RosTime, range: std::ops::Range<usize>| {
        message_in_chunk(chunk, &content, offset, conn, time, range)
    };
    let resolved = wanted.is_some_and(|entries| {
        list.reserve(entries.len());
        entries.iter().all(|e| {
            resolve_entry(&content, e)
                .map(|(offset, range)| list.push(make(offset, e.conn, e.time, range)))
                .is_some()
        })
    });
    if !resolved {
        // No usable index: walk the chunk. The scan that built the entries of unindexed bags
        // walked it already, so this is only reached when the file's index is inconsistent.
        list.clear();
        walk_chunk(&content, selection, &data.connections, &make, &mut list)?;
    }
    let owned = entry.salvaged.is_none() && chunk.compressed();
    Ok(Batch {
        chunk: chunk.info.position,
        messages: sorted(list, order).into(),
        decoded: owned.then_some(content),
    })
}

/// The message whose record starts `offset` bytes into the decoded `content` of `chunk`, its
/// payload at `range`: uncompressed chunks give file positions, compressed ones positions
/// inside the chunk.
fn message_in_chunk(
    chunk: Chunk<'_>,
    content: &Bytes,
    offset: usize,
    conn: u32,
    time: RosTime,
    range: std::ops::Range<usize>,
) -> Message {
    let position = if !chunk.compressed() {
        Position::File(chunk.layout.data.start as u64 + offset as u64)
    } else {
        Position::Chunk {
            chunk: chunk.info.position,
            offset: offset as u32,
        }
    };
    Message {
        conn,
        time_ns: time.to_ns(),
        data: content.slice(range),
        position,
    }
}

/// Finds the message an index entry points at (skipping connection records, as ROS does) and
/// checks that it is the one the entry describes.
fn resolve_entry(content: &Bytes, entry: &IndexEntry) -> Option<(usize, std::ops::Range<usize>)> {
    let mut at = entry.offset as usize;
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

/// Every wanted message of a chunk, found by walking its records, appended to `messages`.
/// Messages on connections that no CONNECTION record defines are left out, as the scan of
/// unindexed bags and the streaming reader leave them out: nothing could say what they are.
fn walk_chunk(
    content: &Bytes,
    selection: &Selection,
    connections: &[Connection],
    make: &dyn Fn(usize, u32, RosTime, std::ops::Range<usize>) -> Message,
    messages: &mut Vec<Message>,
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
            messages.push(make(offset, conn, time, data));
        }
    }
    Ok(())
}

/// The iterator over a query's messages.
#[derive(Debug)]
pub struct Messages {
    state: State,
}

#[derive(Debug)]
enum State {
    Ready(VecDeque<Message>),
    Chunks(Box<Pipeline>),
}

type Jobs = ParallelMap<std::vec::IntoIter<usize>, Result<Batch>>;

struct Pipeline {
    jobs: Jobs,
    /// Start times of the chunks not received yet, in dispatch order.
    starts: VecDeque<u64>,
    order: Order,
    /// Time order: the next message of each open batch, keyed by (time, chunk, offset, slot).
    heap: BinaryHeap<Reverse<(u64, u64, u64, usize)>>,
    batches: Vec<Batch>,
    free: Vec<usize>,
    /// File order: the current batch.
    current: VecDeque<Message>,
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

/// The message's position within its chunk, for ordering equal times.
fn in_chunk(m: &Message) -> u64 {
    match m.position {
        Position::File(o) => o,
        Position::Chunk { offset, .. } => u64::from(offset),
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

    fn push_head(&mut self, slot: usize) {
        let batch = &self.batches[slot];
        if let Some(m) = batch.messages.front() {
            self.heap
                .push(Reverse((m.time_ns, batch.chunk, in_chunk(m), slot)));
        } else {
            self.free.push(slot);
        }
    }

    fn next_by_time(&mut self) -> Option<Result<Message>> {
        loop {
            let head_time = self.heap.peek().map(|Reverse(k)| k.0);
            match (self.starts.front(), head_time) {
                (Some(&start), head) if head.is_none_or(|t| start <= t) => match self.receive()? {
                    Ok(batch) => {
                        if batch.messages.is_empty() {
                            self.retired.extend(batch.decoded);
                            self.lists.give_cleared(batch.messages.into());
                            continue;
                        }
                        let slot = match self.free.pop() {
                            Some(slot) => {
                                self.batches[slot] = batch;
                                slot
                            }
                            None => {
                                self.batches.push(batch);
                                self.batches.len() - 1
                            }
                        };
                        self.push_head(slot);
                    }
                    Err(e) => return Some(Err(e)),
                },
                (_, None) => return None,
                (_, Some(_)) => {
                    // Replace the top entry by its batch's next message in place: one sift
                    // down instead of a pop and a push (usually a single batch is open).
                    let mut top = self.heap.peek_mut()?;
                    let slot = top.0.3;
                    let batch = &mut self.batches[slot];
                    let message = batch.messages.pop_front()?;
                    match batch.messages.front() {
                        Some(next) => top.0 = (next.time_ns, batch.chunk, in_chunk(next), slot),
                        None => {
                            PeekMut::pop(top);
                            self.retired.extend(batch.decoded.take());
                            self.lists
                                .give_cleared(std::mem::take(&mut batch.messages).into());
                            self.free.push(slot);
                        }
                    }
                    return Some(Ok(message));
                }
            }
        }
    }

    fn next_in_file_order(&mut self) -> Option<Result<Message>> {
        loop {
            if let Some(m) = self.current.pop_front() {
                return Some(Ok(m));
            }
            match self.receive()? {
                Ok(batch) => {
                    let done = std::mem::replace(&mut self.current, batch.messages);
                    self.lists.give_cleared(done.into());
                    self.retired.extend(batch.decoded);
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for Messages {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        match &mut self.state {
            State::Ready(messages) => messages.pop_front().map(Ok),
            State::Chunks(pipeline) => match pipeline.order {
                Order::Time => pipeline.next_by_time(),
                Order::File => pipeline.next_in_file_order(),
            },
        }
    }
}
