//! Queries over a bag's messages: topics and receive-time range, in time (forward or
//! reverse), file or topic order, merged across split files.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::RangeBounds;

use robolog_framing::{Bytes, Decompressor, InclusiveRange};
use robolog_query::Order;

use crate::bag::{Bag, Reader};
use crate::compression::{ZSTD_MAGIC, decompress_message};
use crate::error::{Error, Result};
use crate::mcap_storage::McapMessages;
use crate::metadata::CompressionMode;
use crate::sqlite::read::Db3Messages;
use crate::storage::{FileQuery, RawMessage};

/// A message of a bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The bag topic id ([`crate::Topic::id`]).
    pub topic: u32,
    /// Receive time, ns since the epoch.
    pub log_time: u64,
    /// Publish time, ns (MCAP storage; sqlite stores none).
    pub publish_time: Option<u64>,
    /// MCAP sequence number (sqlite stores none).
    pub sequence: Option<u32>,
    /// The serialized message (CDR), decompressed when the bag is MESSAGE-compressed.
    pub data: Bytes,
}

/// Which messages of a [`Bag`] to read; run it with [`Query::iter`].
#[derive(Debug, Clone)]
pub struct Query<'b> {
    bag: &'b Bag,
    topics: Option<Vec<String>>,
    topic_ids: Option<Vec<u32>>,
    range: InclusiveRange,
    order: Order,
}

impl<'b> Query<'b> {
    pub(crate) fn new(bag: &'b Bag) -> Self {
        Self {
            bag,
            topics: None,
            topic_ids: None,
            range: InclusiveRange::new(..),
            order: Order::LogTime,
        }
    }

    /// Only these topic names (exact).
    pub fn topics<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.topics = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// Only these topic ids.
    pub fn topic_ids(mut self, ids: impl IntoIterator<Item = u32>) -> Self {
        self.topic_ids = Some(ids.into_iter().collect());
        self
    }

    /// Only receive times (ns) in `range`. Served by the sqlite timestamp index and the MCAP
    /// chunk indexes.
    pub fn time_range(mut self, range: impl RangeBounds<u64>) -> Self {
        self.range = InclusiveRange::new(range);
        self
    }

    /// The order (receive time by default). In log-time order, equal times come in file order
    /// (sqlite rows by id, earlier split files first), and [`Order::ReverseLogTime`] is its
    /// exact reverse; [`Order::File`] reads file after file, each in its own order (sqlite rows
    /// by id, MCAP records); [`Order::Topic`] reads topic after topic, by name (then id), each
    /// in log-time order.
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Runs the query.
    pub fn iter(self) -> Result<Messages> {
        if self.order == Order::Topic {
            return self.iter_by_topic();
        }
        let data = &self.bag.inner;
        let mut wanted: Option<Vec<u32>> = None;
        if let Some(names) = &self.topics {
            let ids = data
                .topics
                .iter()
                .filter(|t| names.contains(&t.metadata.name))
                .map(|t| t.id);
            wanted = Some(ids.collect());
        }
        if let Some(ids) = &self.topic_ids {
            wanted = Some(match wanted {
                Some(w) => w.into_iter().filter(|id| ids.contains(id)).collect(),
                None => ids.clone(),
            });
        }
        let mut plans = Vec::new();
        if !self.range.empty && wanted.as_ref().is_none_or(|w| !w.is_empty()) {
            for (index, file) in data.files.iter().enumerate() {
                let (Some(start), Some(end)) = (file.info.start_ns, file.info.end_ns) else {
                    continue;
                };
                if end < self.range.first || start > self.range.last {
                    continue;
                }
                let local = wanted.as_ref().map(|w| {
                    file.topic_map
                        .iter()
                        .filter(|(_, id)| w.contains(id))
                        .map(|(&local, _)| local)
                        .collect::<Vec<_>>()
                });
                if local.as_ref().is_some_and(Vec::is_empty) {
                    continue;
                }
                if let (Some(w), Some(counts)) = (&wanted, &file.topic_counts)
                    && w.iter().all(|id| counts.get(id).copied().unwrap_or(0) == 0)
                {
                    continue;
                }
                plans.push((
                    index,
                    FileQuery {
                        topics: local,
                        start: self.range.first,
                        end_inclusive: self.range.last,
                        order: self.order,
                    },
                ));
            }
        }
        // Files that follow each other in time are read one after the other; overlapping ones
        // are merged.
        let sequential = self.order == Order::File
            || plans.windows(2).all(|w| {
                let a = &data.files[w[0].0].info;
                let b = &data.files[w[1].0].info;
                a.end_ns <= b.start_ns
            });
        let reverse = self.order == Order::ReverseLogTime;
        if reverse {
            plans.reverse();
        }
        let decompress = match data.compression {
            Some(CompressionMode::Message) => Decompress::Always,
            Some(_) => Decompress::Never,
            None => Decompress::WhenMagic,
        };
        let mut messages = Messages {
            bag: self.bag.clone(),
            plans: plans.into(),
            sources: Vec::new(),
            heap: BinaryHeap::new(),
            sequential,
            ahead: None,
            reverse,
            errors_pending: Vec::new(),
            decompress,
            decompressor: Decompressor::new(),
            then: None,
        };
        if !sequential {
            messages.start_all()?;
        }
        Ok(messages)
    }

