//! Running a query: chunks loaded ahead on workers, their messages merged in the query's order
//! and lent one at a time.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::collections::binary_heap::PeekMut;
use std::sync::Arc;

use robolog_framing::{BufferPool, Bytes, ParallelMap, RecyclePool};

use crate::container::{Container, Entry, Want};
use crate::load::{Batch, Rules, load};
use crate::order::Order;
use crate::plan::{PARALLEL_MIN_WORK, plan};

/// Bytes of decoded chunks a query keeps at most when chunks overlap in time: beyond it, the
/// chunk needed last is dropped and read again when due.
const CACHE_BYTES: usize = 128 << 20;

/// Entry lists a query keeps for reuse: more than the chunks in flight and the batches a
/// time-ordered read holds at once in the usual case.
const KEEP_LISTS: usize = 16;

/// A query over a [`Container`]: which messages, in which order, on how many workers. Run it
/// with [`Query::run`].
pub struct Query<C: Container> {
    container: Arc<C>,
    want: Want,
    order: Order,
    threads: usize,
    whole_chunks: bool,
    buffers: Option<BufferPool>,
    flat: Option<Batch<C::Entry>>,
    min_work: u64,
    cache_bytes: usize,
}

impl<C: Container> std::fmt::Debug for Query<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("want", &self.want)
            .field("order", &self.order)
            .field("threads", &self.threads)
            .finish_non_exhaustive()
    }
}

impl<C: Container> Query<C> {
    /// The messages of `container` that `want` selects, in log-time order, on the reading
    /// thread.
    pub fn new(container: Arc<C>, want: Want) -> Self {
        Self {
            container,
            want,
            order: Order::LogTime,
            threads: 0,
            whole_chunks: false,
            buffers: None,
            flat: None,
            min_work: PARALLEL_MIN_WORK,
            cache_bytes: CACHE_BYTES,
        }
    }

    /// The order of the results.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Up to `threads` worker threads load upcoming chunks (0: everything on the reading
    /// thread). Used only when the chunks the query needs are work enough to pay for them.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Decode every chunk read whole (so that the container can check its checksum), never
    /// only the prefix that holds the wanted messages.
    pub fn whole_chunks(mut self, whole: bool) -> Self {
        self.whole_chunks = whole;
        self
    }

    /// Decode into buffers from `pool` (a reader's pool, shared by its queries).
    pub fn buffers(mut self, pool: BufferPool) -> Self {
        self.buffers = Some(pool);
        self
    }

    /// Messages outside chunks, merged with those of the chunks (see [`Batch::flat`]).
    pub fn flat(mut self, batch: Batch<C::Entry>) -> Self {
        self.flat = Some(batch);
        self
    }

