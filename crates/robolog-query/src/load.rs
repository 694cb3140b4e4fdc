//! Loading one chunk for a query (on a worker thread): read what the wanted messages need, find
//! them through the chunk's index or by walking it, and sort them for the query's order.

use robolog_framing::{Bytes, Compression};

use crate::container::{ChunkMeta, Container, Decoded, Entry, Hits, Want};
use crate::order::Order;

/// The wanted messages of one chunk (or of the messages outside chunks), sorted for the query's
/// order, and the content they are in.
#[derive(Debug)]
pub struct Batch<E> {
    /// The chunk's index in [`Container::chunks`]; `None` for messages outside chunks.
    pub(crate) chunk: Option<usize>,
    /// The chunk's file position.
    pub(crate) position: u64,
    /// The records; `None` while evicted from the cache (read again when due).
    pub(crate) content: Option<Bytes>,
    pub(crate) file_offset: Option<u64>,
    /// How much of the chunk `content` holds, when only a prefix (to read it again alike).
    pub(crate) prefix_to: Option<u64>,
    pub(crate) entries: Vec<E>,
    /// The next entry to hand out.
    pub(crate) next: usize,
}

impl<E: Entry> Batch<E> {
    /// Messages outside chunks (an unchunked file, a format without chunks): their entries'
    /// offsets are file offsets, and `content` is the file from offset 0 (or as far as the
    /// messages reach). The engine keeps the wanted ones and sorts them.
    pub fn flat(content: Bytes, entries: Vec<E>) -> Self {
        Self::flat_at(content, 0, entries)
    }

    /// Messages outside chunks whose bytes are in `content`, the span of the file that starts
    /// at `file_offset`; their entries' offsets are from the start of the span.
    pub fn flat_at(content: Bytes, file_offset: u64, entries: Vec<E>) -> Self {
        Self {
            chunk: None,
            position: 0,
            content: Some(content),
            file_offset: Some(file_offset),
            prefix_to: None,
            entries,
            next: 0,
        }
    }

    /// Messages outside chunks whose entries find their bytes in `content`, a span of the file,
    /// by positions of their own; their offsets are file offsets (they order them), and the
    /// span's place in the file is not given.
    pub fn flat_span(content: Bytes, entries: Vec<E>) -> Self {
        Self {
            file_offset: None,
            ..Self::flat(content, entries)
        }
    }

    /// A copy of a batch made by [`Batch::flat`] or [`Batch::flat_span`], for another query
    /// over the same messages.
    pub(crate) fn copy_flat(&self) -> Self {
        Self {
            file_offset: self.file_offset,
            ..Self::flat(
                self.content.clone().unwrap_or_default(),
                self.entries.clone(),
            )
        }
    }

    fn of_chunk(chunk: usize, meta: &ChunkMeta, decoded: Decoded, entries: Vec<E>) -> Self {
        Self {
            chunk: Some(chunk),
            position: meta.position,
            prefix_to: None,
            file_offset: decoded.file_offset,
            content: Some(decoded.content),
            entries,
            next: 0,
        }
    }

    /// Bytes of decoded chunk held (what the cache limit counts).
    pub(crate) fn cached_len(&self) -> usize {
        match (self.chunk, &self.content) {
            (Some(_), Some(content)) => content.len(),
            _ => 0,
        }
    }
}

/// How a chunk is decoded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    pub(crate) order: Order,
    /// Decode every chunk whole (so that its checksum can be checked), never a prefix.
    pub(crate) whole_chunks: bool,
}

