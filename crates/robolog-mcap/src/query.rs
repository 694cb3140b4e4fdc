//! Message queries over an indexed reader: which channels, which times, in which order, run by
//! the shared query engine.

use std::collections::BTreeSet;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use robolog_framing::Bytes;
use robolog_query::{Batch, Input, Messages, Order, Query, Want};

use crate::chunks::{Chunks, MsgRef, message_at};
use crate::decode::DecodeRules;
use crate::error::{McapError, Result};
use crate::linear::LinearReader;
use crate::message::OwnedMessage;
use crate::options::Layout;
use crate::reader::{McapReader, draft_records};
use crate::records::{Message, Record};
use crate::summary::LooseMessage;

/// Which messages a query returns, built with [`McapReader::messages`].
///
/// A query reads only the chunks whose index entries (time range, and with a topic or channel
/// filter, their message indexes) say they hold wanted messages. With a topic or channel filter
/// and message indexes, each chunk is decoded only up to the end of its last wanted message
/// (unless that is most of the chunk, which is then decoded whole), and its CRC is checked only
/// when that is the whole chunk. Uncompressed chunks are served from the input unchecked unless
/// the reader's options ask for their CRCs too
/// ([`ReadOptions::verify_uncompressed_chunks`](crate::ReadOptions::verify_uncompressed_chunks)).
#[derive(Debug, Clone)]
pub struct MessageQuery<'r> {
    reader: &'r McapReader,
    topics: Option<Vec<String>>,
    channels: Option<BTreeSet<u16>>,
    range: (Bound<u64>, Bound<u64>),
    order: Order,
}

impl<'r> MessageQuery<'r> {
    pub(crate) fn new(reader: &'r McapReader) -> Self {
        Self {
            reader,
            topics: None,
            channels: None,
            range: (Bound::Unbounded, Bound::Unbounded),
            order: Order::LogTime,
        }
    }

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

    /// Only messages whose log time (nanoseconds) is in `range`.
    pub fn time_range(mut self, range: impl RangeBounds<u64>) -> Self {
        self.range = (range.start_bound().cloned(), range.end_bound().cloned());
        self
    }

    /// The order of the results (log time by default).
    pub fn order(mut self, order: Order) -> Self {
        self.order = order;
        self
    }

    /// Runs the query.
    pub fn iter(self) -> Result<MessageIter> {
        let reader = self.reader;
        let want = Want::new(self.wanted_channels(), self.range);
        if reader.draft {
            return draft_iter(reader, &want, self.order);
        }
        let opts = &reader.opts;
        let chunks = Chunks {
            shared: Arc::clone(&reader.shared),
            rules: DecodeRules {
                limit: opts.max_record_size,
                verify_crc: opts.verify_chunk_crcs,
                in_halves: true,
            },
            verify_uncompressed: opts.verify_uncompressed_chunks,
        };
        let loose = &reader.shared.summary.loose_messages;
        let loose = loose_batch(&reader.shared.input, loose, &want)?;
        let mut query = Query::new(Arc::new(chunks), want)
            .order(self.order)
            .threads(opts.threads)
            .whole_chunks(opts.decode_whole_chunks)
            .cache_limit(opts.cache_limit())
            .buffers(reader.buffers.clone());
        if let Some(batch) = loose {
            query = query.flat(batch);
        }
        Ok(MessageIter {
            inner: Inner::Indexed(Box::new(query.run())),
        })
    }

    fn wanted_channels(&self) -> Option<Vec<u32>> {
        if self.topics.is_none() && self.channels.is_none() {
            return None;
        }
        let mut wanted: Vec<u32> = self
            .channels
            .iter()
            .flatten()
            .map(|&id| u32::from(id))
            .collect();
        if let Some(topics) = &self.topics {
            for channel in self.reader.summary().channels.values() {
                if topics.iter().any(|t| *t == channel.topic) {
                    wanted.push(u32::from(channel.id));
                }
            }
        }
        Some(wanted)
    }
}

/// The messages of a query, their data as `Bytes` slices of the decoded chunks, or lent one at
/// a time by [`MessageIter::next_ref`].
///
/// Chunks are decoded a few ahead, on worker threads when the reader's options ask for them. In
/// time order a chunk is decoded only when the merge reaches its start time, and its buffer is
/// recycled as soon as its last wanted message has been handed out. When chunks overlap in time
/// so much that the decoded ones exceed a cache (as large as the largest chunk accepted, at
/// most 128 MiB), the chunk needed last is dropped and decoded again when its turn comes: memory
/// stays bounded by the cache, never by the file. A chunk that cannot be read is an error in
/// its place, and the query goes on with the others.
pub struct MessageIter {
    inner: Inner,
}

enum Inner {
    Indexed(Box<Messages<Chunks>>),
    /// Draft files: every message read linearly, filtered and sorted in memory.
    Listed {
        messages: std::vec::IntoIter<Result<OwnedMessage>>,
        lent: Option<OwnedMessage>,
    },
}

impl std::fmt::Debug for MessageIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.inner {
            Inner::Indexed(messages) => f.debug_tuple("MessageIter").field(messages).finish(),
            Inner::Listed { messages, .. } => f
                .debug_struct("MessageIter")
                .field("remaining", &messages.len())
                .finish(),
        }
    }
}