    /// The most bytes of decoded chunks a time-ordered query keeps at once when chunks overlap
    /// in time (default 128 MiB); beyond it, the chunk needed last is dropped and read again
    /// when due. At least one chunk is always kept. A container passes the largest chunk it
    /// accepts, when that is less, so that memory stays within its own limit.
    pub fn cache_limit(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    #[cfg(test)]
    pub(crate) fn tuned(mut self, min_work: u64, cache_bytes: usize) -> Self {
        self.min_work = min_work;
        self.cache_bytes = cache_bytes;
        self
    }

    /// Runs the query: plans the chunks it needs and starts loading them.
    pub fn run(mut self) -> Messages<C> {
        if self.order != Order::Topic {
            return self.run_one();
        }
        self.order = Order::LogTime;
        let mut channels = self.container.topic_order();
        if channels.is_empty() {
            return self.run_one();
        }
        channels.retain(|&c| self.want.wants_channel(c));
        // One query per channel: the last one's want first, to be popped last.
        let mut rest: Vec<Want> = channels.iter().rev().map(|&c| self.want.only(c)).collect();
        self.want = rest.pop().unwrap_or_else(|| Want::new(Some([]), ..));
        let buffers = self.buffers.take().unwrap_or_default();
        self.buffers = Some(buffers);
        let mut next = Query {
            container: Arc::clone(&self.container),
            want: Want::everything(),
            order: Order::LogTime,
            threads: self.threads,
            whole_chunks: self.whole_chunks,
            buffers: self.buffers.clone(),
            flat: None,
            min_work: self.min_work,
            cache_bytes: self.cache_bytes,
        };
        next.flat = self.flat.as_ref().map(Batch::copy_flat);
        let mut messages = self.run_one();
        messages.then = Some(Box::new(Then { next, rest }));
        messages
    }

    /// Runs the query in its order, which is not [`Order::Topic`].
    fn run_one(self) -> Messages<C> {
        let container = self.container;
        let want = Arc::new(self.want);
        let order = self.order;
        let planned = plan(
            container.chunks(),
            &want,
            order,
            self.threads,
            self.min_work,
        );
        container.prefetch(&planned.chunks, &want);
        let buffers = self.buffers.unwrap_or_default();
        let lists: RecyclePool<Vec<C::Entry>> = RecyclePool::new(KEEP_LISTS);
        let rules = Rules {
            order,
            whole_chunks: self.whole_chunks,
        };
        let (job_container, job_want) = (Arc::clone(&container), Arc::clone(&want));
        let (job_buffers, job_lists) = (buffers.clone(), lists.clone());
        let in_flight = (planned.threads * 2).max(2);
        let jobs = ParallelMap::new(
            planned.chunks.into_iter(),
            planned.threads,
            in_flight,
            move |chunk| {
                let (buffer, list) = (job_buffers.take(), job_lists.take());
                load(&*job_container, chunk, &job_want, rules, buffer, list)
            },
        );
        let mut messages = Messages {
            container,
            want,
            order,
            jobs,
            bounds: planned.bounds,
            next_chunk: 0,
            heap: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            retired: None,
            buffers,
            lists,
            cached: 0,
            cache_limit: self.cache_bytes,
            stale_top: false,
            then: None,
        };
        if let Some(mut flat) = self.flat {
            let want = &messages.want;
            flat.entries.retain(|e| want.wants(e.channel(), e.time()));
            match order {
                Order::File => flat.entries.sort_unstable_by_key(|e| e.offset()),
                _ => {
                    flat.entries
                        .sort_unstable_by_key(|e| (e.time(), e.offset()));
                    if order == Order::ReverseLogTime {
                        flat.entries.reverse();
                    }
                }
            }
            messages.open(flat);
        }
        messages
    }
}

/// A message lent by [`Messages::next_entry`]: the container's entry, and the content its data
/// is in.
#[derive(Debug, Clone, Copy)]
pub struct Lent<'a, E> {
    /// The entry, as the container found it.
    pub entry: E,
    /// The decoded chunk (or the file, for messages outside chunks) the entry points into.
    pub content: &'a Bytes,
    /// File position of the chunk; `None` for messages outside chunks.
    pub chunk: Option<u64>,
    /// Where `content` starts in the file, when it is stored there as it is.
    pub file_offset: Option<u64>,
}

/// Heap key. Time order: log time, then file position (chunk position, offset inside the
/// chunk). File order: the file position alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    primary: u64,
    secondary: u64,
    tertiary: u64,
    slot: usize,
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

/// The batch the message last handed out came from, when it had no more messages: it stays
/// until the next call, since the message is lent from it.
const RETIRED: usize = usize::MAX;

/// The next entry and the slot it came from, or the error of a chunk.
type Step<C> = Option<Result<(<C as Container>::Entry, usize), <C as Container>::Error>>;

type Jobs<C> = ParallelMap<
    std::vec::IntoIter<usize>,
    Result<Batch<<C as Container>::Entry>, <C as Container>::Error>,
>;

/// The messages of a [`Query`], lent one at a time by [`Messages::next_entry`].
///
/// Chunks are loaded a few ahead, on worker threads when the query asked for them. In time order
/// a chunk is loaded only when the merge reaches its start time, and its buffer is recycled as
/// soon as its last wanted message has been handed out. When chunks overlap in time so much that
/// the decoded ones exceed a cache limit, the chunk needed last is dropped and read again when
/// its turn comes: memory stays bounded by the cache, never by the file. A chunk that cannot be
/// read is an error in its place; the others are still read.
pub struct Messages<C: Container> {
    container: Arc<C>,
    want: Arc<Want>,
    order: Order,
    jobs: Jobs<C>,
    /// Per planned chunk, in load order, the key before which it can hold no message.
    bounds: Vec<u64>,
    /// The next planned chunk to receive from `jobs`.
    next_chunk: usize,
    heap: BinaryHeap<HeapEntry>,
    /// Open batches; the heap holds an entry for each.
    slots: Vec<Option<Batch<C::Entry>>>,
    free: Vec<usize>,
    retired: Option<Batch<C::Entry>>,
    buffers: BufferPool,
    lists: RecyclePool<Vec<C::Entry>>,
    /// Bytes of decoded chunks held, and the most allowed (at least one chunk is always kept).
    cached: usize,
    cache_limit: usize,
    /// The heap's only entry is behind its batch: [`Messages::next_from_only_batch`] took
    /// messages without updating it.
    stale_top: bool,
    /// [`Order::Topic`]: the queries of the channels still to read.
    then: Option<Box<Then<C>>>,
}