    /// [`Order::Topic`]: the query of the first wanted topic, which goes on with the others.
    fn iter_by_topic(self) -> Result<Messages> {
        let data = &self.bag.inner;
        let mut topics: Vec<(&str, u32)> = data
            .topics
            .iter()
            .filter(|t| {
                self.topics
                    .as_ref()
                    .is_none_or(|n| n.contains(&t.metadata.name))
                    && self
                        .topic_ids
                        .as_ref()
                        .is_none_or(|ids| ids.contains(&t.id))
            })
            .map(|t| (t.metadata.name.as_str(), t.id))
            .collect();
        topics.sort_unstable();
        // The last topic first, to be popped last.
        let mut rest: Vec<u32> = topics.into_iter().rev().map(|(_, id)| id).collect();
        let first = rest.pop();
        let mut messages = self.one_topic(first)?;
        messages.then = Some(Then {
            rest,
            range: self.range,
        });
        Ok(messages)
    }

    /// The messages of `topic` (none for `None`) in the query's range, in log-time order.
    fn one_topic(&self, topic: Option<u32>) -> Result<Messages> {
        Query {
            bag: self.bag,
            topics: None,
            topic_ids: Some(topic.into_iter().collect()),
            range: self.range,
            order: Order::LogTime,
        }
        .iter()
    }
}

/// The topics an [`Order::Topic`] query has still to read.
#[derive(Debug)]
struct Then {
    /// Their ids, the next one last.
    rest: Vec<u32>,
    range: InclusiveRange,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decompress {
    Always,
    Never,
    WhenMagic,
}

enum Source {
    Sqlite(Db3Messages),
    Mcap(McapMessages),
}

impl Iterator for Source {
    type Item = Result<RawMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Source::Sqlite(s) => s.next(),
            Source::Mcap(s) => s.next(),
        }
    }
}

/// The messages of a [`Query`], in the order asked for. An error is returned in place of the
/// message it concerns; iteration may go on after it.
pub struct Messages {
    bag: Bag,
    plans: std::collections::VecDeque<(usize, FileQuery)>,
    /// (file index, source) of the files being read.
    sources: Vec<(usize, Source)>,
    /// Merge heap: (log time, file index) (both inverted in reverse order), source index,
    /// and the message waiting.
    heap: BinaryHeap<Reverse<(u64, usize, usize, Pending)>>,
    sequential: bool,
    /// Read one after the other: the next file's messages, opened while the current one's are
    /// read.
    ahead: Option<(usize, Result<Source>)>,
    /// [`Order::ReverseLogTime`].
    reverse: bool,
    errors_pending: Vec<Error>,
    decompress: Decompress,
    decompressor: Decompressor,
    /// [`Order::Topic`]: the topics still to read.
    then: Option<Then>,
}

/// A message waiting in the merge heap, ordered by nothing (the key is outside).
struct Pending(RawMessage);

impl PartialEq for Pending {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl std::fmt::Debug for Messages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messages")
            .field("files_left", &self.plans.len())
            .finish_non_exhaustive()
    }
}