impl MessageIter {
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
    #[inline]
    pub fn next_ref(&mut self) -> Option<Result<Message<'_>>> {
        match &mut self.inner {
            Inner::Indexed(messages) => {
                let lent = match messages.next_entry()? {
                    Ok(lent) => lent,
                    Err(e) => return Some(Err(e)),
                };
                let m = lent.entry;
                Some(Ok(Message {
                    channel_id: m.channel_id,
                    sequence: m.sequence,
                    log_time: m.log_time,
                    publish_time: m.publish_time,
                    data: lent.content.get(m.data_start..m.data_end)?,
                }))
            }
            Inner::Listed { messages, lent } => match messages.next()? {
                Ok(m) => Some(Ok(lent.insert(m).as_record())),
                Err(e) => Some(Err(e)),
            },
        }
    }
}

impl Iterator for MessageIter {
    type Item = Result<OwnedMessage>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::Indexed(messages) => {
                let lent = match messages.next_entry()? {
                    Ok(lent) => lent,
                    Err(e) => return Some(Err(e)),
                };
                let m = lent.entry;
                Some(Ok(OwnedMessage {
                    channel_id: m.channel_id,
                    sequence: m.sequence,
                    log_time: m.log_time,
                    publish_time: m.publish_time,
                    data: lent.content.slice(m.data_start..m.data_end),
                }))
            }
            Inner::Listed { messages, .. } => messages.next(),
        }
    }
}

/// Draft files: a linear pass, the wanted messages sorted in memory (draft files are small and
/// rare).
fn draft_iter(reader: &McapReader, want: &Want, order: Order) -> Result<MessageIter> {
    let wanted = |m: &Result<OwnedMessage>| match m {
        Ok(m) => want.wants(u32::from(m.channel_id), m.log_time),
        Err(_) => true,
    };
    let mut messages: Vec<Result<OwnedMessage>> = match reader.input().in_memory() {
        // In place: the messages share the file's buffer and its chunks'.
        Some(all) => {
            let opts = reader.opts.clone().layout(Layout::Draft);
            LinearReader::with_options(all.clone(), opts)
                .into_messages()
                .filter(wanted)
                .collect()
        }
        None => {
            let mut messages = Vec::new();
            draft_records(reader.input(), &reader.opts, |record| {
                let message = match record {
                    Ok(Record::Message(m)) => Ok(OwnedMessage {
                        channel_id: m.channel_id,
                        sequence: m.sequence,
                        log_time: m.log_time,
                        publish_time: m.publish_time,
                        data: Bytes::copy_from_slice(m.data),
                    }),
                    Ok(_) => return Ok(()),
                    Err(e) => Err(e),
                };
                if wanted(&message) {
                    messages.push(message);
                }
                Ok(())
            })?;
            messages
        }
    };
    match order {
        Order::File => {}
        Order::LogTime | Order::ReverseLogTime => {
            messages.sort_by_key(|m| m.as_ref().map(|m| m.log_time).unwrap_or(u64::MAX));
            if order == Order::ReverseLogTime {
                messages.reverse();
            }
        }
        Order::Topic => {
            let mut channels: Vec<(&str, u16)> = reader
                .summary()
                .channels
                .values()
                .map(|c| (&*c.topic, c.id))
                .collect();
            channels.sort_unstable();
            let rank = |id: u16| channels.iter().position(|&(_, c)| c == id);
            messages.sort_by_key(|m| match m {
                Ok(m) => (rank(m.channel_id).unwrap_or(usize::MAX - 1), m.log_time),
                Err(_) => (usize::MAX, u64::MAX),
            });
        }
    }
    Ok(MessageIter {
        inner: Inner::Listed {
            messages: messages.into_iter(),
            lent: None,
        },
    })
}

/// The wanted messages outside chunks (an unchunked file), read with the one span of the file
/// that holds them (nothing when none is wanted): a time range of a file read by position
/// fetches about that share of it.
fn loose_batch(
    input: &Input,
    loose: &[LooseMessage],
    want: &Want,
) -> Result<Option<Batch<MsgRef>>> {
    let wanted: Vec<&LooseMessage> = loose
        .iter()
        .filter(|m| want.wants(u32::from(m.channel_id), m.log_time))
        .collect();
    let (Some(start), Some(end)) = (
        wanted.iter().map(|m| m.offset).min(),
        wanted
            .iter()
            .map(|m| m.offset.saturating_add(m.length))
            .max(),
    ) else {
        return Ok(None);
    };
    let span = input
        .read(start..end.min(input.len()))
        .map_err(|source| McapError::Io {
            offset: start,
            source,
        })?;
    let entries = wanted
        .iter()
        .filter_map(|m| {
            let at = message_at(&span, m.offset - start)?;
            // The record's place in the file orders it; its data is found in the span.
            Some(MsgRef {
                offset: m.offset,
                ..at
            })
        })
        .collect();
    Ok(Some(Batch::flat_span(span, entries)))
}

// The message type a query lists per wanted message stays small.
const _: () = assert!(size_of::<MsgRef>() <= 48);