/// The channels an [`Order::Topic`] query still has to read, one query each.
struct Then<C: Container> {
    /// The query's settings (its want is replaced for each channel).
    next: Query<C>,
    /// The wants of the channels to come, the next one last.
    rest: Vec<Want>,
}

impl<C: Container> std::fmt::Debug for Messages<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("order", &self.order)
            .field("next_chunk", &self.next_chunk)
            .field("chunks", &self.bounds.len())
            .finish_non_exhaustive()
    }
}

impl<C: Container> Messages<C> {
    /// Lends the next message: its entry and the content it points into, until the next call.
    #[inline]
    pub fn next_entry(&mut self) -> Option<Result<Lent<'_, C::Entry>, C::Error>> {
        if let Some(done) = self.retired.take() {
            self.recycle(done);
        }
        let (entry, slot) = loop {
            if let Some(found) = self.next_from_only_batch() {
                break found;
            }
            match self.advance() {
                Some(Ok(found)) => break found,
                Some(Err(e)) => return Some(Err(e)),
                None => {
                    if !self.start_next_channel() {
                        return None;
                    }
                }
            }
        };
        let batch = match slot {
            RETIRED => self.retired.as_ref(),
            slot => self.slots.get(slot).and_then(Option::as_ref),
        }?;
        Some(Ok(Lent {
            entry,
            content: batch.content.as_ref()?,
            chunk: batch.chunk.map(|_| batch.position),
            file_offset: batch.file_offset,
        }))
    }

    /// The key of `entry` of `batch` in `slot`.
    #[inline]
    fn key(&self, batch: &Batch<C::Entry>, entry: &C::Entry, slot: usize) -> HeapEntry {
        let (major, minor) = match batch.chunk {
            Some(_) => (batch.position, entry.offset()),
            None => (entry.offset(), 0),
        };
        let key = match self.order {
            Order::File => Key {
                primary: major,
                secondary: minor,
                tertiary: 0,
                slot,
            },
            _ => Key {
                primary: entry.time(),
                secondary: major,
                tertiary: minor,
                slot,
            },
        };
        HeapEntry {
            key,
            reverse: self.order == Order::ReverseLogTime,
        }
    }

    /// The key of the next entry of the batch in `slot`.
    fn key_of_slot(&self, slot: usize) -> Option<HeapEntry> {
        let batch = self.slots.get(slot)?.as_ref()?;
        let entry = batch.entries.get(batch.next)?;
        Some(self.key(batch, entry, slot))
    }

    /// Whether the next chunk to load might hold a message that sorts before one whose key
    /// starts with `primary`.
    #[inline]
    fn loads_before(&self, primary: u64) -> bool {
        let Some(&bound) = self.bounds.get(self.next_chunk) else {
            return false;
        };
        match self.order {
            Order::File | Order::LogTime | Order::Topic => bound <= primary,
            Order::ReverseLogTime => bound >= primary,
        }
    }

    /// The usual case, on a short path: one batch is open (chunks that do not overlap in time
    /// come one after the other), its next message is not its last, and no chunk still to load
    /// can hold an earlier one. Then that message is next, and the heap is not touched: its
    /// entry is brought up to date when the general path runs again.
    #[inline]
    fn next_from_only_batch(&mut self) -> Option<(C::Entry, usize)> {
        if self.heap.len() != 1 {
            return None;
        }
        let slot = self.heap.peek()?.key.slot;
        let batch = self.slots.get(slot)?.as_ref()?;
        if batch.content.is_none() || batch.next + 1 >= batch.entries.len() {
            return None;
        }
        let entry = *batch.entries.get(batch.next)?;
        let primary = match (self.order, batch.chunk) {
            (Order::File, Some(_)) => batch.position,
            (Order::File, None) => entry.offset(),
            _ => entry.time(),
        };
        if self.loads_before(primary) {
            return None;
        }
        self.slots.get_mut(slot)?.as_mut()?.next += 1;
        self.stale_top = true;
        Some((entry, slot))
    }

    /// The general path: loads the chunks that may come first, then takes the heap's top.
    fn advance(&mut self) -> Step<C> {
        if self.stale_top {
            self.stale_top = false;
            if let Some(slot) = self.heap.peek().map(|top| top.key.slot)
                && let Some(entry) = self.key_of_slot(slot)
                && let Some(mut top) = self.heap.peek_mut()
            {
                *top = entry;
            }
        }
        loop {
            let must_load = match self.heap.peek() {
                Some(top) => self.loads_before(top.key.primary),
                None => self.next_chunk < self.bounds.len(),
            };
            if !must_load {
                return self.pop();
            }
            self.next_chunk += 1;
            match self.jobs.next() {
                Some(Ok(batch)) => self.open(batch),
                // The chunk is skipped; the next call goes on with the others.
                Some(Err(e)) => return Some(Err(e)),
                None => self.next_chunk = self.bounds.len(),
            }
        }
    }

    /// [`Order::Topic`]: when this channel's messages are all out, starts the query of the next
    /// channel in its place. False when there is none.
    #[cold]
    fn start_next_channel(&mut self) -> bool {
        let Some(mut then) = self.then.take() else {
            return false;
        };
        let Some(want) = then.rest.pop() else {
            return false;
        };
        let flat = then.next.flat.as_ref().map(Batch::copy_flat);
        let query = Query {
            container: Arc::clone(&then.next.container),
            want,
            order: Order::LogTime,
            threads: then.next.threads,
            whole_chunks: then.next.whole_chunks,
            buffers: then.next.buffers.clone(),
            flat,
            min_work: then.next.min_work,
            cache_bytes: then.next.cache_bytes,
        };
        *self = query.run_one();
        self.then = Some(then);
        true
    }

    /// Takes the heap's next message: its entry, and the slot it came from ([`RETIRED`] when
    /// that batch has no more).
    fn pop(&mut self) -> Step<C> {
        let slot = self.heap.peek()?.key.slot;
        if let Err(e) = self.reload(slot) {
            // The chunk cannot be read again: its remaining messages are lost.
            self.heap.pop();
            self.close(slot);
            return Some(Err(e));
        }
        let next = {
            let batch = self.slots.get_mut(slot)?.as_mut()?;
            let entry = *batch.entries.get(batch.next)?;
            batch.next += 1;
            (entry, batch.next < batch.entries.len())
        };
        let (entry, more) = next;
        if more {
            let key = self.key_of_slot(slot)?;
            *self.heap.peek_mut()? = key;
            return Some(Ok((entry, slot)));
        }
        PeekMut::pop(self.heap.peek_mut()?);
        let done = self.slots.get_mut(slot)?.take()?;
        self.free.push(slot);
        self.cached -= done.cached_len();
        self.retired = Some(done);
        Some(Ok((entry, RETIRED)))
    }

    /// Opens `batch` in a free slot, or recycles it when it holds no wanted message.
    fn open(&mut self, batch: Batch<C::Entry>) {
        if batch.entries.is_empty() {
            self.recycle(batch);
            return;
        }
        self.cached += batch.cached_len();
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot] = Some(batch);
                slot
            }
            None => {
                self.slots.push(Some(batch));
                self.slots.len() - 1
            }
        };
        if let Some(entry) = self.key_of_slot(slot) {
            self.heap.push(entry);
        }
        self.evict(None);
    }

    /// Drops the batch in `slot` (whose heap entry is gone).
    fn close(&mut self, slot: usize) {
        if let Some(batch) = self.slots.get_mut(slot).and_then(Option::take) {
            self.cached -= batch.cached_len();
            self.free.push(slot);
            self.recycle(batch);
        }
    }

    /// Gives a finished batch's buffer and list back for later chunks.
    fn recycle(&mut self, batch: Batch<C::Entry>) {
        if let Some(content) = batch.content {
            self.buffers.give(content);
        }
        self.lists.give_cleared(batch.entries);
    }

    /// Keeps the decoded chunks within the cache limit: while over it, drops the content of the
    /// chunk whose next message is due last (it is read again when its turn comes). `keep` is
    /// the slot about to be read.
    fn evict(&mut self, keep: Option<usize>) {
        while self.cached > self.cache_limit {
            let victim = (0..self.slots.len())
                .filter(|&slot| {
                    Some(slot) != keep
                        && self.slots[slot]
                            .as_ref()
                            .is_some_and(|b| b.cached_len() > 0)
                })
                .filter_map(|slot| self.key_of_slot(slot))
                .min()
                .map(|entry| entry.key.slot);
            let Some(victim) = victim else { return };
            if let Some(batch) = self.slots.get_mut(victim).and_then(Option::as_mut) {
                let len = batch.cached_len();
                if let Some(content) = batch.content.take() {
                    self.cached -= len;
                    self.buffers.give(content);
                }
            }
        }
    }

    /// Reads an evicted chunk again.
    fn reload(&mut self, slot: usize) -> Result<(), C::Error> {
        let Some(batch) = self.slots.get(slot).and_then(Option::as_ref) else {
            return Ok(());
        };
        let (Some(chunk), None) = (batch.chunk, &batch.content) else {
            return Ok(());
        };
        let decoded = self
            .container
            .read(chunk, batch.prefix_to, self.buffers.take())?;
        self.cached += decoded.content.len();
        if let Some(batch) = self.slots.get_mut(slot).and_then(Option::as_mut) {
            batch.content = Some(decoded.content);
        }
        self.evict(Some(slot));
        Ok(())
    }
}