/// Loads chunk `chunk` for `want`, into the recycled `buffer` and `list`.
pub(crate) fn load<C: Container>(
    container: &C,
    chunk: usize,
    want: &Want,
    rules: Rules,
    buffer: Vec<u8>,
    mut list: Vec<C::Entry>,
) -> Result<Batch<C::Entry>, C::Error> {
    let Some(meta) = container.chunks().get(chunk) else {
        return Ok(empty(chunk, Bytes::from(buffer), list));
    };
    let mut buffer = Some(buffer);
    let mut whole: Option<Decoded> = None;
    let mut walk_error = None;
    if want.wants_whole(meta) {
        // Every message of the chunk is wanted: walking its records in order is cheaper than
        // reading its index and checking every entry, and needs no sort when, as usual, the
        // chunk is in time order. The walk is trusted when it agrees with the index (a
        // container checks the counts the index announces); otherwise the index decides.
        let decoded = container.read(chunk, None, buffer.take().unwrap_or_default())?;
        match container.walk(chunk, &decoded.content, want, &mut list) {
            Ok(true) => {
                return Ok(Batch::of_chunk(
                    chunk,
                    meta,
                    decoded,
                    sorted(list, rules.order),
                ));
            }
            Ok(false) => {}
            Err(e) => walk_error = Some(e),
        }
        list.clear();
        whole = Some(decoded);
    }
    let Some(hits) = container.index(chunk, want) else {
        // No usable index: the records decide.
        if let Some(e) = walk_error {
            return Err(e);
        }
        let decoded = match whole {
            Some(decoded) => decoded,
            None => container.read(chunk, None, buffer.take().unwrap_or_default())?,
        };
        list.clear();
        container.walk(chunk, &decoded.content, want, &mut list)?;
        return Ok(Batch::of_chunk(
            chunk,
            meta,
            decoded,
            sorted(list, rules.order),
        ));
    };
    if hits.wanted.is_empty() {
        // The index proves that nothing wanted is in the chunk: it is not read at all. The
        // buffer goes back to the pool with the empty batch.
        let spare = match whole {
            Some(decoded) => decoded.content,
            None => Bytes::from(buffer.take().unwrap_or_default()),
        };
        return Ok(empty(chunk, spare, list));
    }
    // In a sound chunk every wanted message ends by the end of the last one the index lists.
    let prefix_to = match &whole {
        Some(_) => None,
        None => hits
            .wanted
            .last()
            .map(|last| last.offset)
            .filter(|&last| !rules.whole_chunks && !prefix_is_whole(meta, last, &hits)),
    };
    let mut decoded = match whole {
        Some(decoded) => decoded,
        None => container.read(chunk, prefix_to, buffer.take().unwrap_or_default())?,
    };
    let mut resolved = resolve(container, &decoded.content, &hits, want, &mut list);
    if !resolved && !decoded.whole {
        // A damaged length can make a wanted record reach past the prefix: read the whole
        // chunk, as a query without the index would.
        list.clear();
        let recycled = decoded
            .content
            .try_into_mut()
            .map(Vec::from)
            .unwrap_or_default();
        decoded = container.read(chunk, None, recycled)?;
        resolved = resolve(container, &decoded.content, &hits, want, &mut list);
    }
    if !resolved {
        // An index entry points at no message: the index is wrong, and the records decide.
        list.clear();
        container.walk(chunk, &decoded.content, want, &mut list)?;
    }
    let prefix_to = (!decoded.whole).then_some(prefix_to).flatten();
    let mut batch = Batch::of_chunk(chunk, meta, decoded, sorted(list, rules.order));
    batch.prefix_to = prefix_to;
    Ok(batch)
}

fn empty<E: Entry>(chunk: usize, spare: Bytes, list: Vec<E>) -> Batch<E> {
    let mut list = list;
    list.clear();
    Batch {
        chunk: Some(chunk),
        position: 0,
        content: Some(spare),
        file_offset: None,
        prefix_to: None,
        entries: list,
        next: 0,
    }
}

/// Whether decoding a chunk up to the end of the message at `last` costs about as much as
/// decoding all of it, which is then the better choice: one pass over the whole chunk is the
/// decoder's fastest path, and lets its checksum be checked. That is so when `last` is the
/// chunk's last message, and for zstd when it starts in the chunk's last eighth: stopping a
/// zstd frame early needs its streaming decoder, which is slower per byte than decoding the
/// frame in one call.
fn prefix_is_whole(meta: &ChunkMeta, last: u64, hits: &Hits) -> bool {
    hits.last_message == Some(last)
        || (meta.compression == Compression::Zstd
            && last >= meta.uncompressed_size - meta.uncompressed_size / 8)
}

/// Finds the message every index entry points at, keeping those the query wants (by their own
/// channel and time: the records decide, the index only says where to look); false when an
/// entry points at no message.
fn resolve<C: Container>(
    container: &C,
    content: &[u8],
    hits: &Hits,
    want: &Want,
    list: &mut Vec<C::Entry>,
) -> bool {
    list.reserve(hits.wanted.len());
    for hit in &hits.wanted {
        match container.message_at(content, hit.offset) {
            Some(e) => {
                if want.wants(e.channel(), e.time()) {
                    list.push(e);
                }
            }
            None => return false,
        }
    }
    true
}

/// Sorts a chunk's entries, found in record order, for the query's order; usually they are
/// already in it.
pub(crate) fn sorted<E: Entry>(mut entries: Vec<E>, order: Order) -> Vec<E> {
    match order {
        Order::File => {
            if !entries.is_sorted_by_key(|e| e.offset()) {
                entries.sort_unstable_by_key(|e| e.offset());
            }
        }
        Order::LogTime | Order::ReverseLogTime | Order::Topic => {
            // Found in record order, entries with equal times are in file order already.
            if !entries.is_sorted_by_key(|e| e.time()) {
                entries.sort_unstable_by_key(|e| (e.time(), e.offset()));
            }
            if order == Order::ReverseLogTime {
                entries.reverse();
            }
        }
    }
    entries
}
