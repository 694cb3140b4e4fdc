//! What a container format tells the engine (its chunks, as its index describes them) and what
//! the engine asks of it (read a chunk or a prefix of it, find or walk its messages).

use std::ops::RangeBounds;

use robolog_framing::{Bytes, Compression, InclusiveRange};

/// A message a container found in a decoded chunk: what the merge orders it by. Small and
/// `Copy`: a query lists one per wanted message, and the format makes its message type from it
/// when the message is handed out.
pub trait Entry: Copy + Send + Sync + 'static {
    /// Log time in nanoseconds.
    fn time(&self) -> u64;
    /// Channel (connection) id.
    fn channel(&self) -> u32;
    /// Offset of the message's record in its chunk's decoded content; in the file for the
    /// messages of a [`Batch::flat`](crate::Batch::flat) batch.
    fn offset(&self) -> u64;
}

/// One chunk as the file's index describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkMeta {
    /// File offset of the chunk record: the order of chunks in the file, and the tie-break of
    /// messages with equal times.
    pub position: u64,
    /// Earliest log time in the chunk.
    pub start_ns: u64,
    /// Latest log time in the chunk.
    pub end_ns: u64,
    /// The ids of the channels with messages in the chunk, sorted; `None` when the index does
    /// not say.
    pub channels: Option<Vec<u32>>,
    /// How many messages the chunk holds, when the index says (or lets it be estimated).
    pub messages: Option<u64>,
    /// How the chunk's records are compressed.
    pub compression: Compression,
    /// Size of the records uncompressed.
    pub uncompressed_size: u64,
}

/// Which messages a query wants: channels and an inclusive log-time range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Want {
    /// Sorted, without duplicates; `None` for every channel.
    channels: Option<Vec<u32>>,
    first: u64,
    last: u64,
}

impl Want {
    /// Every message on `channels` (`None`: on every channel) whose log time is in `times`.
    ///
    /// ```
    /// use robolog_query::Want;
    /// let want = Want::new(Some([3, 1]), 10..20);
    /// assert!(want.wants(1, 10) && !want.wants(1, 20) && !want.wants(2, 15));
    /// assert!(Want::new(None::<[u32; 0]>, ..0).is_empty());
    /// ```
    pub fn new(
        channels: Option<impl IntoIterator<Item = u32>>,
        times: impl RangeBounds<u64>,
    ) -> Self {
        let range = InclusiveRange::new(times);
        let channels = if range.empty {
            Some(Vec::new())
        } else {
            channels.map(|ids| {
                let mut ids: Vec<u32> = ids.into_iter().collect();
                ids.sort_unstable();
                ids.dedup();
                ids
            })
        };
        Self {
            channels,
            first: range.first,
            last: range.last,
        }
    }

    /// The same times, on `channel` alone.
    pub(crate) fn only(&self, channel: u32) -> Self {
        Self {
            channels: Some(vec![channel]),
            first: self.first,
            last: self.last,
        }
    }

    /// Every message.
    pub fn everything() -> Self {
        Self {
            channels: None,
            first: 0,
            last: u64::MAX,
        }
    }

    /// True when nothing can be wanted (no channel, or an empty time range).
    pub fn is_empty(&self) -> bool {
        self.channels.as_ref().is_some_and(Vec::is_empty)
    }

    /// The wanted channels, sorted; `None` for every channel.
    pub fn channels(&self) -> Option<&[u32]> {
        self.channels.as_deref()
    }

    /// The first log time wanted.
    pub fn first(&self) -> u64 {
        self.first
    }

    /// The last log time wanted (inclusive).
    pub fn last(&self) -> u64 {
        self.last
    }

    /// True when messages on `channel` are wanted.
    #[inline]
    pub fn wants_channel(&self, channel: u32) -> bool {
        self.channels
            .as_ref()
            .is_none_or(|c| c.binary_search(&channel).is_ok())
    }

    /// True when messages at `time` are wanted.
    #[inline]
    pub fn wants_time(&self, time: u64) -> bool {
        self.first <= time && time <= self.last
    }

    /// True when a message on `channel` at `time` is wanted.
    #[inline]
    pub fn wants(&self, channel: u32, time: u64) -> bool {
        self.wants_time(time) && self.wants_channel(channel)
    }

    /// From its index entry alone: could the chunk hold a wanted message?
    pub fn may_need(&self, chunk: &ChunkMeta) -> bool {
        let overlaps = chunk.start_ns <= chunk.end_ns
            && chunk.end_ns >= self.first
            && chunk.start_ns <= self.last;
        let channel = match (&chunk.channels, &self.channels) {
            (Some(present), Some(_)) => present.iter().any(|&c| self.wants_channel(c)),
            (_, Some(wanted)) => !wanted.is_empty(),
            (_, None) => true,
        };
        overlaps && channel
    }

    /// From its index entry alone: is every message of the chunk wanted?
    pub fn wants_whole(&self, chunk: &ChunkMeta) -> bool {
        let channels = match (&chunk.channels, &self.channels) {
            (_, None) => true,
            (Some(present), Some(_)) => present.iter().all(|&c| self.wants_channel(c)),
            (None, Some(_)) => false,
        };
        channels && self.first <= chunk.start_ns && chunk.end_ns <= self.last
    }
}

/// A message a chunk's own index lists: where its record is in the decoded chunk, and the
/// channel and time the index gives it. The message found there decides whether it is wanted;
/// an entry that points at no message makes the engine walk the chunk instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Offset of the record in the decoded chunk.
    pub offset: u64,
    /// Channel id.
    pub channel: u32,
    /// Log time.
    pub time: u64,
}