impl Messages {
    fn open_source(&self, index: usize, query: &FileQuery) -> Result<Source> {
        let file = &self.bag.inner.files[index];
        Ok(match &file.reader {
            Reader::Sqlite(db) => Source::Sqlite(db.messages(query)?),
            Reader::Mcap(m) => Source::Mcap(m.messages(query)?),
        })
    }

    fn start_all(&mut self) -> Result<()> {
        let plans: Vec<_> = self.plans.drain(..).collect();
        for (index, query) in plans {
            let source = self.open_source(index, &query)?;
            self.sources.push((index, source));
        }
        for i in 0..self.sources.len() {
            self.refill(i);
        }
        Ok(())
    }

    /// Puts the next message of source `i` into the heap; errors go in with time 0 so that
    /// they come out at once.
    fn refill(&mut self, i: usize) {
        match self.sources[i].1.next() {
            Some(Ok(m)) => {
                let file = self.sources[i].0;
                let key = if self.reverse {
                    (!m.log_time, !file)
                } else {
                    (m.log_time, file)
                };
                self.heap.push(Reverse((key.0, key.1, i, Pending(m))));
            }
            Some(Err(e)) => self.errors_pending.push(e),
            None => {}
        }
    }

    fn finish(&mut self, index: usize, raw: RawMessage) -> Result<Message> {
        let file = &self.bag.inner.files[index];
        let topic = *file
            .topic_map
            .get(&raw.local_topic)
            .ok_or_else(|| Error::UnknownTopic {
                path: file.info.path.clone(),
                row: raw.row,
                topic_id: raw.local_topic,
            })?;
        let compressed = match self.decompress {
            Decompress::Always => true,
            Decompress::Never => false,
            Decompress::WhenMagic => raw.data.starts_with(&ZSTD_MAGIC),
        };
        let data = if compressed {
            decompress_message(
                &mut self.decompressor,
                &raw.data,
                self.bag.inner.max_message_size,
            )
            .map_err(|source| Error::Codec {
                path: file.info.path.clone(),
                what: if raw.row >= 0 {
                    format!("message row {}", raw.row)
                } else {
                    format!("the message at {} ns", raw.log_time)
                },
                source,
            })?
        } else {
            raw.data
        };
        Ok(Message {
            topic,
            log_time: raw.log_time,
            publish_time: raw.publish_time,
            sequence: raw.sequence,
            data,
        })
    }
}

impl Iterator for Messages {
    type Item = Result<Message>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(item) = self.next_of_query() {
                return Some(item);
            }
            // Order::Topic: this topic is done; the next one's query takes over.
            let mut then = self.then.take()?;
            let topic = then.rest.pop()?;
            let next = Query {
                bag: &self.bag,
                topics: None,
                topic_ids: Some(vec![topic]),
                range: then.range,
                order: Order::LogTime,
            }
            .iter();
            match next {
                Ok(next) => {
                    *self = next;
                    self.then = Some(then);
                }
                Err(e) => {
                    self.then = Some(then);
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Messages {
    fn next_of_query(&mut self) -> Option<Result<Message>> {
        if let Some(e) = self.errors_pending.pop() {
            return Some(Err(e));
        }
        if self.sequential {
            loop {
                if let Some((index, source)) = self.sources.last_mut() {
                    let index = *index;
                    match source.next() {
                        Some(Ok(raw)) => return Some(self.finish(index, raw)),
                        Some(Err(e)) => return Some(Err(e)),
                        None => {
                            self.sources.pop();
                        }
                    }
                }
                let (index, opened) = match self.ahead.take() {
                    Some(ahead) => ahead,
                    None => {
                        let (index, query) = self.plans.pop_front()?;
                        (index, self.open_source(index, &query))
                    }
                };
                // The file after this one starts now, so that its reading (a `.db3`'s worker
                // walks its index, then fills its batches) overlaps this one's.
                if let Some((next, query)) = self.plans.pop_front() {
                    self.ahead = Some((next, self.open_source(next, &query)));
                }
                match opened {
                    Ok(source) => self.sources.push((index, source)),
                    Err(e) => return Some(Err(e)),
                }
            }
        }
        let Reverse((_, _, i, Pending(raw))) = self.heap.pop()?;
        self.refill(i);
        let index = self.sources[i].0;
        Some(self.finish(index, raw))
    }
}
