//! Queries over an open bag: which connections, which times, in which order, run by the shared
//! query engine.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use robolog_framing::{Bytes, default_threads};
use robolog_query::{Batch, Lent, Order, Want};

use crate::chunks::{BagEntry, Chunks};
use crate::error::{Error, Result};
use crate::format::version::Version;
use crate::open::{Bag, BagData};
use crate::v12::V12Message;

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
///     .order(Order::LogTime);
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
    range: (Bound<u64>, Bound<u64>),
    order: Order,
    threads: Option<usize>,
}

impl Query {
    pub(crate) fn new(bag: Bag) -> Self {
        Self {
            bag,
            topics: None,
            connections: None,
            range: (Bound::Unbounded, Bound::Unbounded),
            order: Order::LogTime,
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
        self.range = (range.start_bound().cloned(), range.end_bound().cloned());
        self
    }

    /// The order messages come out in (log time by default).
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Worker threads that load upcoming chunks: they decompress them, or walk the records of
    /// uncompressed ones (0 = everything on the calling thread). By default as many as the
    /// machine has cores, used once the chunks the query needs are work enough for them.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// The connections the query wants: those of its topics and among its connection ids (both
    /// when both are given); `None` for all.
    fn wanted_connections(&self) -> Option<Vec<u32>> {
        let data = &self.bag.inner;
        let by_topic: Option<Vec<u32>> = self.topics.as_ref().map(|topics| {
            data.connections
                .iter()
                .filter(|c| topics.contains(&c.topic))
                .map(|c| c.id)
                .collect()
        });
        match (by_topic, &self.connections) {
            (Some(by_topic), Some(ids)) => {
                Some(by_topic.into_iter().filter(|id| ids.contains(id)).collect())
            }
            (Some(by_topic), None) => Some(by_topic),
            (None, ids) => ids.clone(),
        }
    }

    /// Runs the query.
    pub fn iter(self) -> Messages {
        let want = Want::new(self.wanted_connections(), self.range);
        let data = Arc::clone(&self.bag.inner);
        // Format 1.2: messages outside chunks, in the file.
        let flat = match data.version {
            Version::V1_2 => v12_batch(&data, &want),
            Version::V2_0 => Ok(None),
        };
        let chunks = Chunks::new(Arc::clone(&data), &want);
        let mut query = robolog_query::Query::new(Arc::new(chunks), want)
            .order(self.order)
            .threads(self.threads.unwrap_or_else(default_threads))
            .cache_limit(data.max_chunk_size.min(128 << 20))
            .buffers(self.bag.buffers.clone());
        let failed = match flat {
            Ok(Some(batch)) => {
                query = query.flat(batch);
                None
            }
            Ok(None) => None,
            Err(e) => Some(e),
        };
        Messages {
            inner: Box::new(query.run()),
            failed,
        }
    }
}

/// The wanted messages of a 1.2 bag: in place when the file is in memory, otherwise read with
/// the one span of the file that holds them (nothing when none is wanted), so that a time
/// range of a file read by position fetches about that share of it.
fn v12_batch(data: &BagData, want: &Want) -> Result<Option<Batch<BagEntry>>> {
    let entry = |m: &V12Message, base: u64| {
        let at = |offset: u64| (offset - base) as usize;
        BagEntry::new(
            at(m.offset),
            m.conn,
            m.time,
            at(m.data.start)..at(m.data.end),
        )
    };
    if let Some(file) = data.input.in_memory() {
        // The engine keeps the wanted ones.
        let entries = data.v12_messages.iter().map(|m| entry(m, 0)).collect();
        return Ok(Some(Batch::flat(file.clone(), entries)));
    }
    let wanted: Vec<&V12Message> = data
        .v12_messages
        .iter()
        .filter(|m| want.wants(m.conn, m.time.to_ns()))
        .collect();
    let (Some(start), Some(end)) = (
        wanted.iter().map(|m| m.offset).min(),
        wanted.iter().map(|m| m.data.end).max(),
    ) else {
        return Ok(None);
    };
    let span = data.input.read(start..end).map_err(|source| Error::Read {
        offset: start,
        source,
    })?;
    let entries = wanted.into_iter().map(|m| entry(m, start)).collect();
    Ok(Some(Batch::flat_at(span, start, entries)))
}

impl IntoIterator for Query {
    type Item = Result<Message>;
    type IntoIter = Messages;

    fn into_iter(self) -> Messages {
        self.iter()
    }
}

/// The iterator over a query's messages.
///
/// Besides iterating (each [`Message`] shares the chunk it is in), [`Messages::next_ref`] lends
/// the messages one at a time, which saves the reference counting per message when the caller
/// only looks at each message before taking the next. A chunk that cannot be read is an error
/// in its place, and the query goes on with the other chunks.
#[derive(Debug)]
pub struct Messages {
    inner: Box<robolog_query::Messages<Chunks>>,
    /// Why a 1.2 bag's messages could not be read, handed out first.
    failed: Option<Error>,
}

/// Where a lent entry's record is.
#[inline]
fn position(lent: &Lent<'_, BagEntry>) -> Position {
    match (lent.chunk, lent.file_offset) {
        (Some(chunk), None) => Position::Chunk {
            chunk,
            // Chunk contents are smaller than 4 GiB.
            offset: lent.entry.offset as u32,
        },
        (_, file_offset) => Position::File(file_offset.unwrap_or(0) + lent.entry.offset),
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
    #[inline]
    pub fn next_ref(&mut self) -> Option<Result<MessageRef<'_>>> {
        if let Some(e) = self.failed.take() {
            return Some(Err(e));
        }
        let lent = match self.inner.next_entry()? {
            Ok(lent) => lent,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(MessageRef {
            conn: lent.entry.conn,
            time_ns: lent.entry.time_ns,
            data: lent.content.get(lent.entry.data())?,
            position: position(&lent),
        }))
    }
}

impl Iterator for Messages {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Result<Message>> {
        if let Some(e) = self.failed.take() {
            return Some(Err(e));
        }
        let lent = match self.inner.next_entry()? {
            Ok(lent) => lent,
            Err(e) => return Some(Err(e)),
        };
        Some(Ok(Message {
            conn: lent.entry.conn,
            time_ns: lent.entry.time_ns,
            data: lent.content.slice(lent.entry.data()),
            position: position(&lent),
        }))
    }
}