/// What a chunk's index says about a query's messages in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hits {
    /// The wanted messages, sorted by offset.
    pub wanted: Vec<Hit>,
    /// The offset of the chunk's last message, when the index shows every message of the chunk
    /// (then a prefix ending there is the whole chunk).
    pub last_message: Option<u64>,
}

/// A chunk's records as a container read and decoded them.
#[derive(Debug, Clone)]
pub struct Decoded {
    /// The records: a slice of the input when the chunk is stored uncompressed, a decode buffer
    /// otherwise.
    pub content: Bytes,
    /// True when `content` is the whole chunk (not only a prefix).
    pub whole: bool,
    /// Where `content` starts in the file, when it is stored there as it is (uncompressed).
    pub file_offset: Option<u64>,
}

/// A container format as the engine sees it: chunks described by an index, each holding
/// message records.
///
/// The engine plans which chunks a query needs from [`Container::chunks`], asks for each
/// chunk's index entries ([`Container::index`]) and reads only the part of the chunk that holds
/// the wanted messages ([`Container::read`] with a prefix); it finds the record every index
/// entry points at ([`Container::message_at`]) and walks the chunk instead
/// ([`Container::walk`]) when the index is missing or points elsewhere than at a message. Methods are called from worker
/// threads, several at once.
pub trait Container: Send + Sync + 'static {
    /// A message found in a chunk.
    type Entry: Entry;
    /// A read error.
    type Error: Send + 'static;

    /// The chunks, in file order.
    fn chunks(&self) -> &[ChunkMeta];

    /// What chunk `chunk`'s own index says about the wanted messages, or `None` when it has no
    /// usable index (the engine then walks the chunk).
    fn index(&self, chunk: usize, want: &Want) -> Option<Hits>;

    /// Reads and decodes chunk `chunk`: all of it, or with `prefix_to` (an offset in the decoded
    /// chunk, from its index) only its records up to the end of the record there. `buffer` is
    /// an allocation to decode into (a recycled one, whose length the decoder may overwrite). A
    /// container with chunk checksums checks them when it decoded the whole chunk.
    fn read(
        &self,
        chunk: usize,
        prefix_to: Option<u64>,
        buffer: Vec<u8>,
    ) -> Result<Decoded, Self::Error>;

    /// The message whose record is at `offset` in a decoded chunk, if one is there.
    fn message_at(&self, content: &[u8], offset: u64) -> Option<Self::Entry>;

    /// Called once when a query starts, with the chunks it will load in the order it will load
    /// them: a container whose input is slow to reach (a remote object) tells the input which
    /// byte ranges those are ([`Input::prefetch`](crate::Input::prefetch)), so that they are
    /// fetched ahead, neighbours together. The default does nothing.
    fn prefetch(&self, chunks: &[usize], want: &Want) {
        let _ = (chunks, want);
    }

    /// Every channel id in topic order: by topic name, then id. [`Order::Topic`] reads the
    /// wanted ones one after the other, in this order. The default, none, makes
    /// [`Order::Topic`] read in log-time order.
    ///
    /// [`Order::Topic`]: crate::Order::Topic
    fn topic_order(&self) -> Vec<u32> {
        Vec::new()
    }

    /// Appends the wanted messages of decoded chunk `chunk` to `out`, in record order. Returns
    /// whether what the walk found agrees with the chunk's index (when it does not, the engine
    /// asks the index instead); an error when the records are malformed.
    fn walk(
        &self,
        chunk: usize,
        content: &[u8],
        want: &Want,
        out: &mut Vec<Self::Entry>,
    ) -> Result<bool, Self::Error>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start_ns: u64, end_ns: u64, channels: Option<Vec<u32>>) -> ChunkMeta {
        ChunkMeta {
            position: 0,
            start_ns,
            end_ns,
            channels,
            messages: None,
            compression: Compression::None,
            uncompressed_size: 0,
        }
    }

    #[test]
    fn chunks_are_needed_by_time_and_channel() {
        let want = Want::new(Some([2]), 10..=20);
        assert!(want.may_need(&chunk(0, 10, Some(vec![1, 2]))));
        assert!(!want.may_need(&chunk(0, 9, Some(vec![2]))));
        assert!(!want.may_need(&chunk(21, 30, None)));
        assert!(!want.may_need(&chunk(12, 13, Some(vec![1]))));
        assert!(want.may_need(&chunk(12, 13, None)));
        // A chunk whose end comes before its start is damaged: nothing in it is reachable by
        // time.
        assert!(!want.may_need(&chunk(15, 12, None)));
        assert!(want.wants_whole(&chunk(12, 13, Some(vec![2]))));
        assert!(!want.wants_whole(&chunk(12, 21, Some(vec![2]))));
        assert!(!want.wants_whole(&chunk(12, 13, Some(vec![1, 2]))));
        assert!(!want.wants_whole(&chunk(12, 13, None)));
        assert!(Want::everything().wants_whole(&chunk(0, u64::MAX, None)));
    }

    #[test]
    fn an_empty_selection_wants_nothing() {
        let none = Want::new(Some(Vec::<u32>::new()), ..);
        assert!(none.is_empty() && !none.may_need(&chunk(0, 1, None)));
        let empty_range = Want::new(None::<Vec<u32>>, 5..5);
        assert!(empty_range.is_empty() && !empty_range.wants(0, 5));
    }
}
